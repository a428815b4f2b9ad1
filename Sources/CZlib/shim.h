// zlib (Debian's zlib1g-dev). deflateInit2 and inflateInit2 are macros Swift cannot call, so
// they are wrapped in functions here.
#ifndef CZLIB_SHIM_H
#define CZLIB_SHIM_H
#include <zlib.h>

/// deflateInit2 as a function: raw deflate when window_bits is negative.
static inline int czlib_deflate_init2(z_streamp stream, int level, int window_bits, int mem_level) {
    return deflateInit2(stream, level, Z_DEFLATED, window_bits, mem_level, Z_DEFAULT_STRATEGY);
}

/// inflateInit2 as a function: raw inflate when window_bits is negative.
static inline int czlib_inflate_init2(z_streamp stream, int window_bits) {
    return inflateInit2(stream, window_bits);
}
#endif

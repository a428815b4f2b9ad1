// nghttp2 (Debian's libnghttp2-dev, 1.52 with the backported stream reset rate limit and
// CONTINUATION limit): the HTTP/2 framing, HPACK and flow control under HTTP2Support. Its API is
// plain functions, enums and structs that Swift imports as they are, so no shim code is needed.
#ifndef CNGHTTP2_SHIM_H
#define CNGHTTP2_SHIM_H
#include <nghttp2/nghttp2.h>
#endif

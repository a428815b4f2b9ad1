// The protobuf-c runtime (Debian's libprotobuf-c-dev), for the Swift bridge.
#ifndef CPROTOBUFC_SHIM_H
#define CPROTOBUFC_SHIM_H
#include <protobuf-c/protobuf-c.h>

/// The static empty string protobuf-c uses as the default of proto3 string fields; a string
/// field pointing at it was absent on the wire (not allocated by the unpacking arena).
static inline const char *cprotobufc_empty_string(void) {
    return protobuf_c_empty_string;
}
#endif

// Hyperscan (Debian's libhyperscan-dev, 5.4): the regular-expression engine under ContentMatching,
// linear in the text for every pattern it accepts. Its API is plain functions, opaque structs and
// integer macros that Swift imports as they are, so no shim code is needed.
#ifndef CHYPERSCAN_SHIM_H
#define CHYPERSCAN_SHIM_H
#include <hs/hs.h>
#endif

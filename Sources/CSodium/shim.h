// libsodium (Debian's libsodium-dev): password hashing (argon2id) and constant-time compares.
#ifndef CSODIUM_SHIM_H
#define CSODIUM_SHIM_H
#include <sodium.h>
#endif

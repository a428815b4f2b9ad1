// glibc malloc statistics for memory tests (malloc.h is not part of Swift's Glibc module).
#ifndef CTESTSUPPORT_H
#define CTESTSUPPORT_H
#include <stddef.h>

/// Bytes the process's malloc heap has handed out and not yet had back (mallinfo2).
size_t ctest_heap_bytes_in_use(void);
/// Returns free malloc memory to the system (malloc_trim(0)), so RSS growth after it is new memory.
void ctest_malloc_trim(void);
#endif

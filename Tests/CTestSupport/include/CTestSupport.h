// glibc malloc statistics and address-space figures for memory tests (malloc.h is not part of
// Swift's Glibc module).
#ifndef CTESTSUPPORT_H
#define CTESTSUPPORT_H
#include <stddef.h>

/// Bytes the process's malloc heap has handed out and not yet had back (mallinfo2).
size_t ctest_heap_bytes_in_use(void);
/// Returns free malloc memory to the system (malloc_trim(0)), so RSS growth after it is new memory.
void ctest_malloc_trim(void);
/// The process's address space in bytes (VmSize, from /proc/self/statm); 0 if unreadable.
size_t ctest_virtual_bytes(void);
/// The stack size a thread created with default attributes gets.
size_t ctest_default_thread_stack_bytes(void);
#endif

#include "CTestSupport.h"
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

size_t ctest_heap_bytes_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

void ctest_malloc_trim(void) {
    malloc_trim(0);
}

size_t ctest_virtual_bytes(void) {
    FILE *file = fopen("/proc/self/statm", "r");
    if (file == NULL) return 0;
    unsigned long pages = 0;
    int read = fscanf(file, "%lu", &pages);
    fclose(file);
    return read == 1 ? (size_t)pages * (size_t)sysconf(_SC_PAGESIZE) : 0;
}

size_t ctest_default_thread_stack_bytes(void) {
    pthread_attr_t attr;
    size_t size = 0;
    if (pthread_attr_init(&attr) != 0) return 0;
    pthread_attr_getstacksize(&attr, &size);
    pthread_attr_destroy(&attr);
    return size;
}

#include "CTestSupport.h"
#include <malloc.h>

size_t ctest_heap_bytes_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

void ctest_malloc_trim(void) {
    malloc_trim(0);
}

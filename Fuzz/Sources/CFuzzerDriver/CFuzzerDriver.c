#include "CFuzzerDriver.h"

/* libFuzzer's entry point for programs with their own main (FuzzerInterface.h). */
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

int cfuzz_run_driver(int argc, char **argv, int (*test_one_input)(const uint8_t *data, size_t size)) {
    return LLVMFuzzerRunDriver(&argc, &argv, test_one_input);
}

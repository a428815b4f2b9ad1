#ifndef CFUZZERDRIVER_H
#define CFUZZERDRIVER_H

#include <stddef.h>
#include <stdint.h>

/// Runs libFuzzer's driver (command line, corpus, mutations) over `test_one_input`.
///
/// SwiftPM links every executable target with `--defsym main=<module>_main` (so tests can link
/// executables), which leaves libFuzzer's own `main` unused: each fuzzer has a Swift `@main` that
/// calls this instead, and it calls libFuzzer's public `LLVMFuzzerRunDriver`.
int cfuzz_run_driver(int argc, char **argv, int (*test_one_input)(const uint8_t *data, size_t size));

#endif

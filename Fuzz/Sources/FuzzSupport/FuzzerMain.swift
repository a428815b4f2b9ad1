public import CFuzzerDriver
internal import Glibc

/// Runs libFuzzer over `testOneInput` with the process's arguments and exits with its status.
///
/// Each fuzzer's `@main` calls this (see `CFuzzerDriver.h` for why libFuzzer's own `main` is not
/// used). `testOneInput` gets the input's bytes (`nil` only when empty) and returns 0.
public func runFuzzer(_ testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Never {
    exit(cfuzz_run_driver(CommandLine.argc, CommandLine.unsafeArgv, testOneInput))
}

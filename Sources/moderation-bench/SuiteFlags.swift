import CommandLineSupport

/// How every suite reads its command line: flags only, each handed to the suite, which sets what
/// it knows and refuses the rest; a mistake is printed as `SUITE: message`.
enum SuiteFlags {
    /// Reads `arguments`; `take` sets the suite's option for a flag (reading its value from the
    /// reader) and returns false for a flag the suite does not know.
    /// - Returns: false after a mistake, already printed (the suite then exits 2).
    static func read(
        _ arguments: [String], suite: String,
        _ take: (ArgumentReader.Flag, inout ArgumentReader) throws(ArgumentError) -> Bool
    ) -> Bool {
        var reader = ArgumentReader(arguments)
        do throws(ArgumentError) {
            while let token = reader.next() {
                guard case .flag(let flag) = token else {
                    throw ArgumentError("unexpected argument '\(token.argument)'")
                }
                guard try take(flag, &reader) else { throw ArgumentError("unknown flag \(flag.argument)") }
            }
            return true
        } catch {
            print("\(suite): \(error.message)")
            return false
        }
    }

    /// A measured phase's length (`--seconds`): a duration of more than 0.
    static func seconds(_ value: ArgumentValue) throws(ArgumentError) -> Double {
        let seconds = try value.duration()
        guard seconds > 0 else { throw value.error("must be more than 0") }
        return seconds
    }
}

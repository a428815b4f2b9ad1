/// A verb of rpc-probe: its help, its own flags (besides the shared ones of `ProbeOptions`) and
/// what it does.
protocol ProbeVerb {
    /// The values its flags set, at their defaults.
    associatedtype Flags
    static var name: String { get }
    static var help: String { get }
    static var flags: [ProbeFlag<Flags>] { get }
    static var defaults: Flags { get }
    /// Runs the verb; returns the exit code.
    /// - Parameter arguments: its positional arguments (a METHOD, a SERVICE, a SYMBOL).
    static func run(_ flags: Flags, arguments: [String], options: ProbeOptions) throws(ProbeError) -> Int32
}

/// The flags of a verb that has none of its own.
struct NoFlags {}

extension ProbeVerb where Flags == NoFlags {
    static var flags: [ProbeFlag<NoFlags>] { [] }
    static var defaults: NoFlags { NoFlags() }
}

/// Switches and closed lists of words.
extension ArgumentValue {
    /// A setting that is on or off, written exactly `on` or `off`, as the settings document it
    /// (a config file that says `yes` is refused rather than guessed at).
    public func onOff() throws(ArgumentError) -> Bool {
        switch text {
        case "on": return true
        case "off": return false
        default: throw error("'\(text)' is not on or off")
        }
    }

    /// A switch's inline value (`--compress=off`): on, true, 1 / off, false, 0, in any case —
    /// `true` and `false` because Go's flag package, and so grpcurl, writes switches that way
    /// (`-emit-defaults=true`).
    public func boolean() throws(ArgumentError) -> Bool {
        switch text.lowercased() {
        case "on", "true", "1": return true
        case "off", "false", "0": return false
        default: throw error("'\(text)' is not on or off (or true or false)")
        }
    }

    /// One of `choices` by its word; the error lists every word, in the order given.
    /// - Parameter ignoringCase: whether "INFO" is taken as "info" (the words are lowercase).
    public func choice<Value>(_ choices: [(word: String, value: Value)], ignoringCase: Bool = false)
        throws(ArgumentError) -> Value
    {
        let word = ignoringCase ? text.lowercased() : text
        guard let match = choices.first(where: { $0.word == word }) else {
            throw error("'\(text)' is not one of \(choices.map(\.word).joined(separator: ", "))")
        }
        return match.value
    }

    /// One case of a string enum by its raw value; the error lists every raw value.
    public func choice<Value: CaseIterable & RawRepresentable<String>>(of type: Value.Type) throws(ArgumentError)
        -> Value
    {
        try choice(Value.allCases.map { ($0.rawValue, $0) })
    }
}

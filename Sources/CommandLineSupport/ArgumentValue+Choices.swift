/// Switches and closed lists of words.
extension ArgumentValue {
    /// On or off: on, true, yes, 1 / off, false, no, 0, in any case.
    public func onOff() throws(ArgumentError) -> Bool {
        switch text.lowercased() {
        case "on", "true", "yes", "1": return true
        case "off", "false", "no", "0": return false
        default: throw error("'\(text)' is not on or off")
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

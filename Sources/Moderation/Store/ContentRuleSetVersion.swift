/// Which change a content rule set is at: the seq of the action that last changed it, in its
/// app's log.
public struct ContentRuleSetVersion: Sendable, Hashable {
    public var appID: Int64
    /// The group; empty for the app's set.
    public var guid: String
    public var version: UInt64

    public init(appID: Int64, guid: String, version: UInt64) {
        self.appID = appID
        self.guid = guid
        self.version = version
    }
}

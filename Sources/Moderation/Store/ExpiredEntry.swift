/// A ban or a mute past its expiry that the sweeper has not recorded yet: the user `uid` in the
/// group `guid` of an app.
public struct ExpiredEntry: Sendable, Equatable {
    public var appID: Int64
    public var app: String
    public var guid: String
    public var uid: String

    public init(appID: Int64, app: String, guid: String, uid: String) {
        self.appID = appID
        self.app = app
        self.guid = guid
        self.uid = uid
    }
}

/// A `Caller` whose fields passed step 1: the acting uid lower-cased and valid.
struct ValidatedCaller: Sendable {
    let app: String
    /// The acting user's uid; nil for the app.
    let actor: String?
    let idempotencyKey: String
    let requestID: String

    init(_ caller: Caller) throws(ModerationError) {
        guard !caller.app.isEmpty else { throw .invalid("app", "must not be empty") }
        try Validation.text(caller.idempotencyKey, field: "idempotency_key", max: Validation.maxHeaderValue)
        try Validation.text(caller.requestID, field: "request_id", max: Validation.maxHeaderValue)
        app = caller.app
        if let actor = caller.actor, !actor.isEmpty {
            self.actor = try Validation.identifier(actor, field: "on_behalf_of")
        } else {
            self.actor = nil
        }
        idempotencyKey = caller.idempotencyKey
        requestID = caller.requestID
    }

    /// The app itself, for work the service does on its own (the ban sweeper).
    init(app: String) {
        self.app = app
        actor = nil
        idempotencyKey = ""
        requestID = ""
    }

    /// How messages name the actor: their uid, or "the app".
    var name: String { actor ?? "the app" }

    /// The uid actions record for the actor ("@app" for the app).
    var actionUID: String { actor ?? User.appUID }

    /// Step 4 of the app's own calls: only the app, never a user (`ERR_PERMISSION_DENIED`).
    func requireApp(toDo what: String) throws(ModerationError) {
        guard let actor else { return }
        throw ModerationError(.permissionDenied, "\(actor) may not \(what): only the app may")
    }

    /// The acting user's uid, or `ERR_INVALID_ARGUMENT` when the app calls an action only a
    /// member can take (join, leave).
    func requireUser() throws(ModerationError) -> String {
        guard let actor else { throw .appIsNotAMember() }
        return actor
    }
}

/// A `NewGroup` that passed step 1 (and the owner check): identifiers lower-cased, lists free of
/// duplicates and conflicts.
struct CreateGroupPlan: Sendable {
    let group: NewGroup
    let guid: String
    let owner: String
    let members: [MemberGrant]
    let bans: [String]

    init(_ request: NewGroup, actor: String?) throws(ModerationError) {
        guid = try Validation.identifier(request.guid, field: "guid")
        try Validation.text(request.name, field: "name", max: Validation.maxName, min: 1)
        try Validation.text(request.icon, field: "icon", max: Validation.maxURL)
        try Validation.text(request.description, field: "description", max: Validation.maxDescription)
        try Validation.metadata(request.metadata)
        try Validation.tags(request.tags)
        if request.type == .password {
            guard !request.password.isEmpty else { throw .invalid("password", "is required for a password group") }
            try Validation.text(request.password, field: "password", max: Validation.maxName * 10)
        } else if !request.password.isEmpty {
            throw .invalid("password", "only password groups have a password")
        }
        members = try Validation.grants(request.members, allowEmpty: true)
        bans = try Validation.identifiers(request.bannedUIDs, field: "banned_uids", allowEmpty: true)
        if let both = bans.first(where: Set(members.map(\.uid)).contains) {
            throw .invalid("banned_uids", "\(both) is also listed in members")
        }
        let named = try request.owner.flatMap { (owner: String) throws(ModerationError) -> String? in
            owner.isEmpty ? nil : try Validation.identifier(owner, field: "owner")
        }
        if let actor {
            if let named, named != actor {
                throw ModerationError(.permissionDenied, "\(actor) may not create a group owned by \(named)")
            }
            owner = actor
        } else {
            guard let named else { throw .invalid("owner", "is required when the app creates a group") }
            owner = named
        }
        if bans.contains(owner) { throw .invalid("banned_uids", "the owner \(owner) cannot be banned") }
        group = request
    }
}

import Moderation
import ModerationMessages

/// Domain requests from protobuf messages: enum values checked, update masks resolved.
enum ProtoToDomain {
    static func scope(_ scope: ModerationMessages.Scope, field: String) throws(ModerationError) -> Moderation.Scope? {
        switch scope {
        case .unspecified: return nil
        case .admin: return .admin
        case .moderator: return .moderator
        case .participant: return .participant
        case .unrecognized(let value): throw ModerationError(.invalidArgument, "\(field): \(value) is not a Scope")
        }
    }

    static func requiredScope(_ scope: ModerationMessages.Scope, field: String) throws(ModerationError)
        -> Moderation.Scope
    {
        guard let value = try self.scope(scope, field: field) else {
            throw ModerationError(
                .invalidArgument, "\(field): a scope is required (SCOPE_ADMIN, SCOPE_MODERATOR or SCOPE_PARTICIPANT)")
        }
        return value
    }

    static func groupType(_ type: ModerationMessages.GroupType, field: String) throws(ModerationError) -> Moderation
        .GroupType?
    {
        switch type {
        case .unspecified: return nil
        case .public: return .public
        case .password: return .password
        case .private: return .private
        case .unrecognized(let value): throw ModerationError(.invalidArgument, "\(field): \(value) is not a GroupType")
        }
    }

    static func actionKinds(_ types: [ActionType], field: String) throws(ModerationError) -> Set<ActionKind> {
        var kinds: Set<ActionKind> = []
        for type in types {
            if let kind = try actionKind(type, field: field) { kinds.insert(kind) }
        }
        return kinds
    }

    /// A webhook's kinds, in the request's order: each must be a kind of action (unlike a
    /// filter's, where the zero value is ignored, an unset one is refused: it would read as
    /// "every kind" once the list is stored).
    static func webhookKinds(_ types: [ActionType], field: String) throws(ModerationError) -> [ActionKind] {
        var kinds: [ActionKind] = []
        kinds.reserveCapacity(types.count)
        for (index, type) in types.enumerated() {
            guard let kind = try actionKind(type, field: "\(field)[\(index)]") else {
                throw ModerationError(.invalidArgument, "\(field)[\(index)]: a kind of action is required, not 0")
            }
            kinds.append(kind)
        }
        return kinds
    }

    /// The domain's kind of an action type; nil for the zero value.
    static func actionKind(_ type: ActionType, field: String) throws(ModerationError) -> ActionKind? {
        if type == .unspecified { return nil }
        if let kind = kindsByType[type] { return kind }
        let number = if case .unrecognized(let value) = type { String(value) } else { "\(type)" }
        throw ModerationError(.invalidArgument, "\(field): \(number) is not an ActionType")
    }

    /// The inverse of `DomainToProto.actionType`, which names each kind's type once.
    private static let kindsByType = Dictionary(
        uniqueKeysWithValues: ActionKind.allCases.map { (DomainToProto.actionType($0), $0) })

    static func limit(_ limit: UInt32) -> Int { Int(limit) }

    /// A rule to add; an unset kind or action stays nil (the service refuses that rule alone), an
    /// unknown one refuses the call.
    static func newContentRule(_ rule: ModerationMessages.NewContentRule, field: String) throws(ModerationError)
        -> Moderation.NewContentRule
    {
        let kind: Moderation.ContentRuleKind?
        switch rule.kind {
        case .unspecified: kind = nil
        case .word: kind = .word
        case .regex: kind = .regex
        case .domain: kind = .domain
        case .unrecognized(let value):
            throw ModerationError(.invalidArgument, "\(field).kind: \(value) is not a ContentRuleKind")
        }
        let action: Moderation.ContentAction?
        switch rule.action {
        case .unspecified: action = nil
        case .block: action = .block
        case .flag: action = .flag
        case .unrecognized(let value):
            throw ModerationError(.invalidArgument, "\(field).action: \(value) is not a ContentAction")
        }
        return Moderation.NewContentRule(
            kind: kind, pattern: rule.pattern, action: action, description: rule.description)
    }

    static func reportCategory(_ category: ReportCategory) throws(ModerationError) -> Moderation.Report.Category {
        switch category {
        case .spam: return .spam
        case .harassment: return .harassment
        case .hate: return .hate
        case .violence: return .violence
        case .other: return .other
        case .unspecified: throw ModerationError(.invalidArgument, "category: is required")
        case .unrecognized(let value):
            throw ModerationError(.invalidArgument, "category: \(value) is not a ReportCategory")
        }
    }

    /// True for open, false for resolved.
    static func reportStatus(_ status: ReportStatus) throws(ModerationError) -> Bool {
        switch status {
        case .open: return true
        case .resolved: return false
        case .unspecified: throw ModerationError(.invalidArgument, "status: is required (open or resolved)")
        case .unrecognized(let value): throw ModerationError(.invalidArgument, "status: \(value) is not a ReportStatus")
        }
    }

    static func reportResolution(_ resolution: ReportResolution) throws(ModerationError) -> Moderation.Report.Resolution
    {
        switch resolution {
        case .dismissed: return .dismissed
        case .actioned: return .actioned
        case .unspecified: throw ModerationError(.invalidArgument, "resolution: is required (dismissed or actioned)")
        case .unrecognized(let value):
            throw ModerationError(.invalidArgument, "resolution: \(value) is not a ReportResolution")
        }
    }

    /// The users of an AddMembers or InviteMembers request with their scopes (unspecified:
    /// participant).
    static func grants(_ members: [MemberToAdd]) throws(ModerationError) -> [MemberGrant] {
        var grants: [MemberGrant] = []
        for (index, member) in members.enumerated() {
            grants.append(
                MemberGrant(
                    uid: member.uid, scope: try scope(member.scope, field: "members[\(index)].scope") ?? .participant))
        }
        return grants
    }

    static func newGroup(_ request: CreateGroupRequest) throws(ModerationError) -> NewGroup {
        guard let type = try groupType(request.type, field: "type") else {
            throw ModerationError(
                .invalidArgument,
                "type: a group type is required (GROUP_TYPE_PUBLIC, GROUP_TYPE_PASSWORD or GROUP_TYPE_PRIVATE)")
        }
        var members: [MemberGrant] = []
        for (index, member) in request.members.enumerated() {
            members.append(
                MemberGrant(
                    uid: member.uid, scope: try scope(member.scope, field: "members[\(index)].scope") ?? .participant))
        }
        return NewGroup(
            guid: request.guid, name: request.name, icon: request.icon, description: request.description, type: type,
            password: request.password, metadata: request.metadata, tags: request.tags,
            owner: request.owner.isEmpty ? nil : request.owner, members: members, bannedUIDs: request.bannedUids)
    }

    static func userUpdate(_ request: UpdateUserRequest) throws(ModerationError) -> UserUpdate {
        let mask = try UpdateMask(request.updateMask, allowed: ["name", "avatar", "metadata"])
        return UserUpdate(
            uid: request.uid,
            name: mask.pick("name", request.name, isSet: !request.name.isEmpty),
            avatar: mask.pick("avatar", request.avatar, isSet: !request.avatar.isEmpty),
            metadata: mask.pick("metadata", request.metadata, isSet: !request.metadata.isEmpty))
    }

    static func groupUpdate(_ request: UpdateGroupRequest) throws(ModerationError) -> GroupUpdate {
        let mask = try UpdateMask(
            request.updateMask,
            allowed: ["name", "icon", "description", "type", "password", "metadata", "tags", "join_requests"])
        var type: Moderation.GroupType?
        if mask.includes("type", isSet: request.type != .unspecified) {
            guard let value = try groupType(request.type, field: "type") else {
                throw ModerationError(.invalidArgument, "type: update_mask names type but no type is given")
            }
            type = value
        }
        return GroupUpdate(
            guid: request.guid,
            name: mask.pick("name", request.name, isSet: !request.name.isEmpty),
            icon: mask.pick("icon", request.icon, isSet: !request.icon.isEmpty),
            description: mask.pick("description", request.description, isSet: !request.description.isEmpty),
            type: type,
            password: mask.pick("password", request.password, isSet: !request.password.isEmpty),
            metadata: mask.pick("metadata", request.metadata, isSet: !request.metadata.isEmpty),
            tags: mask.pick("tags", request.tags, isSet: !request.tags.isEmpty),
            ifVersion: request.ifVersion == 0 ? nil : request.ifVersion,
            joinRequests: mask.pick("join_requests", request.joinRequests, isSet: request.joinRequests))
    }
}

extension ProtoToDomain {
    static let webhookFields: Set<String> = ["url", "kinds", "guids", "description", "enabled"]

    static func webhookUpdate(_ request: UpdateWebhookRequest) throws(ModerationError) -> WebhookUpdate {
        let mask = try UpdateMask(request.updateMask, allowed: webhookFields)
        var kinds: [ActionKind]?
        if mask.includes("kinds", isSet: !request.kinds.isEmpty) {
            kinds = try webhookKinds(request.kinds, field: "kinds")
        }
        return WebhookUpdate(
            url: mask.pick("url", request.url, isSet: !request.url.isEmpty),
            kinds: kinds,
            guids: mask.pick("guids", request.guids, isSet: !request.guids.isEmpty),
            description: mask.pick("description", request.description, isSet: !request.description.isEmpty),
            enabled: mask.pick("enabled", request.enabled, isSet: request.enabled))
    }

    /// Whether an UpdateWebhook changes the URL (which the service checks by resolving its
    /// host). A mask with an unknown name is refused before that check, wherever it runs.
    static func webhookUpdateChangesURL(_ request: UpdateWebhookRequest) -> Bool {
        request.updateMask.isEmpty ? !request.url.isEmpty : request.updateMask.contains("url")
    }
}

/// An `update_mask`: the fields a partial update changes. Empty means "every field given with a
/// non-empty value"; naming a field changes it even to empty.
struct UpdateMask {
    private let names: Set<String>

    init(_ names: [String], allowed: Set<String>) throws(ModerationError) {
        for name in names where !allowed.contains(name) {
            throw ModerationError(
                .invalidArgument, "update_mask: '\(name)' is not one of \(allowed.sorted().joined(separator: ", "))")
        }
        self.names = Set(names)
    }

    func includes(_ field: String, isSet: Bool) -> Bool { names.isEmpty ? isSet : names.contains(field) }

    func pick<T>(_ field: String, _ value: T, isSet: Bool) -> T? { includes(field, isSet: isSet) ? value : nil }
}

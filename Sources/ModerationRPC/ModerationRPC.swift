public import Moderation
public import ModerationEvents
import ModerationMessages
import ProtoBridge
public import RPCCore

/// The `moderation.v1.Moderation` service on the RPC runtime: protobuf requests mapped to the
/// domain's `ModerationService`, domain results and errors mapped back, and `Subscribe` wired to
/// the `EventHub`.
///
/// Reads that may scan run on worker threads; short ones — a few index lookups, CheckPost above
/// all — on the event loop, started together once the loop has read its turn's input when the
/// store's reads share a check (`ModerationStore.readsShareChecks`: PostgreSQL's read cache). Mutations start on the event loop (the service only validates and
/// queues them for the group-commit writer) except those that hash or check a group password,
/// which are CPU-heavy, and those that check a webhook URL, which resolves its host: they run on
/// a worker.
public enum ModerationRPC {
    /// Adds every method of the service to `table`. `webhookPinger` sends TestWebhook's pings:
    /// the server's webhook delivery.
    public static func register(
        in table: inout MethodTable, service: ModerationService, hub: EventHub, webhookPinger: any WebhookPinger
    ) {
        registerUsers(in: &table, service)
        registerGroups(in: &table, service)
        registerMembership(in: &table, service)
        registerModeration(in: &table, service)
        registerMutes(in: &table, service)
        registerInvites(in: &table, service)
        registerJoinRequests(in: &table, service)
        registerReports(in: &table, service)
        registerFreezes(in: &table, service)
        registerPosting(in: &table, service)
        registerAppBans(in: &table, service)
        registerContentRules(in: &table, service)
        registerWebhooks(in: &table, service, webhookPinger)
        registerActionLog(in: &table, service, hub)
    }

    /// One action as webhook bodies carry it: the proto3 JSON of its `moderation.v1.Action`
    /// (camelCase names, enums by name, 64-bit integers as strings), UTF-8, from the generated
    /// encoder.
    public static func actionJSON(_ action: ActionRecord) -> [UInt8] {
        // Room for an action with its users and group up front: growing from empty would move
        // the bytes six times (about a tenth of the encoding's time).
        var json: [UInt8] = []
        json.reserveCapacity(512)
        DomainToProto.action(action).writeJSON(into: &json)
        return json
    }

    /// The wire encoding of one event, as the hub sends it to every subscriber.
    public static func encodeEvent(_ action: ActionRecord) -> [UInt8] {
        SubscribeResponse(action: DomainToProto.action(action)).serializedBytes()
    }

    private static func registerUsers(in table: inout MethodTable, _ service: ModerationService) {
        table.addMutation(ModerationMethods.createUser, respond: { CreateUserResponse(user: DomainToProto.user($0)) }) {
            request, caller, replay, done in
            service.createUser(
                caller,
                NewUser(uid: request.uid, name: request.name, avatar: request.avatar, metadata: request.metadata),
                replay: replay, completion: done)
        }
        table.addRead(ModerationMethods.getUser, afterTurnInput: service.readsShareChecks, offloadWhen: { _ in false })
        {
            request, caller throws(ModerationError) in
            GetUserResponse(user: DomainToProto.user(try service.getUser(caller, uid: request.uid)))
        }
        table.addMutation(ModerationMethods.updateUser, respond: { UpdateUserResponse(user: DomainToProto.user($0)) }) {
            request, caller, replay, done throws(ModerationError) in
            service.updateUser(caller, try ProtoToDomain.userUpdate(request), replay: replay, completion: done)
        }
        table.addMutation(ModerationMethods.deleteUser, respond: DomainToProto.deleteUser) {
            request, caller, replay, done in
            service.deleteUser(caller, uid: request.uid, replay: replay, completion: done)
        }
    }

    private static func registerGroups(in table: inout MethodTable, _ service: ModerationService) {
        table.addMutation(
            ModerationMethods.createGroup, executor: .workerPool,
            // Only a password group's hash is slow; any other group starts on the loop.
            offloadWhen: { $0.type == .password || !$0.password.isEmpty },
            respond: {
                CreateGroupResponse(group: DomainToProto.group($0.group), results: DomainToProto.results($0.results))
            }
        ) { request, caller, replay, done throws(ModerationError) in
            service.createGroup(caller, try ProtoToDomain.newGroup(request), replay: replay, completion: done)
        }
        table.addRead(ModerationMethods.getGroup, afterTurnInput: service.readsShareChecks, offloadWhen: { _ in false })
        {
            request, caller throws(ModerationError) in
            GetGroupResponse(group: DomainToProto.group(try service.getGroup(caller, guid: request.guid)))
        }
        table.addMutation(
            ModerationMethods.updateGroup, executor: .workerPool,
            offloadWhen: { !$0.password.isEmpty },
            respond: { UpdateGroupResponse(group: DomainToProto.group($0)) }
        ) {
            request, caller, replay, done throws(ModerationError) in
            service.updateGroup(caller, try ProtoToDomain.groupUpdate(request), replay: replay, completion: done)
        }
        table.addMutation(
            ModerationMethods.deleteGroup, respond: DomainToProto.actionResponse
        ) { request, caller, replay, done in
            service.deleteGroup(caller, guid: request.guid, replay: replay, completion: done)
        }
        table.addRead(
            ModerationMethods.listGroups, afterTurnInput: service.readsShareChecks,
            offloadWhen: { !$0.search.isEmpty || !$0.types.isEmpty }
        ) {
            request, caller throws(ModerationError) in
            var types: Set<Moderation.GroupType> = []
            for type in request.types {
                if let value = try ProtoToDomain.groupType(type, field: "types") { types.insert(value) }
            }
            let page = try service.listGroups(
                caller,
                options: ListGroupsOptions(
                    limit: ProtoToDomain.limit(request.limit), cursor: request.cursor, search: request.search,
                    joinedOnly: request.joinedOnly, types: types, tags: request.tags))
            return ListGroupsResponse(groups: page.items.map(DomainToProto.group), nextCursor: page.nextCursor)
        }
    }

    private static func registerMembership(in table: inout MethodTable, _ service: ModerationService) {
        table.addMutation(
            ModerationMethods.joinGroup, executor: .workerPool,
            offloadWhen: { service.joinMayBlock(password: $0.password) },
            respond: DomainToProto.groupActionResponse
        ) { request, caller, replay, done in
            service.joinGroup(caller, guid: request.guid, password: request.password, replay: replay, completion: done)
        }
        table.addMutation(
            ModerationMethods.leaveGroup, respond: DomainToProto.actionResponse
        ) { request, caller, replay, done in
            service.leaveGroup(caller, guid: request.guid, replay: replay, completion: done)
        }
        table.addRead(
            ModerationMethods.listMembers, afterTurnInput: service.readsShareChecks, offloadWhen: { !$0.search.isEmpty }
        ) {
            request, caller throws(ModerationError) in
            var scopes: Set<Moderation.Scope> = []
            for scope in request.scopes {
                if let value = try ProtoToDomain.scope(scope, field: "scopes") { scopes.insert(value) }
            }
            let page = try service.listMembers(
                caller, guid: request.guid,
                options: ListMembersOptions(
                    limit: ProtoToDomain.limit(request.limit), cursor: request.cursor, scopes: scopes,
                    search: request.search, mutedOnly: request.mutedOnly))
            return ListMembersResponse(members: page.items.map(DomainToProto.member), nextCursor: page.nextCursor)
        }
        table.addMutation(
            ModerationMethods.addMembers,
            respond: {
                AddMembersResponse(results: DomainToProto.results($0.results), group: DomainToProto.group($0.group))
            }
        ) { request, caller, replay, done throws(ModerationError) in
            service.addMembers(
                caller, guid: request.guid, members: try ProtoToDomain.grants(request.members), replay: replay,
                completion: done)
        }
        table.addRead(
            ModerationMethods.getMemberState, afterTurnInput: service.readsShareChecks, offloadWhen: { _ in false }
        ) {
            request, caller throws(ModerationError) in
            DomainToProto.memberState(
                try service.getMemberState(caller, guid: request.guid, uid: request.uid.isEmpty ? nil : request.uid))
        }
    }

    private static func registerModeration(in table: inout MethodTable, _ service: ModerationService) {
        table.addMutation(
            ModerationMethods.kickMember, respond: DomainToProto.actionResponse
        ) { request, caller, replay, done in
            service.kickMember(caller, guid: request.guid, uid: request.uid, replay: replay, completion: done)
        }
        table.addMutation(
            ModerationMethods.banMember,
            respond: {
                BanMemberResponse(
                    changed: $0.changed, action: $0.action.map(DomainToProto.action), ban: DomainToProto.ban($0.ban))
            }
        ) { request, caller, replay, done in
            service.banMember(
                caller, guid: request.guid, uid: request.uid, reason: request.reason, durationMs: request.durationMs,
                ifNotBanned: request.ifNotBanned, replay: replay, completion: done)
        }
        table.addMutation(
            ModerationMethods.unbanMember, respond: DomainToProto.liftResponse
        ) { request, caller, replay, done in
            service.unbanMember(
                caller, guid: request.guid, uid: request.uid, onlyIfBanned: request.onlyIfBanned, replay: replay,
                completion: done)
        }
        table.addRead(
            ModerationMethods.listBannedMembers, afterTurnInput: service.readsShareChecks,
            offloadWhen: { !$0.search.isEmpty }
        ) {
            request, caller throws(ModerationError) in
            let page = try service.listBannedMembers(
                caller, guid: request.guid,
                options: ListBannedOptions(
                    limit: ProtoToDomain.limit(request.limit), cursor: request.cursor, search: request.search))
            return ListBannedMembersResponse(
                bannedMembers: page.items.map(DomainToProto.ban), nextCursor: page.nextCursor)
        }
        table.addMutation(
            ModerationMethods.changeMemberScope,
            respond: {
                ChangeMemberScopeResponse(
                    action: DomainToProto.action($0.action), member: DomainToProto.member($0.member))
            }
        ) { request, caller, replay, done throws(ModerationError) in
            let scope = try ProtoToDomain.requiredScope(request.scope, field: "scope")
            service.changeMemberScope(
                caller, guid: request.guid, uid: request.uid, scope: scope, replay: replay, completion: done)
        }
        table.addMutation(
            ModerationMethods.transferOwnership, respond: DomainToProto.groupActionResponse
        ) { request, caller, replay, done in
            service.transferOwnership(caller, guid: request.guid, uid: request.uid, replay: replay, completion: done)
        }
        table.addMutation(ModerationMethods.bulkKickMembers, respond: DomainToProto.resultsResponse) {
            request, caller, replay, done in
            service.bulkKickMembers(caller, guid: request.guid, uids: request.uids, replay: replay, completion: done)
        }
        table.addMutation(ModerationMethods.bulkBanMembers, respond: DomainToProto.resultsResponse) {
            request, caller, replay, done in
            service.bulkBanMembers(
                caller, guid: request.guid, uids: request.uids, reason: request.reason, durationMs: request.durationMs,
                ifNotBanned: request.ifNotBanned, replay: replay, completion: done)
        }
        table.addMutation(ModerationMethods.bulkUnbanMembers, respond: DomainToProto.resultsResponse) {
            request, caller, replay, done in
            service.bulkUnbanMembers(
                caller, guid: request.guid, uids: request.uids, onlyIfBanned: request.onlyIfBanned,
                replay: replay, completion: done)
        }
    }

    private static func registerMutes(in table: inout MethodTable, _ service: ModerationService) {
        table.addMutation(
            ModerationMethods.muteMember,
            respond: {
                MuteMemberResponse(
                    changed: $0.changed, action: $0.action.map(DomainToProto.action),
                    member: DomainToProto.member($0.member))
            }
        ) { request, caller, replay, done in
            service.muteMember(
                caller, guid: request.guid, uid: request.uid, reason: request.reason, durationMs: request.durationMs,
                ifNotMuted: request.ifNotMuted, replay: replay, completion: done)
        }
        table.addMutation(
            ModerationMethods.unmuteMember, respond: DomainToProto.liftResponse
        ) { request, caller, replay, done in
            service.unmuteMember(
                caller, guid: request.guid, uid: request.uid, onlyIfMuted: request.onlyIfMuted, replay: replay,
                completion: done)
        }
        table.addMutation(
            ModerationMethods.bulkMuteMembers, respond: DomainToProto.resultsResponse
        ) { request, caller, replay, done in
            service.bulkMuteMembers(
                caller, guid: request.guid, uids: request.uids, reason: request.reason, durationMs: request.durationMs,
                ifNotMuted: request.ifNotMuted, replay: replay, completion: done)
        }
        table.addMutation(
            ModerationMethods.bulkUnmuteMembers, respond: DomainToProto.resultsResponse
        ) { request, caller, replay, done in
            service.bulkUnmuteMembers(
                caller, guid: request.guid, uids: request.uids, onlyIfMuted: request.onlyIfMuted, replay: replay,
                completion: done)
        }
    }

    private static func registerInvites(in table: inout MethodTable, _ service: ModerationService) {
        table.addMutation(
            ModerationMethods.inviteMembers, respond: DomainToProto.resultsResponse
        ) { request, caller, replay, done throws(ModerationError) in
            service.inviteMembers(
                caller, guid: request.guid, members: try ProtoToDomain.grants(request.members),
                expiresInMs: request.expiresInMs, replay: replay, completion: done)
        }
        table.addMutation(
            ModerationMethods.acceptInvite, respond: DomainToProto.groupActionResponse
        ) { request, caller, replay, done in
            service.acceptInvite(caller, guid: request.guid, replay: replay, completion: done)
        }
        table.addMutation(
            ModerationMethods.declineInvite, respond: DomainToProto.actionResponse
        ) { request, caller, replay, done in
            service.declineInvite(caller, guid: request.guid, replay: replay, completion: done)
        }
        table.addMutation(
            ModerationMethods.revokeInvite, respond: DomainToProto.actionResponse
        ) { request, caller, replay, done in
            service.revokeInvite(caller, guid: request.guid, uid: request.uid, replay: replay, completion: done)
        }
        table.addRead(
            ModerationMethods.listInvites, afterTurnInput: service.readsShareChecks, offloadWhen: { _ in false }
        ) {
            request, caller throws(ModerationError) in
            let page = try service.listInvites(
                caller, guid: request.guid, limit: ProtoToDomain.limit(request.limit), cursor: request.cursor)
            let guid = request.guid.lowercased()
            return ListInvitesResponse(
                invites: page.items.map { DomainToProto.invite($0, guid: guid) }, nextCursor: page.nextCursor)
        }
        table.addRead(
            ModerationMethods.listMyInvites, afterTurnInput: service.readsShareChecks, offloadWhen: { _ in false }
        ) {
            request, caller throws(ModerationError) in
            let page = try service.listMyInvites(
                caller, limit: ProtoToDomain.limit(request.limit), cursor: request.cursor)
            return ListMyInvitesResponse(invites: page.items.map(DomainToProto.myInvite), nextCursor: page.nextCursor)
        }
    }

    private static func registerJoinRequests(in table: inout MethodTable, _ service: ModerationService) {
        table.addMutation(
            ModerationMethods.requestToJoin, respond: DomainToProto.actionResponse
        ) { request, caller, replay, done in
            service.requestToJoin(
                caller, guid: request.guid, message: request.message, replay: replay, completion: done)
        }
        table.addMutation(
            ModerationMethods.approveJoinRequest, respond: DomainToProto.groupActionResponse
        ) { request, caller, replay, done in
            service.approveJoinRequest(caller, guid: request.guid, uid: request.uid, replay: replay, completion: done)
        }
        table.addMutation(
            ModerationMethods.rejectJoinRequest,
            respond: { RejectJoinRequestResponse(action: DomainToProto.action($0.action)) }
        ) { request, caller, replay, done in
            service.rejectJoinRequest(
                caller, guid: request.guid, uid: request.uid, reason: request.reason, replay: replay, completion: done)
        }
        table.addMutation(
            ModerationMethods.cancelJoinRequest, respond: DomainToProto.actionResponse
        ) { request, caller, replay, done in
            service.cancelJoinRequest(caller, guid: request.guid, replay: replay, completion: done)
        }
        table.addRead(
            ModerationMethods.listJoinRequests, afterTurnInput: service.readsShareChecks, offloadWhen: { _ in false }
        ) {
            request, caller throws(ModerationError) in
            let page = try service.listJoinRequests(
                caller, guid: request.guid, limit: ProtoToDomain.limit(request.limit), cursor: request.cursor)
            return ListJoinRequestsResponse(
                joinRequests: page.items.map(DomainToProto.joinRequest), nextCursor: page.nextCursor)
        }
    }

    private static func registerReports(in table: inout MethodTable, _ service: ModerationService) {
        table.addMutation(
            ModerationMethods.reportMember, respond: DomainToProto.reportResponse
        ) { request, caller, replay, done throws(ModerationError) in
            service.reportMember(
                caller, guid: request.guid, uid: request.uid,
                category: try ProtoToDomain.reportCategory(request.category),
                text: request.text, replay: replay, completion: done)
        }
        table.addMutation(
            ModerationMethods.resolveReport, respond: DomainToProto.reportResponse
        ) { request, caller, replay, done throws(ModerationError) in
            service.resolveReport(
                caller, guid: request.guid, reportID: request.reportID,
                resolution: try ProtoToDomain.reportResolution(request.resolution), note: request.note, replay: replay,
                completion: done)
        }
        table.addRead(
            ModerationMethods.listReports, afterTurnInput: service.readsShareChecks, offloadWhen: { _ in false }
        ) {
            request, caller throws(ModerationError) in
            let result = try service.listReports(
                caller, guid: request.guid, open: try ProtoToDomain.reportStatus(request.status),
                limit: ProtoToDomain.limit(request.limit), cursor: request.cursor)
            let guid = request.guid.lowercased()
            return ListReportsResponse(
                reports: result.page.items.map { DomainToProto.report($0, guid: guid) },
                nextCursor: result.page.nextCursor, counts: result.counts.mapValues { UInt32(clamping: $0) })
        }
    }

    private static func registerFreezes(in table: inout MethodTable, _ service: ModerationService) {
        table.addMutation(
            ModerationMethods.freezeGroup, respond: DomainToProto.groupActionResponse
        ) { request, caller, replay, done in
            service.freezeGroup(caller, guid: request.guid, reason: request.reason, replay: replay, completion: done)
        }
        table.addMutation(
            ModerationMethods.unfreezeGroup, respond: DomainToProto.groupActionResponse
        ) { request, caller, replay, done in
            service.unfreezeGroup(caller, guid: request.guid, replay: replay, completion: done)
        }
    }

    /// CheckPost runs on the event loop: it is the cheapest call there is (one index lookup per
    /// pair on SQLite, one statement per call on PostgreSQL, and a scan of each text in time
    /// linear in it), and a hop to a worker and back would cost more than the call. A call whose
    /// texts add up to more than `maxTextOnLoop` bytes goes to a worker instead: scanning takes
    /// about 15 ns a byte, so 100 texts of 10 000 bytes would hold the loop's other connections
    /// for over 10 ms.
    private static func registerPosting(in table: inout MethodTable, _ service: ModerationService) {
        table.addRead(
            ModerationMethods.checkPost, afterTurnInput: service.readsShareChecks,
            offloadWhen: { request in
                var bytes = 0
                for check in request.checks { bytes += check.text.utf8.count }
                return bytes > maxTextOnLoop
            }
        ) {
            request, caller throws(ModerationError) in
            let checks = request.checks.map { Moderation.PostCheck(guid: $0.guid, uid: $0.uid, text: $0.text) }
            return CheckPostResponse(
                results: try service.checkPost(caller, checks: checks).map(DomainToProto.postCheckResult))
        }
    }

    /// The most post text, in bytes, one CheckPost scans on the event loop (about 1 ms).
    static let maxTextOnLoop = 64 * 1024

    private static func registerActionLog(in table: inout MethodTable, _ service: ModerationService, _ hub: EventHub) {
        table.addRead(ModerationMethods.listGroupActions) { request, caller throws(ModerationError) in
            let page = try service.listGroupActions(
                caller, guid: request.guid,
                options: ListActionsOptions(
                    afterSeq: request.afterSeq, limit: ProtoToDomain.limit(request.limit), cursor: request.cursor,
                    kinds: try ProtoToDomain.actionKinds(request.actions, field: "actions"), actor: request.actor,
                    target: request.target))
            return ListGroupActionsResponse(
                actions: page.actions.map(DomainToProto.action), nextCursor: page.nextCursor, lastSeq: page.lastSeq)
        }
        // Started on the hub's own threads: a replay may wait for a subscriber that does not read,
        // and must not hold a shared worker (every read) meanwhile.
        table.addServerStream(ModerationMethods.subscribe, executor: .eventLoop) { request, context, stream in
            let sink = StreamEventSink(stream: stream)
            do throws(ModerationError) {
                hub.startSubscription(try subscription(request, caller: Caller(context)), sink: sink) { refusal in
                    stream.finish(RPCError(refusal))
                }
            } catch {
                stream.finish(RPCError(error))
            }
        }
    }

    static func subscription(_ request: SubscribeRequest, caller: Caller) throws(ModerationError) -> SubscriptionRequest
    {
        let chosen = [!request.userUID.isEmpty, !request.guids.isEmpty, request.wholeApp].filter { $0 }.count
        guard chosen <= 1 else {
            throw ModerationError(.invalidArgument, "user_uid, guids and whole_app are exclusive: set at most one")
        }
        var target: SubscriptionTarget?
        if !request.userUID.isEmpty { target = .user(request.userUID) }
        if !request.guids.isEmpty { target = .groups(Set(request.guids)) }
        if request.wholeApp { target = .app }
        var afterSeq: UInt64?
        if case .afterSeq(let seq)? = request.start { afterSeq = seq }
        return SubscriptionRequest(
            caller: caller, target: target, kinds: try ProtoToDomain.actionKinds(request.actions, field: "actions"),
            afterSeq: afterSeq)
    }
}

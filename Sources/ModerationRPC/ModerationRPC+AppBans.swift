import Moderation
import ModerationMessages
import RPCCore

extension ModerationRPC {
    /// The bans from the whole app. The mutations start on the event loop, as every mutation
    /// without a password does; ListAppBans goes to a worker when it searches, as
    /// ListBannedMembers does.
    static func registerAppBans(in table: inout MethodTable, _ service: ModerationService) {
        table.addMutation(
            ModerationMethods.banUserFromApp,
            respond: {
                BanUserFromAppResponse(action: DomainToProto.action($0.action), ban: DomainToProto.appBan($0.ban))
            }
        ) { request, caller, replay, done in
            service.banUserFromApp(
                caller, uid: request.uid, reason: request.reason, durationMs: request.durationMs,
                shadow: request.shadow, replay: replay, completion: done)
        }
        table.addMutation(
            ModerationMethods.unbanUserFromApp, respond: DomainToProto.actionResponse
        ) { request, caller, replay, done in
            service.unbanUserFromApp(caller, uid: request.uid, replay: replay, completion: done)
        }
        table.addRead(
            ModerationMethods.listAppBans, afterTurnInput: service.readsShareChecks, offloadWhen: { !$0.search.isEmpty }
        ) {
            request, caller throws(ModerationError) in
            let page = try service.listAppBans(
                caller,
                options: ListBannedOptions(
                    limit: ProtoToDomain.limit(request.limit), cursor: request.cursor, search: request.search))
            return ListAppBansResponse(appBans: page.items.map(DomainToProto.appBan), nextCursor: page.nextCursor)
        }
    }
}

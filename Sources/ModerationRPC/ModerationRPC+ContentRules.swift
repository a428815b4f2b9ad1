import Moderation
import ModerationMessages
import RPCCore

extension ModerationRPC {
    /// The content rules. AddContentRules goes to a worker when it has a regex: each regex is
    /// compiled alone to check it, which takes milliseconds, too long for the loop. The other
    /// calls start on the event loop (ListContentRules reads one index range).
    static func registerContentRules(in table: inout MethodTable, _ service: ModerationService) {
        table.addMutation(
            ModerationMethods.addContentRules, executor: .workerPool,
            offloadWhen: { $0.rules.contains { $0.kind == .regex } },
            respond: {
                AddContentRulesResponse(
                    results: $0.outcomes.map(DomainToProto.contentRuleResult),
                    action: $0.action.map(DomainToProto.action))
            }
        ) { request, caller, replay, done throws(ModerationError) in
            var rules: [Moderation.NewContentRule] = []
            rules.reserveCapacity(request.rules.count)
            for (index, rule) in request.rules.enumerated() {
                rules.append(try ProtoToDomain.newContentRule(rule, field: "rules[\(index)]"))
            }
            service.addContentRules(caller, guid: request.guid, rules: rules, replay: replay, completion: done)
        }
        table.addMutation(
            ModerationMethods.deleteContentRules,
            respond: {
                DeleteContentRulesResponse(
                    results: $0.outcomes.map(DomainToProto.contentRuleResult),
                    action: $0.action.map(DomainToProto.action))
            }
        ) { request, caller, replay, done in
            service.deleteContentRules(caller, guid: request.guid, ids: request.ids, replay: replay, completion: done)
        }
        table.addRead(
            ModerationMethods.listContentRules, afterTurnInput: service.readsShareChecks, offloadWhen: { _ in false }
        ) {
            request, caller throws(ModerationError) in
            let page = try service.listContentRules(
                caller, guid: request.guid, limit: ProtoToDomain.limit(request.limit), cursor: request.cursor)
            return ListContentRulesResponse(
                rules: page.items.map(DomainToProto.contentRule), nextCursor: page.nextCursor)
        }
    }
}

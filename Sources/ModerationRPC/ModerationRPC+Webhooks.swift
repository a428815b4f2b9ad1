import Moderation
import ModerationMessages
import RPCCore

extension ModerationRPC {
    /// The webhooks. CreateWebhook, and UpdateWebhook when it changes the URL, go to a worker:
    /// the service checks a URL by resolving its host (`Configuration.webhookURLCheck`), which
    /// may wait on DNS for seconds and must not hold the loop's other connections meanwhile.
    /// The other mutations start on the event loop; ListWebhooks and TestWebhook's lookup read
    /// one app's webhooks (at most 10) there. TestWebhook answers when `pinger` has its ping's
    /// outcome, on whatever thread that is.
    static func registerWebhooks(in table: inout MethodTable, _ service: ModerationService, _ pinger: any WebhookPinger)
    {
        table.addMutation(
            ModerationMethods.createWebhook, executor: .workerPool,
            respond: { CreateWebhookResponse(webhook: DomainToProto.webhook($0.webhook), secret: $0.secret) }
        ) { request, caller, replay, done throws(ModerationError) in
            let new = NewWebhook(
                url: request.url, kinds: try ProtoToDomain.webhookKinds(request.kinds, field: "kinds"),
                guids: request.guids, description: request.description, secret: request.secret)
            service.createWebhook(caller, new, replay: replay, completion: done)
        }
        table.addMutation(
            ModerationMethods.updateWebhook, executor: .workerPool,
            offloadWhen: { ProtoToDomain.webhookUpdateChangesURL($0) },
            respond: DomainToProto.webhookResponse
        ) { request, caller, replay, done throws(ModerationError) in
            service.updateWebhook(
                caller, id: request.id, try ProtoToDomain.webhookUpdate(request), replay: replay, completion: done)
        }
        table.addMutation(
            ModerationMethods.deleteWebhook, respond: DomainToProto.webhookResponse
        ) { request, caller, replay, done in
            service.deleteWebhook(caller, id: request.id, replay: replay, completion: done)
        }
        table.addMutation(
            ModerationMethods.replayWebhook, respond: DomainToProto.webhookResponse
        ) { request, caller, replay, done in
            service.replayWebhook(caller, id: request.id, afterSeq: request.afterSeq, replay: replay, completion: done)
        }
        table.addRead(
            ModerationMethods.listWebhooks, afterTurnInput: service.readsShareChecks, offloadWhen: { _ in false }
        ) {
            _, caller throws(ModerationError) in
            ListWebhooksResponse(webhooks: try service.listWebhooks(caller).map(DomainToProto.webhook))
        }
        table.addUnary(
            ModerationMethods.testWebhook, executor: .workerPool, offloadWhen: { _ in false },
            afterTurnInput: service.readsShareChecks
        ) { request, context, responder in
            let webhook: StoredWebhook
            do throws(ModerationError) {
                webhook = try service.webhookToTest(Caller(context), id: request.id)
            } catch {
                responder.fail(RPCError(error))
                return
            }
            pinger.ping(webhook) { result in responder.succeed(DomainToProto.testWebhook(result)) }
        }
    }
}

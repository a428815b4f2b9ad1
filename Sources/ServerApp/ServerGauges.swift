import Moderation
import ModerationEvents

/// The values `/metrics` samples at scrape time rather than counts call by call.
enum ServerGauges {
    static func sample(hub: EventHub, service: ModerationService, apps: [String]) -> [ServerMetrics.Sample] {
        var samples = [ServerMetrics.Sample(
            name: "moderation_subscriptions_open", help: "Live event-stream subscriptions.", type: "gauge",
            value: Double(hub.subscriptionCount))]
        for app in apps {
            let head = (try? service.withActionLog(app: app) { (log) throws(ModerationError) -> UInt64 in try log.headSeq() }) ?? 0
            samples.append(ServerMetrics.Sample(
                name: "moderation_action_log_head_seq", help: "Seq of the newest action in each app's log.", type: "gauge",
                labels: [("app", app)], value: Double(head)))
        }
        return samples
    }
}

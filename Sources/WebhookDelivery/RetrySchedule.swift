/// When a webhook's failed batch is tried again, and when the webhook is given up on.
///
/// A value with no clock and no randomness of its own: the caller passes the time and a jitter
/// draw, so the schedule is tested as a table and every instance decides the same way.
public struct RetrySchedule: Sendable, Equatable {
    /// What to do after an attempt that did not get a 2xx.
    public enum Decision: Sendable, Equatable {
        /// Try the same batch again in this many milliseconds.
        case retry(afterMilliseconds: Int64)
        /// Stop delivering: the webhook becomes `DISABLED` with this reason in `last_error`.
        case disable(reason: String)
    }

    /// How an attempt failed.
    public enum Failure: Sendable, Equatable {
        /// An HTTP answer other than 2xx, with its `Retry-After` if any.
        case status(Int, retryAfter: RetryAfter?)
        /// No answer (connect refused, timeout, TLS, refused address), with the error's text.
        case error(String)
    }

    /// The delay after the first failure (the contract's 1 s).
    public var initialDelayMilliseconds: Int64 = 1000
    /// The longest back-off (the contract's 10 min).
    public var maximumDelayMilliseconds: Int64 = 600_000
    /// Each back-off is moved by up to this fraction either way (± 20 %), so webhooks that failed
    /// together do not all retry in the same second.
    public var jitter = 0.2
    /// How long a webhook may keep failing before it is disabled (the contract's 3 days).
    public var giveUpAfterMilliseconds: Int64 = 3 * 24 * 3600 * 1000
    /// The longest `Retry-After` honoured; a longer one waits this long.
    public var maximumRetryAfterMilliseconds: Int64 = 3600 * 1000

    public init() {}

    /// The decision after a failed attempt.
    /// - Parameters:
    ///   - failure: how the attempt failed.
    ///   - consecutiveFailures: failures in a row, this one included (1 for the first).
    ///   - failingSinceMilliseconds: Unix milliseconds of the first failure in the row.
    ///   - nowMilliseconds: Unix milliseconds now.
    ///   - jitterDraw: a uniform draw in [-1, 1] (`Double.random(in: -1...1)` in production).
    public func decide(
        after failure: Failure, consecutiveFailures: Int, failingSinceMilliseconds: Int64, nowMilliseconds: Int64,
        jitterDraw: Double
    ) -> Decision {
        if case .status(410, _) = failure {
            return .disable(reason: "the receiver answered 410 Gone")
        }
        if nowMilliseconds - failingSinceMilliseconds >= giveUpAfterMilliseconds {
            return .disable(
                reason: "failing for \(giveUpAfterMilliseconds / 3_600_000) hours; last: \(Self.text(of: failure))")
        }
        if case .status(let status, let retryAfter?) = failure, status == 429 || status == 503 {
            let seconds = retryAfter.delay(now: nowMilliseconds / 1000)
            let milliseconds =
                seconds > maximumRetryAfterMilliseconds / 1000 ? maximumRetryAfterMilliseconds : seconds * 1000
            return .retry(afterMilliseconds: milliseconds)
        }
        return .retry(afterMilliseconds: backoff(consecutiveFailures: consecutiveFailures, jitterDraw: jitterDraw))
    }

    /// 1 s, 2 s, 4 s, … up to 10 min, moved by `jitter` × `jitterDraw`.
    public func backoff(consecutiveFailures: Int, jitterDraw: Double) -> Int64 {
        let doublings = max(0, consecutiveFailures - 1)
        var delay = maximumDelayMilliseconds
        if doublings < 40 { delay = min(maximumDelayMilliseconds, initialDelayMilliseconds << Int64(doublings)) }
        let factor = 1 + jitter * min(1, max(-1, jitterDraw))
        return Int64((Double(delay) * factor).rounded())
    }

    /// The failure as `last_error` text.
    public static func text(of failure: Failure) -> String {
        switch failure {
        case .status(let status, _): "HTTP \(status)"
        case .error(let message): message
        }
    }
}

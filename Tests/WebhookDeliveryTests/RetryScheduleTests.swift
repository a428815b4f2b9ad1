import Testing
import WebhookDelivery

/// The retry schedule as a table: back-off, jitter, Retry-After, 410, and the 3-day limit.
@Suite("RetrySchedule")
struct RetryScheduleTests {
    let schedule = RetrySchedule()
    let now: Int64 = 1_700_000_000_000

    @Test(
        "Back-off doubles from 1 s to 10 min, moved by at most 20 % either way",
        arguments: [
            (1, 0.0, 1000), (2, 0.0, 2000), (3, 0.0, 4000), (10, 0.0, 512_000), (11, 0.0, 600_000),
            (500, 0.0, 600_000), (1, 1.0, 1200), (1, -1.0, 800), (4, 0.5, 8800), (11, -1.0, 480_000),
            (11, 7.0, 720_000),
        ] as [(Int, Double, Int64)])
    func backoff(failures: Int, draw: Double, expected: Int64) {
        #expect(schedule.backoff(consecutiveFailures: failures, jitterDraw: draw) == expected)
        #expect(
            schedule.decide(
                after: .error("connect failed"), consecutiveFailures: failures, failingSinceMilliseconds: now,
                nowMilliseconds: now, jitterDraw: draw) == .retry(afterMilliseconds: expected))
    }

    @Test(
        "Retry-After is honoured on 429 and 503 only, capped at an hour",
        arguments: [
            (503, RetryAfter.seconds(7), Int64(7000)),
            (429, .seconds(0), 0),
            (429, .date(unixSeconds: 1_700_000_030), 30_000),
            (503, .date(unixSeconds: 1_600_000_000), 0),
            (503, .seconds(86_400), 3_600_000),
            (500, .seconds(7), 4000),
            (404, .seconds(7), 4000),
        ])
    func retryAfter(status: Int, retryAfter: RetryAfter, expected: Int64) {
        #expect(
            schedule.decide(
                after: .status(status, retryAfter: retryAfter), consecutiveFailures: 3,
                failingSinceMilliseconds: now - 10_000, nowMilliseconds: now, jitterDraw: 0)
                == .retry(afterMilliseconds: expected))
    }

    @Test("410 Gone disables at once")
    func gone() {
        #expect(
            schedule.decide(
                after: .status(410, retryAfter: nil), consecutiveFailures: 1, failingSinceMilliseconds: now,
                nowMilliseconds: now, jitterDraw: 0) == .disable(reason: "the receiver answered 410 Gone"))
    }

    @Test("After 3 days of failures the webhook is disabled with the last error; just before, it is retried")
    func givesUp() {
        let threeDays: Int64 = 3 * 24 * 3600 * 1000
        #expect(
            schedule.decide(
                after: .error("connect failed: refused"), consecutiveFailures: 450,
                failingSinceMilliseconds: now - threeDays, nowMilliseconds: now, jitterDraw: 0)
                == .disable(reason: "failing for 72 hours; last: connect failed: refused"))
        #expect(
            schedule.decide(
                after: .status(503, retryAfter: .seconds(5)), consecutiveFailures: 450,
                failingSinceMilliseconds: now - threeDays, nowMilliseconds: now, jitterDraw: 0)
                == .disable(reason: "failing for 72 hours; last: HTTP 503"))
        #expect(
            schedule.decide(
                after: .error("timeout"), consecutiveFailures: 450, failingSinceMilliseconds: now - threeDays + 1,
                nowMilliseconds: now, jitterDraw: 0) == .retry(afterMilliseconds: 600_000))
    }
}

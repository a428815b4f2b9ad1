public import ModerationMessages
import RPCCore
public import RPCPosix
import SeededRandom
import Synchronization

/// Random mutations from several connections at once, each remembering what the server
/// acknowledged: the load behind the concurrency, resume, slow-subscriber and durability tests.
///
/// Each thread has its own connection and its own seeded generator. Moderation calls (kick, ban,
/// unban, scope changes, adds, transfers, updates) act as the app; joins and leaves act as the
/// user. With `creates`, threads also create users and groups of their own. A thread stops when
/// its connection breaks (the server went away) or when `stop()` is called.
public final class WriteLoad: Sendable {
    /// One acknowledged mutation: what was asked, and the actions the reply says it recorded.
    public struct Ack: Sendable, CustomStringConvertible {
        public let operation: String
        public let guid: String
        public let uid: String
        /// (seq, kind) of each action the reply carried; empty for calls whose reply has none
        /// (CreateUser, CreateGroup, UpdateGroup).
        public let actions: [(seq: UInt64, kind: ActionType)]

        public var description: String { "\(operation) \(guid) \(uid) \(actions.map(\.seq))" }
    }

    private let groups: [String]
    private let users: [String]
    private let threads: Int
    private let seed: UInt64
    private let creates: Bool
    private let connect: @Sendable () throws -> ClientConnection
    private let log = Log()

    private final class Log: Sendable {
        let acks = Mutex<[Ack]>([])
        let failures = Mutex<[String: Int]>([:])
        let calls = Atomic<Int>(0)
        let stopping = Atomic<Bool>(false)
        let running = Mutex<[Background<Void>]>([])
    }

    /// - Parameters:
    ///   - groups: the groups to mutate (existing ones; the app must see them).
    ///   - users: the users to act on (existing ones).
    ///   - creates: also create users and groups (named after the thread and a counter).
    ///   - connect: opens one thread's connection (with the app's key).
    public init(
        threads: Int, groups: [String], users: [String], seed: UInt64, creates: Bool = false,
        connect: @escaping @Sendable () throws -> ClientConnection
    ) {
        self.threads = threads
        self.groups = groups
        self.users = users
        self.seed = seed
        self.creates = creates
        self.connect = connect
    }

    /// Starts the threads.
    public func start() {
        let workers = (0..<threads).map { index in Background { [self] in run(thread: index) } }
        log.running.withLock { $0 = workers }
    }

    /// Stops the threads and waits for them (a call in flight finishes or fails first).
    public func stop(timeoutMs: Int = 30_000) throws {
        log.stopping.store(true, ordering: .releasing)
        for worker in log.running.withLock({ $0 }) { try worker.wait(timeoutMs: timeoutMs) }
    }

    /// True once every thread has ended (stopped, or its connection broke).
    public var isFinished: Bool { log.running.withLock { $0.allSatisfy(\.isFinished) } }

    /// The acknowledged mutations so far.
    public var acks: [Ack] { log.acks.withLock { $0 } }

    /// Calls made so far (acknowledged or not).
    public var callCount: Int { log.calls.load(ordering: .relaxed) }

    /// How many calls failed, by error code.
    public var failures: [String: Int] { log.failures.withLock { $0 } }

    private func run(thread: Int) {
        var rng = SplitMix64(seed: seed &+ UInt64(thread) &* 0x1000_0001)
        guard let connection = try? connect() else { return }
        defer { connection.close() }
        let app = ModerationWireClient(connection: connection, actor: "", timeoutMs: 10_000)
        var created = 0
        while !log.stopping.load(ordering: .acquiring) {
            let guid = groups.randomElement(using: &rng)!
            let uid = users.randomElement(using: &rng)!
            let user = app.acting(as: uid)
            let roll = Int.random(in: 0..<100, using: &rng)
            let operation: String
            let outcome: Result<[(UInt64, ActionType)], RPCError>
            switch roll {
            case 0..<18:
                operation = "join"
                outcome = Self.actions { try [user.join(guid).action].compactMap { $0 } }
            case 18..<28:
                operation = "leave"
                outcome = Self.actions { try [user.leave(guid)] }
            case 28..<42:
                operation = "kick"
                outcome = Self.actions { try [app.kick(guid, uid)] }
            case 42..<54:
                operation = "ban"
                outcome = Self.actions { try [app.ban(guid, uid, reason: "load").action].compactMap { $0 } }
            case 54..<64:
                operation = "unban"
                outcome = Self.actions { try [app.unban(guid, uid).action].compactMap { $0 } }
            case 64..<74:
                operation = "scope"
                let scope: Scope = [.admin, .moderator, .participant].randomElement(using: &rng)!
                outcome = Self.actions { try [app.changeScope(guid, uid, to: scope).action].compactMap { $0 } }
            case 74..<82:
                operation = "add"
                outcome = Self.actions {
                    _ = try app.addMembers(guid, [(uid, .participant)])
                    return []
                }
            case 82..<86:
                operation = "transfer"
                outcome = Self.actions { try [app.transfer(guid, to: uid).action].compactMap { $0 } }
            case 86..<90:
                operation = "update"
                let name = "Group \(guid) \(Int.random(in: 0..<1000, using: &rng))"
                outcome = Self.actions {
                    _ = try app.updateGroup(UpdateGroupRequest(guid: guid, name: name))
                    return []
                }
            default:
                guard creates else { continue }
                created += 1
                let name = "t\(thread)-\(created)"
                if roll < 95 {
                    operation = "createUser"
                    outcome = Self.actions {
                        _ = try app.createUser(name)
                        return []
                    }
                    record(operation, guid: "", uid: name, outcome)
                } else {
                    operation = "createGroup"
                    outcome = Self.actions {
                        _ = try app.createGroup(name, owner: uid)
                        return []
                    }
                    record(operation, guid: name, uid: uid, outcome)
                }
                if case .failure(let error) = outcome, error.code == .unavailable || error.code == .deadlineExceeded {
                    return
                }
                continue
            }
            record(operation, guid: guid, uid: uid, outcome)
            if case .failure(let error) = outcome, error.code == .unavailable || error.code == .deadlineExceeded {
                return
            }
        }
    }

    private func record(
        _ operation: String, guid: String, uid: String, _ outcome: Result<[(UInt64, ActionType)], RPCError>
    ) {
        log.calls.add(1, ordering: .relaxed)
        switch outcome {
        case .success(let actions):
            let ack = Ack(operation: operation, guid: guid, uid: uid, actions: actions.map { (seq: $0.0, kind: $0.1) })
            log.acks.withLock { $0.append(ack) }
        case .failure(let error):
            log.failures.withLock { $0[error.errorCode, default: 0] += 1 }
        }
    }

    private static func actions(_ body: () throws -> [Action]) -> Result<[(UInt64, ActionType)], RPCError> {
        do {
            return .success(try body().map { ($0.seq, $0.action) })
        } catch let error as RPCError {
            return .failure(error)
        } catch {
            return .failure(RPCError(code: .unknown, errorCode: "NOT_AN_RPC_ERROR", message: "\(error)"))
        }
    }
}

internal import CSystemShims
internal import Glibc
import Synchronization

/// The listening socket shared by the loops, closed when the last loop lets go of it, and one
/// descriptor kept in reserve for when the process runs out of them.
///
/// When `accept` fails with EMFILE, the connections waiting in the backlog cannot be taken, and
/// a level-triggered listener would wake the loops for them again and again. `shedWaiting`
/// closes the reserve descriptor, which makes room to accept each waiting connection, tell it
/// why in a GOAWAY and close it, then takes the reserve back (libuv's "EMFILE trick"): clients
/// learn at once that the server is full instead of waiting in the backlog for a HELLO_ACK.
final class Listener: Sendable {
    let fd: Int32
    private let holders: Atomic<Int>
    /// The reserve descriptor (on /dev/null); `inUse` while a loop sheds with it, `lost` when it
    /// could not be reopened (another thread took the number first).
    private let spare: Atomic<Int32>
    private static let inUse: Int32 = -1
    private static let lost: Int32 = -2

    init(fd: Int32, loops: Int) {
        self.fd = fd
        holders = Atomic(loops)
        spare = Atomic(Self.openSpare())
        if spare.load(ordering: .relaxed) < 0 { spare.store(Self.lost, ordering: .relaxed) }
    }

    func release() {
        guard holders.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 else { return }
        Glibc.close(fd)
        let reserve = spare.exchange(Self.inUse, ordering: .acquiringAndReleasing)
        if reserve >= 0 { Glibc.close(reserve) }
    }

    /// With the reserve descriptor given up for the moment, accepts up to `limit` waiting
    /// connections and closes each after sending it `goaway`.
    /// - Returns: how many were shed (0 when another loop holds the reserve or it is gone).
    func shedWaiting(goaway: [UInt8], limit: Int) -> Int {
        var reserve = spare.exchange(Self.inUse, ordering: .acquiringAndReleasing)
        if reserve == Self.inUse { return 0 } // another loop is shedding: it takes them
        if reserve == Self.lost {
            reserve = Self.openSpare()
            guard reserve >= 0 else {
                spare.store(Self.lost, ordering: .releasing)
                return 0
            }
        }
        Glibc.close(reserve)
        var shed = 0
        while shed < limit {
            let client = cshim_accept(fd)
            guard client >= 0 else { break }
            // A fresh socket's send buffer always takes a few dozen bytes: no wait.
            _ = goaway.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            Glibc.close(client)
            shed += 1
        }
        let reopened = Self.openSpare()
        spare.store(reopened >= 0 ? reopened : Self.lost, ordering: .releasing)
        return shed
    }

    private static func openSpare() -> Int32 { open("/dev/null", O_RDONLY | O_CLOEXEC) }
}

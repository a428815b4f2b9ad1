/// What one connection has reserved in the memory budget, brought in line with what it holds.
///
/// The connection settles its account after the events that change what it holds (a batch of
/// frames consumed, a flush); a settle that changes nothing costs no atomic operation, so a
/// connection whose peer reads everything within the loop turn never touches the budget.
public struct MemoryAccount {
    public let budget: MemoryBudget
    /// Unwritten output reserved (`.outbound`).
    public private(set) var outbound = 0
    /// Partial input reserved (`.inbound`).
    public private(set) var inbound = 0

    public init(budget: MemoryBudget) {
        self.budget = budget
    }

    /// Everything reserved.
    public var held: Int { outbound + inbound }

    /// Reserves or releases the difference between `bytes` and the unwritten output reserved.
    public mutating func settle(outbound bytes: Int) {
        Self.settle(&outbound, to: bytes, kind: .outbound, in: budget)
    }

    /// Reserves or releases the difference between `bytes` and the partial input reserved.
    public mutating func settle(inbound bytes: Int) {
        Self.settle(&inbound, to: bytes, kind: .inbound, in: budget)
    }

    /// Releases everything (the connection closed).
    public mutating func releaseAll() {
        settle(outbound: 0)
        settle(inbound: 0)
    }

    private static func settle(_ held: inout Int, to bytes: Int, kind: MemoryBudget.Kind, in budget: MemoryBudget) {
        if bytes > held {
            budget.reserve(bytes - held, for: kind)
        } else if bytes < held {
            budget.release(held - bytes, for: kind)
        }
        held = bytes
    }
}

import Synchronization

/// How much of something every client shares each address holds (IPv6 by its /64, as the budgets count it): open
/// connections, bytes of request bodies reserved. `take` refuses past the address's `limit`, so no one address holds
/// all of it. Touched when a connection opens or closes and when a body's reservation grows, never per request; one
/// lock, and an entry only while an address holds something (memory: the addresses holding something now).
final class AddressShares: Sendable {
    let limit: Int
    private let held = Mutex<[ClientAddress: Int]>([:])

    init(limit: Int) { self.limit = max(1, limit) }

    /// The address as it is counted: an IPv4 address, or an IPv6 address's /64.
    static func counted(_ a: ClientAddress) -> ClientAddress {
        a.isIPv4 || a.high == 0 ? a : ClientAddress(high: a.high, low: 0)
    }

    /// Takes `n` more for `address`; false (nothing taken) when it would hold more than `limit`.
    func take(_ address: ClientAddress, _ n: Int = 1) -> Bool {
        let key = AddressShares.counted(address)
        return held.withLock { table in
            let now = table[key, default: 0]
            guard now + n <= limit else { return false }
            table[key] = now + n
            return true
        }
    }

    /// Gives back `n` that `address` took.
    func give(_ address: ClientAddress, _ n: Int = 1) {
        guard n > 0 else { return }
        let key = AddressShares.counted(address)
        held.withLock { table in
            let left = table[key, default: 0] - n
            if left > 0 { table[key] = left } else { table[key] = nil }
        }
    }
}

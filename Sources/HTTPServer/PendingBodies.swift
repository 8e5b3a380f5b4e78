/// Large bodies queued behind a connection's head bytes: each is sent right after `out[..<at]`, from its own storage,
/// never copied. An assembled body's fragments are queued unretained (a retain and a release each, on memory both loops
/// share, cost a warm personal feed ~600 instructions); the body that holds them is kept by the last of its entries,
/// so each fragment outlives its own sending. Sent entries let go of what they hold at once.
struct PendingBodies {
    struct Entry {
        let at: Int
        let count: Int
        /// A body of its own, or (nil) the fragment.
        var bytes: [UInt8]?
        var fragment: Unmanaged<BodyFragment>?
        /// The assembled body whose fragments this entry and the ones before it are (on the last of them only).
        var keeper: AssembledBody?
    }

    private var entries: [Entry] = []
    /// The first entry not yet sent whole, and how many of its bytes went.
    private var first = 0
    private var sent = 0

    var isEmpty: Bool { first == entries.count }
    /// Entries not yet sent whole.
    var count: Int { entries.count - first }

    /// Where the `i`-th unsent entry goes among the head bytes.
    func at(_ i: Int) -> Int { entries[first + i].at }

    /// Bytes not yet sent.
    var pendingBytes: Int {
        var n = -sent, i = first
        while i < entries.count { n += entries[i].count; i += 1 }
        return n
    }

    mutating func append(_ bytes: [UInt8], at: Int) {
        entries.append(Entry(at: at, count: bytes.count, bytes: bytes, fragment: nil, keeper: nil))
    }

    /// A fragment held by an assembled body that `keep` is given right after its last fragment.
    mutating func append(fragment: Unmanaged<BodyFragment>, count: Int, at: Int) {
        entries.append(Entry(at: at, count: count, bytes: nil, fragment: fragment, keeper: nil))
    }

    /// Keeps `body` (whose fragments were just appended) until the last entry is sent.
    mutating func keep(_ body: AssembledBody) {
        entries[entries.count - 1].keeper = body
    }

    /// The unsent bytes of the `i`-th unsent entry, lent to `body`.
    func withBytes<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        let skip = i == 0 ? sent : 0
        if let u = entries[first + i].fragment {
            return u._withUnsafeGuaranteedRef { f in f.bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[skip...])) } }
        }
        return entries[first + i].bytes!.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[skip...])) }
    }

    /// Up to `n` more bytes of the first unsent entry sent; returns how many it took. An entry sent whole lets go of
    /// what it holds.
    mutating func consume(_ n: Int) -> Int {
        let k = min(n, entries[first].count - sent)
        sent += k
        if sent == entries[first].count {
            if entries[first].bytes != nil { entries[first].bytes = nil }
            if entries[first].keeper != nil { entries[first].keeper = nil }
            first += 1; sent = 0
            if first == entries.count { entries.removeAll(keepingCapacity: true); first = 0 }
        }
        return k
    }
}

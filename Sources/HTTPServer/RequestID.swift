/// A request's id: the client's own (a valid `X-Request-ID`), or one its loop made — the loop's seven-character
/// prefix and a counter in hex — which becomes text only when it is written or asked for (at most 15 bytes: a
/// small string, no allocation).
struct RequestID: Sendable {
    private var client: String?
    /// The loop's prefix, seven ASCII bytes, the first in the lowest byte.
    private var prefix: UInt64 = 0
    private var counter: UInt32 = 0

    static let unset = RequestID(client: "-")

    init(client: String) { self.client = client }
    init(prefix: UInt64, counter: UInt32) { self.prefix = prefix; self.counter = counter }

    /// Packs a loop's prefix (seven ASCII bytes).
    static func packPrefix(_ bytes: [UInt8]) -> UInt64 {
        precondition(bytes.count == 7, "a request id prefix is seven bytes")
        var p: UInt64 = 0
        for (i, b) in bytes.enumerated() { p |= UInt64(b) << UInt64(8 * i) }
        return p
    }

    private static let hexDigits: StaticString = "0123456789abcdef"

    /// Writes the generated form into `buffer` (room for 15 bytes); returns its length.
    @inline(__always)
    private func write(_ buffer: UnsafeMutablePointer<UInt8>) -> Int {
        var p = prefix
        for i in 0..<7 { buffer[i] = UInt8(truncatingIfNeeded: p); p >>= 8 }
        var n = counter
        var digits = 1
        while digits < 8 && n >> (4 * UInt32(digits)) != 0 { digits += 1 }
        let end = 7 + digits
        var k = end
        let hex = RequestID.hexDigits.utf8Start
        while k > 7 { k -= 1; buffer[k] = hex[Int(n & 0xF)]; n >>= 4 }
        return end
    }

    /// The length of its text, at most (a generated id is at most 15 bytes).
    var maxByteCount: Int { client?.utf8.count ?? 15 }

    /// Writes its text at `buffer` (room for `maxByteCount` bytes); returns the length.
    @inline(__always)
    func write(to buffer: UnsafeMutablePointer<UInt8>) -> Int {
        if var client {
            return client.withUTF8 { u in
                if let base = u.baseAddress { buffer.update(from: base, count: u.count) }
                return u.count
            }
        }
        return write(buffer)
    }

    var string: String {
        if let client { return client }
        return String(unsafeUninitializedCapacity: 15) { write($0.baseAddress!) }
    }
}

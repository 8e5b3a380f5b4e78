/// Byte searches the HTTP parsers of both directions share: eight bytes at a time, where a byte equal to the one
/// sought is a zero byte of the word XORed with it (the lowest such byte of a word is always found exactly).
public enum ByteScan {
    /// The first CR or LF in `p` at or after `from`, or nil.
    @inlinable @inline(__always)
    public static func firstLineBreak(_ p: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
        let end = p.count
        guard let base = p.baseAddress, from < end else { return nil }
        var i = from
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        while i + 8 <= end {
            let w = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
            let cr = w ^ (ones &* 13), lf = w ^ (ones &* 10)
            let hits = (((cr &- ones) & ~cr) | ((lf &- ones) & ~lf)) & highs
            if hits != 0 { return i + hits.trailingZeroBitCount >> 3 }
            i += 8
        }
        while i < end {
            let b = base[i]
            if b == 13 || b == 10 { return i }
            i += 1
        }
        return nil
    }

    /// The first byte from `from` that is below 0x20 or DEL (a line break, a tab, another control byte), eight bytes a
    /// test; nil when there is none. One pass over a head both finds its lines and learns whether anything in them but
    /// a tab needs a closer look.
    public static func firstControl(_ p: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
        let end = p.count
        guard let base = p.baseAddress, from < end else { return nil }
        var i = from
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        while i + 8 <= end {
            let w = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
            let del = w ^ (ones &* 0x7F)
            // The lowest flagged byte is exact (a borrow only flags bytes above the first real one).
            let hits = (((w &- ones &* 0x20) & ~w) | ((del &- ones) & ~del)) & highs
            if hits != 0 { return i + hits.trailingZeroBitCount >> 3 }
            i += 8
        }
        while i < end {
            let c = base[i]
            if c < 0x20 || c == 0x7F { return i }
            i += 1
        }
        return nil
    }

    /// Whether `p[from..<to]` is a field value as RFC 9110 §5.5 allows on the wire: no control byte but tab, no DEL
    /// (obs-text, 0x80 and up, is allowed). Eight bytes a test; a word holding a byte below 0x20 or a DEL is judged
    /// byte by byte (it may be a tab).
    @inlinable @inline(__always)
    public static func isFieldValue(_ p: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        var k = from
        if let base = p.baseAddress {
            while k + 8 <= to {
                let w = UnsafeRawPointer(base + k).loadUnaligned(as: UInt64.self)
                let del = w ^ (ones &* 0x7F)
                // Some byte below 0x20 (exact for bytes of any value), or some byte equal to DEL.
                if ((w &- ones &* 0x20) & ~w | (del &- ones) & ~del) & highs != 0 { break }
                k += 8
            }
        }
        while k < to {
            let c = p[k]
            guard c == 9 || (c >= 32 && c != 127) else { return false }
            k += 1
        }
        return true
    }

    /// Whether `c` is a token byte (RFC 9110 §5.6.2: field names, methods): the one definition both parsers and the
    /// client use.
    @inlinable
    public static func isToken(_ c: UInt8) -> Bool {
        switch c {
        case 48...57, 65...90, 97...122, 33, 35, 36, 37, 38, 39, 42, 43, 45, 46, 94, 95, 96, 124, 126: return true
        default: return false
        }
    }

    /// The token bytes as a 128-bit set, bytes 0–63 in the first word and 64–127 in the second: for loops over many
    /// bytes (one shift and test a byte).
    /// Written out (a `static let` made each read of it a `swift_once` call, eight a response head); a test checks it
    /// against `isToken(_:)`.
    public static let tokenBits: (UInt64, UInt64) = (0x03FF_6CFA_0000_0000, 0x57FF_FFFF_C7FF_FFFE)

    /// Whether `c` is a token byte, by the set (`bits` is `tokenBits`, read once by a caller that tests many bytes).
    @inlinable @inline(__always)
    public static func isToken(_ c: UInt8, _ bits: (UInt64, UInt64)) -> Bool {
        c < 64 ? (bits.0 >> UInt64(c)) & 1 == 1 : c < 128 && (bits.1 >> UInt64(c & 63)) & 1 == 1
    }

    /// Whether every byte of `p` is a token byte (and there is at least one).
    @inlinable @inline(__always)
    public static func isToken(_ p: UnsafeBufferPointer<UInt8>) -> Bool {
        let bits = tokenBits
        guard !p.isEmpty else { return false }
        for c in p where !isToken(c, bits) { return false }
        return true
    }
}

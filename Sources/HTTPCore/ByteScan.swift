/// Byte searches the HTTP parsers of both directions share: eight bytes at a time, where a byte equal to the one
/// sought is a zero byte of the word XORed with it (the lowest such byte of a word is always found exactly).
public enum ByteScan {
    /// The first CR or LF in `p` at or after `from`, or nil.
    @inlinable @inline(__always)
    public static func firstLineBreak(_ p: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
        first(p, from: from, to: p.count, words: { w in zeroBytes(w ^ (ones &* 13)) | zeroBytes(w ^ (ones &* 10)) }, byte: { $0 == 13 || $0 == 10 })
    }

    /// The first byte from `from` that is below 0x20 or DEL (a line break, a tab, another control byte), or nil. One
    /// pass over a head both finds its lines and learns whether anything in them but a tab needs a closer look.
    @inlinable @inline(__always)
    public static func firstControl(_ p: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
        first(p, from: from, to: p.count, words: controlBytes, byte: isControl)
    }

    /// A control byte: below 0x20, or DEL (the byte rule `controlBytes` tests eight at a time).
    @inlinable @inline(__always)
    static func isControl(_ c: UInt8) -> Bool { c < 0x20 || c == 0x7F }

    /// Whether `p[from..<to]` is a field value as RFC 9110 §5.5 allows on the wire: no control byte but tab, no DEL
    /// (obs-text, 0x80 and up, is allowed). Control bytes are found eight bytes a test; each is judged (it may be a tab).
    @inlinable @inline(__always)
    public static func isFieldValue(_ p: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Bool {
        var k = from
        while let at = first(p, from: k, to: to, words: controlBytes, byte: isControl) {
            guard p[at] == 9 else { return false }
            k = at + 1
        }
        return true
    }

    @inlinable static var ones: UInt64 { 0x0101_0101_0101_0101 }
    @inlinable static var highs: UInt64 { 0x8080_8080_8080_8080 }

    /// The high bit of each zero byte of `w`: the lowest one set is exact (a borrow only flags bytes above the first real one).
    @inlinable @inline(__always)
    static func zeroBytes(_ w: UInt64) -> UInt64 { (w &- ones) & ~w & highs }

    /// The high bit of each byte of `w` below 0x20 or equal to DEL (the lowest one set exact, as above).
    @inlinable @inline(__always)
    static func controlBytes(_ w: UInt64) -> UInt64 { belowSpaceBytes(w) | zeroBytes(w ^ (ones &* 0x7F)) }

    /// The high bit of each byte of `w` below 0x20 (the lowest one set exact; nonzero exactly when there is one).
    @inlinable @inline(__always)
    static func belowSpaceBytes(_ w: UInt64) -> UInt64 { (w &- ones &* 0x20) & ~w & highs }

    /// The first index in `from..<to` whose byte `byte` picks: eight bytes at a time by `words` (the high bit of each
    /// picked byte of a word, the lowest exact), the tail byte by byte.
    @inlinable @inline(__always)
    static func first(_ p: UnsafeBufferPointer<UInt8>, from: Int, to end: Int, words: (UInt64) -> UInt64, byte: (UInt8) -> Bool) -> Int? {
        guard let base = p.baseAddress, from < end else { return nil }
        var i = from
        while i + 8 <= end {
            let hits = words(UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self))
            if hits != 0 { return i + hits.trailingZeroBitCount >> 3 }
            i += 8
        }
        while i < end {
            if byte(base[i]) { return i }
            i += 1
        }
        return nil
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

    /// Whether `c` is in a 128-bit set of ASCII bytes (`tokenBits`, a host's; read once by a caller that tests many
    /// bytes): one shift and test.
    @inlinable @inline(__always)
    public static func inSet(_ c: UInt8, _ bits: (UInt64, UInt64)) -> Bool {
        c < 64 ? (bits.0 >> UInt64(c)) & 1 == 1 : c < 128 && (bits.1 >> UInt64(c & 63)) & 1 == 1
    }

    /// The high bit of each byte of `w` that is an ASCII letter or `-`, exact for every byte (no sum carries out of its
    /// byte): most bytes of a field name.
    @inlinable @inline(__always)
    static func letterOrDashBytes(_ w: UInt64) -> UInt64 {
        let low7 = ones &* 0x7F
        let d = w ^ (ones &* 0x2D)
        let dashes = ~(((d & low7) &+ low7) | d)
        return (letterBytes(w) | dashes) & ~w & highs
    }

    /// The high bit of each byte of `w` whose low seven bits are an ASCII letter (the caller drops bytes above 0x7F).
    @inlinable @inline(__always)
    static func letterBytes(_ w: UInt64) -> UInt64 {
        let a = (w | ones &* 0x20) & (ones &* 0x7F)   // a letter folded to lower case, the high bit dropped
        return (a &+ ones &* (0x80 - 0x61)) & ~(a &+ ones &* (0x80 - 0x7B))
    }

    /// The first index in `from..<to` whose byte is not a token byte, or `to`: eight bytes at a time while they are
    /// letters and dashes, any other byte by the set.
    @inlinable
    public static func tokenEnd(_ p: UnsafeBufferPointer<UInt8>, from: Int, to end: Int) -> Int {
        guard let base = p.baseAddress else { return from }
        let bits = tokenBits
        var i = from
        while i < end {
            if i + 8 <= end {
                let passed = letterOrDashBytes(UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self))
                if passed == highs { i += 8; continue }
                i += (~passed & highs).trailingZeroBitCount >> 3
            }
            guard inSet(base[i], bits) else { return i }
            i += 1
        }
        return end
    }

    /// The high bit of each byte of `w` that is a letter, a digit, `-`, `.` or `:` (most bytes of a host and port),
    /// exact for every byte.
    @inlinable @inline(__always)
    static func hostWordBytes(_ w: UInt64) -> UInt64 {
        let low7 = ones &* 0x7F
        let b = w & low7
        let dashToColon = (b &+ ones &* (0x80 - 0x2D)) & ~(b &+ ones &* (0x80 - 0x3B))   // - . / 0-9 :
        let d = w ^ (ones &* 0x2F)
        let slashes = ~(((d & low7) &+ low7) | d)
        return (letterBytes(w) | dashToColon) & ~slashes & ~w & highs
    }

    /// The first index in `from..<to` whose byte is not in `bits` (a host's set, `RequestParser.hostBits`), or `to`: eight
    /// bytes at a time while they are letters, digits, `-`, `.` and `:`, any other byte by the set.
    @inlinable
    public static func hostEnd(_ p: UnsafeBufferPointer<UInt8>, from: Int, to end: Int, bits: (UInt64, UInt64)) -> Int {
        guard let base = p.baseAddress else { return from }
        var i = from
        while i < end {
            if end - i >= 8 {
                let passed = hostWordBytes(UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self))
                if passed == highs { i += 8; continue }
                i += (~passed & highs).trailingZeroBitCount >> 3
            }
            guard inSet(base[i], bits) else { return i }
            i += 1
        }
        return end
    }

    /// Whether every byte of `p` is a token byte (and there is at least one).
    @inlinable @inline(__always)
    public static func isToken(_ p: UnsafeBufferPointer<UInt8>) -> Bool { !p.isEmpty && tokenEnd(p, from: 0, to: p.count) == p.count }
}

extension Array where Element == UInt8 {
    /// Emptied, its capacity kept; an empty one left as it is (`removeAll(keepingCapacity:)` goes through the generic
    /// `replaceSubrange`, about 80 instructions, even for an array with nothing in it: a connection's buffers are
    /// emptied so on every request, mostly when there is nothing in them).
    @inlinable @inline(__always)
    public mutating func empty() {
        if !isEmpty { removeAll(keepingCapacity: true) }
    }
}

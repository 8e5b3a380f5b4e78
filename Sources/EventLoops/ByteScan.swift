/// Byte searches the HTTP parsers of both directions share: eight bytes at a time, where a byte equal to the one
/// sought is a zero byte of the word XORed with it (the lowest such byte of a word is always found exactly).
public enum ByteScan {
    /// The first CR or LF in `p` at or after `from`, or nil.
    @inline(__always)
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
}

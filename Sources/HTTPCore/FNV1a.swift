/// 64-bit FNV-1a as 16 hex digits: the strong ETag of a representation.
public enum FNV1a {
    public static let offset: UInt64 = 0xcbf29ce484222325
    public static let prime: UInt64 = 0x100000001b3

    public static func hash(_ bytes: [UInt8]) -> String { hex(value(bytes)) }

    public static func value(_ bytes: [UInt8]) -> UInt64 {
        var h = offset
        for b in bytes { h ^= UInt64(b); h = h &* prime }
        return h
    }

    /// Folds a 64-bit word into `h`, byte by byte.
    public static func mix(_ h: UInt64, _ word: UInt64) -> UInt64 {
        var h = h
        for shift in stride(from: 0, to: 64, by: 8) { h ^= (word >> UInt64(shift)) & 0xff; h = h &* prime }
        return h
    }

    /// 16 lowercase hex digits (written in place: one string, no padding concatenated).
    public static func hex(_ h: UInt64) -> String {
        String(unsafeUninitializedCapacity: 16) { b in writeHex(h, b.baseAddress!); return 16 }
    }

    /// A strong entity tag for `bytes`: their hash in quotes, `"0123456789abcdef"`, written as one string.
    public static func quotedTag(_ bytes: [UInt8]) -> String {
        let h = value(bytes)
        return String(unsafeUninitializedCapacity: 18) { b in
            b[0] = 34; writeHex(h, b.baseAddress! + 1); b[17] = 34
            return 18
        }
    }

    package static func writeHex(_ h: UInt64, _ p: UnsafeMutablePointer<UInt8>) {
        for i in 0..<16 {
            let d = UInt8(truncatingIfNeeded: h >> UInt64(60 - 4 * i)) & 15
            p[i] = d < 10 ? 48 + d : 87 + d
        }
    }
}

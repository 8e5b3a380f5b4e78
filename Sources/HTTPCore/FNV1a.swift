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

    /// Eight digits a word: each half's nibbles spread one to a byte, turned into digits all at once, stored most
    /// significant first (a trace's ids are written on every upstream call).
    package static func writeHex(_ h: UInt64, _ p: UnsafeMutablePointer<UInt8>) {
        UnsafeMutableRawPointer(p).storeBytes(of: hexWord(UInt32(truncatingIfNeeded: h >> 32)).bigEndian, as: UInt64.self)
        UnsafeMutableRawPointer(p + 8).storeBytes(of: hexWord(UInt32(truncatingIfNeeded: h)).bigEndian, as: UInt64.self)
    }

    /// The eight lowercase hex digits of `x` as the bytes of a word, the most significant digit in its highest byte.
    @inline(__always)
    static func hexWord(_ x: UInt32) -> UInt64 {
        var n = UInt64(x)
        n = ((n & 0xFFFF_0000) << 16) | (n & 0xFFFF)
        n = ((n & 0x0000_FF00_0000_FF00) << 8) | (n & 0x0000_00FF_0000_00FF)
        n = ((n & 0x00F0_00F0_00F0_00F0) << 4) | (n & 0x000F_000F_000F_000F)
        // A nibble above 9 gets 0x27 more ('a' − '0' − 10) on top of '0'.
        let letters = ((n &+ 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101
        return n &+ 0x3030_3030_3030_3030 &+ letters &* 0x27
    }

    /// `writeHex` one digit at a time: the rule the word-at-a-time form is tested against.
    package static func writeHexByDigit(_ h: UInt64, _ p: UnsafeMutablePointer<UInt8>) {
        for i in 0..<16 {
            let d = UInt8(truncatingIfNeeded: h >> UInt64(60 - 4 * i)) & 15
            p[i] = d < 10 ? 48 + d : 87 + d
        }
    }
}

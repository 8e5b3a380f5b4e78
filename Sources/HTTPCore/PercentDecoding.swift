/// Percent-decoding (RFC 3986 §2.1) of URI components and form fields, `+` as a space where asked.
public enum PercentDecoding {
    /// Decodes `%HH` escapes; nil when an escape is malformed or the result is not valid UTF-8.
    public static func decode<S: StringProtocol>(_ s: S, plusAsSpace: Bool = false) -> String? {
        // Most names and values carry no escape: the text itself (already valid UTF-8), no byte copy.
        if !s.utf8.contains(where: { $0 == UInt8(ascii: "%") || (plusAsSpace && $0 == UInt8(ascii: "+")) }) { return String(s) }
        return Array(s.utf8).withUnsafeBufferPointer { decode(bytes: $0, plusAsSpace: plusAsSpace) }
    }

    /// The same over bytes (the text they spell, when it needs no decoding).
    public static func decode(bytes s: UnsafeBufferPointer<UInt8>, plusAsSpace: Bool = false) -> String? {
        // One scan: an escape (then decoded below), else whether any byte is past ASCII.
        var escaped = false, ascii = true
        for b in s {
            if b == UInt8(ascii: "%") || (plusAsSpace && b == UInt8(ascii: "+")) { escaped = true; break }
            if b >= 0x80 { ascii = false }
        }
        if !escaped {
            // ASCII needs no validation (and `String(validating:)` instantiates generic metadata on every call).
            if ascii { return String(decoding: s, as: UTF8.self) }
            return String(validating: s, as: UTF8.self)
        }
        var out = [UInt8](); out.reserveCapacity(s.count)
        var i = 0
        while i < s.count {
            let b = s[i]
            if b == UInt8(ascii: "%") {
                guard i + 2 < s.count, let h = hexValue(s[i + 1]), let l = hexValue(s[i + 2]) else { return nil }
                out.append(h << 4 | l); i += 3
            } else {
                out.append(plusAsSpace && b == UInt8(ascii: "+") ? UInt8(ascii: " ") : b); i += 1
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    @inlinable @inline(__always)
    public static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case 48...57: return b - 48
        case 65...70: return b - 55
        case 97...102: return b - 87
        default: return nil
        }
    }
}

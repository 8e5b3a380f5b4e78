import Glibc

/// Numbers as text without Foundation's `String(format:)` (which builds a CFString per call and showed up as a
/// tenth of a warm personal feed's time): zero-padded integers and C's `%.Nf`, byte for byte.
public enum TextFormat {
    /// `n` zero-padded to at least `width` characters, sign included (`padded(7, 2)` = `07`), as `%0<width>d`.
    public static func padded(_ n: Int, _ width: Int) -> String {
        let digits = String(n.magnitude)
        let zeros = String(repeating: "0", count: max(0, width - digits.count - (n < 0 ? 1 : 0)))
        return (n < 0 ? "-" : "") + zeros + digits
    }

    /// What `String(format: "%.<digits>f", value)` writes (C's rounding of the exact binary value), via vsnprintf.
    public static func fixed(_ value: Double, digits: Int) -> String {
        precondition((0...17).contains(digits))
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 400) { buffer in
            let n = withVaList([Int32(digits), value]) { vsnprintf(buffer.baseAddress!, 400, "%.*f", $0) }
            let length = min(Int(n), 399)
            return String(decoding: UnsafeRawBufferPointer(start: buffer.baseAddress!, count: length).bindMemory(to: UInt8.self), as: UTF8.self)
        }
    }

    /// `%.<digits>f` with trailing zeros (and a bare point) removed and `-0` written `0`: how coordinates are
    /// written. Integer arithmetic when |value| × 10^digits is well inside exact range and not within a hair of a
    /// rounding tie; otherwise (never for real coordinates) C's own formatting decides, so the text is the same.
    public static func trimmedFixed(_ value: Double, digits: Int) -> String {
        precondition((0...9).contains(digits))
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = value * scale
        let rounded = scaled.rounded()
        guard value.isFinite, abs(scaled) < 1e15, abs(abs(scaled - rounded) - 0.5) > 1e-6 else { return trim(fixed(value, digits: digits)) }
        let n = Int(rounded)
        if n == 0 { return "0" }
        let unit = Int(scale)
        let whole = n.magnitude / UInt(unit)
        var fraction = n.magnitude % UInt(unit)
        var text = (n < 0 ? "-" : "") + String(whole)
        guard fraction != 0 else { return text }
        var width = digits
        while fraction % 10 == 0 { fraction /= 10; width -= 1 }
        let f = String(fraction)
        text += "." + String(repeating: "0", count: width - f.utf8.count) + f
        return text
    }

    static func trim(_ s: String) -> String {
        var s = s
        if s.utf8.contains(UInt8(ascii: ".")) {
            while s.hasSuffix("0") { s.removeLast() }
            if s.hasSuffix(".") { s.removeLast() }
        }
        return s == "-0" ? "0" : s
    }
}

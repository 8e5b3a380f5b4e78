/// Minimal, fast JSON text building for the server's own bodies (problems, health, metrics).
public enum JSONText {
    /// `s` as a JSON string literal, quotes included.
    public static func quote(_ s: String) -> String {
        var out = [UInt8](); out.reserveCapacity(s.utf8.count + 2)
        appendQuoted(s, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `n` in decimal, written in place (no String made).
    public static func appendInt(_ n: Int, to out: inout [UInt8]) {
        if n < 0 { out.append(45) }
        var m = n.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)   // up to 20 digits, least significant first
        var count = 0
        withUnsafeMutableBytes(of: &digits) { d in
            repeat { d[count] = UInt8(48 + m % 10); m /= 10; count += 1 } while m > 0
            for k in stride(from: count - 1, through: 0, by: -1) { out.append(d[k]) }
        }
    }

    public static func appendQuoted(_ s: String, to out: inout [UInt8]) {
        out.append(34)
        var s = s
        s.withUTF8 { appendEscaped($0, to: &out) }
        out.append(34)
    }

    /// UTF-8 text as the inside of a JSON string literal (no quotes).
    public static func appendEscaped(_ u: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        // Runs of bytes that need no escape are copied whole.
        var run = 0
        for i in 0..<u.count {
            let b = u[i]
            if b >= 32 && b != 34 && b != 92 && b != 127 { continue }
            if run < i { out.append(contentsOf: UnsafeBufferPointer(rebasing: u[run..<i])) }
            switch b {
            case 34: out.append(92); out.append(34)
            case 92: out.append(92); out.append(92)
            case 10: out.append(92); out.append(110)
            case 13: out.append(92); out.append(114)
            case 9: out.append(92); out.append(116)
            default:
                out.append(contentsOf: [92, 117, 48, 48, hexDigits[Int(b >> 4)], hexDigits[Int(b & 15)]])
            }
            run = i + 1
        }
        if run < u.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: u[run..<u.count])) }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}

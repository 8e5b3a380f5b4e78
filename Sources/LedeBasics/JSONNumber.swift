/// Numbers written per request exactly as `JSONEncoder` writes them (its shortest round-trip form, an integral
/// value without `.0`), so an assembled body equals a fully encoded one byte for byte.
public enum JSONNumber {
    public static func text(_ v: Double) -> String {
        // Distances and bearings are rounded to 0.1: such a value is the double nearest n/10, whose shortest
        // round-trip form is n/10 written in decimal — integer formatting gives the same text, faster.
        if v.sign == .plus, v < 1e12 {
            let n = Int((v * 10).rounded())
            if Double(n) / 10 == v { return n % 10 == 0 ? String(n / 10) : "\(n / 10).\(n % 10)" }
        }
        var s = v.description
        if s.hasSuffix(".0") { s.removeLast(2) }
        return s
    }
}

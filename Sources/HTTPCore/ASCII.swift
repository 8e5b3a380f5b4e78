/// ASCII case folding over bytes: HTTP field names, tokens and codings are case-insensitive ASCII.
public enum ASCII {
    @inlinable @inline(__always)
    public static func lower(_ b: UInt8) -> UInt8 { b >= 65 && b <= 90 ? b | 0x20 : b }

    /// ASCII case-insensitive equality (field names and tokens are ASCII).
    @inlinable @inline(__always)
    public static func caseInsensitiveEquals(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        for i in 0..<a.count where a[i] != b[i] {
            if lower(a[i]) != lower(b[i]) { return false }
        }
        return true
    }

    /// Whether `bytes`, case-folded, spell `lower` (written in lower case: letters, digits and `-`, as field names,
    /// schemes and options are). Eight bytes a test when there are eight: with bit 5 (0x20) set, a byte equals such a
    /// pattern byte only when it is that byte or, for a letter, its capital — or a control byte (below 0x20), and a word
    /// holding one of those is refused.
    @inlinable @inline(__always)
    public static func equalsLowercase(_ bytes: UnsafeBufferPointer<UInt8>, _ lower: StaticString) -> Bool {
        let n = bytes.count
        guard n == lower.utf8CodeUnitCount else { return false }
        let l = lower.utf8Start
        guard n >= 8, let base = bytes.baseAddress else {
            for i in 0..<n where ASCII.lower(bytes[i]) != l[i] { return false }
            return true
        }
        let a = UnsafeRawPointer(base), b = UnsafeRawPointer(l)
        @inline(__always) func same(_ at: Int) -> Bool {
            let w = a.loadUnaligned(fromByteOffset: at, as: UInt64.self)
            return w | (ByteScan.ones &* 0x20) == b.loadUnaligned(fromByteOffset: at, as: UInt64.self) && ByteScan.belowSpaceBytes(w) == 0
        }
        var at = 0
        while at + 8 <= n {
            if !same(at) { return false }
            at += 8
        }
        return at == n || same(n - 8)   // the last bytes, in a word that overlaps the one before
    }
}

/// A comma-separated list with weights (`Accept-Encoding`, `Accept-Language`), read over bytes with no allocation:
/// each member's first token and its q-value in thousandths — 1000 when absent, nil when malformed.
public enum WeightedList {
    /// Calls `body` for each non-empty member, in order, until it returns false.
    public static func forEach(_ value: String, _ body: (UnsafeBufferPointer<UInt8>, Int?) -> Bool) {
        var value = value
        value.withUTF8 { forEach(bytes: $0, body) }
    }

    /// The same over a value's bytes.
    public static func forEach(bytes u: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>, Int?) -> Bool) {
        var i = 0
        while i < u.count {
            // One member: OWS token *( OWS ";" OWS param ) OWS
            while i < u.count, u[i] == 32 || u[i] == 9 || u[i] == 44 { i += 1 }
            let start = i
            while i < u.count, u[i] != 44, u[i] != 59, u[i] != 32, u[i] != 9 { i += 1 }
            let token = UnsafeBufferPointer(rebasing: u[start..<i])
            var q: Int? = 1000
            while i < u.count, u[i] != 44 {
                guard u[i] == 59 else { i += 1; continue }
                i += 1
                while i < u.count, u[i] == 32 || u[i] == 9 { i += 1 }
                if i + 1 < u.count, ASCII.lower(u[i]) == 113, u[i + 1] == 61 {   // q=
                    i += 2
                    let valueStart = i
                    while i < u.count, u[i] != 44, u[i] != 59, u[i] != 32, u[i] != 9 { i += 1 }
                    q = qValue(UnsafeBufferPointer(rebasing: u[valueStart..<i]))
                }
            }
            if !token.isEmpty, !body(token, q) { return }
        }
    }

    /// RFC 9110 qvalue (`0`, `0.5`, `1.000`) in thousandths, at most 1000. A zero written with extra zeros is
    /// still zero; anything else that is not a qvalue is nil.
    static func qValue(_ v: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let first = v.first else { return nil }
        if first == 48 && v.allSatisfy({ $0 == 48 || $0 == 46 }) { return 0 }
        guard first == 48 || first == 49 else { return nil }
        var value = Int(first - 48) * 1000
        if v.count == 1 { return value }
        guard v[1] == 46, v.count <= 5 else { return nil }
        var scale = 100
        for d in v.dropFirst(2) {
            guard d >= 48 && d <= 57 else { return nil }
            value += Int(d - 48) * scale
            scale /= 10
        }
        return min(value, 1000)
    }
}

/// A comma-separated field value (`Connection`, `Transfer-Encoding`, `Vary`), read over its bytes with no array of parts:
/// the response parser's and the server's problem stage's one reader.
public enum FieldList {
    /// Whether a comma-separated value lists `token` (ASCII case-insensitive, spaces around items ignored).
    public static func lists(_ value: UnsafeBufferPointer<UInt8>, _ token: StaticString) -> Bool {
        var found = false
        forEachMember(value) { p in if !found, ASCII.equalsLowercase(p, token) { found = true } }
        return found
    }

    /// The same over a string's UTF-8.
    public static func lists(_ value: String, _ token: StaticString) -> Bool {
        var value = value
        return value.withUTF8 { lists($0, token) }
    }

    /// What a `Connection` value lists of the two options either direction acts on (RFC 9112 §9.3).
    public static func connectionOptions(_ value: UnsafeBufferPointer<UInt8>) -> (close: Bool, keepAlive: Bool) {
        // Nearly every field: one option alone, compared whole (no list walked).
        if value.count == 10, ASCII.equalsLowercase(value, "keep-alive") { return (false, true) }
        if value.count == 5, ASCII.equalsLowercase(value, "close") { return (true, false) }
        var close = false, keepAlive = false
        forEachMember(value) { m in
            if ASCII.equalsLowercase(m, "close") { close = true } else if ASCII.equalsLowercase(m, "keep-alive") { keepAlive = true }
        }
        return (close, keepAlive)
    }

    /// Each member of a comma-separated value, trimmed of spaces and tabs, empty ones included (no array of parts).
    public static func forEachMember<E: Error>(_ value: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) throws(E) -> Void) throws(E) {
        var start = 0, i = 0
        while true {
            if i == value.count || value[i] == UInt8(ascii: ",") {
                var a = start, b = i
                while a < b, value[a] == 32 || value[a] == 9 { a += 1 }
                while b > a, value[b - 1] == 32 || value[b - 1] == 9 { b -= 1 }
                try body(UnsafeBufferPointer(rebasing: value[a..<b]))
                if i == value.count { return }
                start = i + 1
            }
            i += 1
        }
    }
}

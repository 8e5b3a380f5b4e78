/// One HTTP exchange with the Wikimedia surface, as the live client would send it. The live transport puts
/// it on the network; the embedded transport answers it from bundled data. Both return the raw bytes, so
/// every answer goes through the same decoders in `WikimediaClient`.
public struct UpstreamRequest: Sendable, Equatable {
    public enum Method: String, Sendable { case get = "GET", post = "POST" }
    public var method: Method = .get
    public var lang: String
    /// Path below the language's base URL, starting with `/` (`/api/rest_v1/…` or `/w/api.php`).
    public var path: String
    /// Query items, in order, not yet encoded.
    public var query: [(String, String)] = []
    /// Form fields for POST (`application/x-www-form-urlencoded`).
    public var form: [(String, String)] = []
    /// The client's `Authorization` header, forwarded only on user-bound calls. Never logged or cached.
    public var authorization: String?
    /// Call kind, for metrics and cache policy (`feed`, `summary`, `related`, …).
    public var kind: String

    public init(method: Method = .get, lang: String, path: String, query: [(String, String)] = [], form: [(String, String)] = [],
                authorization: String? = nil, kind: String) {
        self.method = method; self.lang = lang; self.path = path; self.query = query; self.form = form
        self.authorization = authorization; self.kind = kind
    }

    public static func == (a: UpstreamRequest, b: UpstreamRequest) -> Bool {
        a.method == b.method && a.lang == b.lang && a.path == b.path && a.authorization == b.authorization && a.kind == b.kind
            && a.query.elementsEqual(b.query, by: ==) && a.form.elementsEqual(b.form, by: ==)
    }

    /// `path?query`, percent-encoded the way Wikimedia expects (`|` as `%7C`, space as `%20`).
    public var pathAndQuery: String {
        query.isEmpty ? path : path + "?" + UpstreamRequest.formEncode(query)
    }

    public static func formEncode(_ items: [(String, String)]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(items.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count + 2 } * 2)
        appendFormEncoded(items, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func appendFormEncoded(_ items: [(String, String)], to out: inout [UInt8]) {
        for (i, (k, v)) in items.enumerated() {
            if i > 0 { out.append(UInt8(ascii: "&")) }
            appendPercentEncoded(k, keep: ":", to: &out)
            out.append(UInt8(ascii: "="))
            appendPercentEncoded(v, keep: ":", to: &out)
        }
    }

    /// The base URL (`baseParts` joined by the language) followed by the path and the encoded query, written once
    /// (every upstream call builds its URL here).
    public func url(baseParts: [String]) -> String {
        // Written straight into the string's storage, sized for the worst case (every query byte escaped).
        let capacity = baseParts.reduce(lang.utf8.count * max(0, baseParts.count - 1)) { $0 + $1.utf8.count } + path.utf8.count + 1
            + query.reduce(0) { $0 + 3 * ($1.0.utf8.count + $1.1.utf8.count) + 2 }
        let low = UpstreamRequest.unreservedLow | 1 << UInt64(UInt8(ascii: ":")), high = UpstreamRequest.unreservedHigh
        return String(unsafeUninitializedCapacity: capacity) { buffer in
            var w = Writer(base: buffer.baseAddress!)
            for (i, part) in baseParts.enumerated() {
                if i > 0 { w.write(lang) }
                w.write(part)
            }
            w.write(path)
            for (i, (k, v)) in query.enumerated() {
                w.byte(i == 0 ? UInt8(ascii: "?") : UInt8(ascii: "&"))
                w.percentEncoded(k, low: low, high: high)
                w.byte(UInt8(ascii: "="))
                w.percentEncoded(v, low: low, high: high)
            }
            return w.count
        }
    }

    /// Bytes written into memory sized beforehand: no per-piece array bookkeeping.
    private struct Writer {
        let base: UnsafeMutablePointer<UInt8>
        var count = 0

        mutating func byte(_ b: UInt8) { base[count] = b; count += 1 }

        mutating func write(_ s: String) {
            var s = s
            s.withUTF8 { u in
                if let a = u.baseAddress { (base + count).initialize(from: a, count: u.count) }
                count += u.count
            }
        }

        /// `s` with every byte outside the kept set (bits of `low`: 0–63, `high`: 64–127) as `%HH`.
        mutating func percentEncoded(_ s: String, low: UInt64, high: UInt64) {
            var s = s
            s.withUTF8 { u in
                var run = 0
                for i in 0..<u.count {
                    let b = u[i]
                    if b < 64 ? low & (1 << UInt64(b)) != 0 : b < 128 && high & (1 << UInt64(b - 64)) != 0 { continue }
                    if run < i { (base + count).initialize(from: u.baseAddress! + run, count: i - run); count += i - run }
                    base[count] = UInt8(ascii: "%")
                    base[count + 1] = UpstreamRequest.hexDigit(b >> 4)
                    base[count + 2] = UpstreamRequest.hexDigit(b & 15)
                    count += 3
                    run = i + 1
                }
                if run < u.count { (base + count).initialize(from: u.baseAddress! + run, count: u.count - run); count += u.count - run }
            }
        }
    }

    /// Encodes everything but RFC 3986 unreserved characters (and keeps `:` readable for `morelike:`).
    public static func percentEncode(_ s: String, keep: String = ":") -> String {
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count * 3)
        appendPercentEncoded(s, keep: keep, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func appendPercentEncoded(_ s: String, keep: String, to out: inout [UInt8]) {
        // Over the contiguous UTF-8 of both strings (every upstream call encodes its query here). No reserveCapacity
        // here: it grows to exactly what is asked, so one per call reallocated the output every time; callers reserve.
        // Runs of bytes kept as they are go in with one append each (most names and values are one run); which bytes
        // are kept is a 128-bit table (RFC 3986 unreserved, plus the ASCII of `keep`).
        var kept = unreservedLow, keptHigh = unreservedHigh
        for b in keep.utf8 where b < 128 { if b < 64 { kept |= 1 << UInt64(b) } else { keptHigh |= 1 << UInt64(b - 64) } }
        var s = s
        s.withUTF8 { u in
            var run = 0
            for i in 0..<u.count {
                let b = u[i]
                if b < 64 ? kept & (1 << UInt64(b)) != 0 : b < 128 && keptHigh & (1 << UInt64(b - 64)) != 0 { continue }
                if run < i { out.append(contentsOf: UnsafeBufferPointer(rebasing: u[run..<i])) }
                out.append(UInt8(ascii: "%")); out.append(hexDigit(b >> 4)); out.append(hexDigit(b & 15))
                run = i + 1
            }
            if run < u.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: u[run...])) }
        }
    }

    /// RFC 3986 unreserved bytes as bits: 0–63 (`-`, `.`, digits) and 64–127 (letters, `_`, `~`).
    static let unreservedLow: UInt64 = {
        var m: UInt64 = 0
        for b in Array("-.0123456789".utf8) { m |= 1 << UInt64(b) }
        return m
    }()
    static let unreservedHigh: UInt64 = {
        var m: UInt64 = 0
        for b in Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_~".utf8) { m |= 1 << UInt64(b - 64) }
        return m
    }()

    @inline(__always) static func hexDigit(_ v: UInt8) -> UInt8 { v < 10 ? 48 + v : 55 + v }
}

public struct UpstreamResponse: Sendable {
    public var status: Int
    public var body: [UInt8]
    /// Response fields the client acts on, by lower-case name (`location`, `retry-after`).
    public var headers: [String: String]
    public init(status: Int, body: [UInt8], headers: [String: String] = [:]) { self.status = status; self.body = body; self.headers = headers }
}

public protocol UpstreamTransport: Sendable {
    /// Performs the exchange within `deadline` seconds. Throws `UpstreamError.timeout`, `.tooLarge`, or
    /// `.unavailable(status: 0)` when nothing usable came back; any HTTP status is returned, not thrown —
    /// redirects too: the client follows them itself.
    func send(_ request: UpstreamRequest, deadline: Double) async throws -> UpstreamResponse
    /// The absolute URL that `path` of a request for `lang` is relative to (`https://en.wikipedia.org`): what
    /// redirects are resolved against and what names the origin for back-off and the circuit breaker.
    func baseURL(lang: String) -> String
}

extension UpstreamTransport {
    public func baseURL(lang: String) -> String { "https://\(lang).wikipedia.org" }
}

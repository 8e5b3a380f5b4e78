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
        s.withUTF8 { u in
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
        out.append(34)
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}

/// RFC 9457 problem details. Every error Lede sends is one of these.
public struct Problem: Error, Sendable {
    public var status: Int
    public var title: String
    public var detail: String
    /// A short slug naming the kind of problem; becomes `type` as `urn:lede:problem:<slug>`.
    public var slug: String
    public var headers: HTTPHeaders
    /// Extra members, already JSON-encoded values keyed by name.
    public var extensions: [(String, String)]

    public init(status: Int, slug: String? = nil, title: String? = nil, detail: String,
                headers: HTTPHeaders = HTTPHeaders(), extensions: [(String, String)] = []) {
        self.status = status
        self.title = title ?? HTTPStatus.reason(status)
        self.detail = detail
        self.slug = slug ?? Problem.defaultSlug(status)
        self.headers = headers
        self.extensions = extensions
    }

    static func defaultSlug(_ status: Int) -> String {
        HTTPStatus.reason(status).lowercased().split(separator: " ").joined(separator: "-")
    }

    public var jsonBytes: [UInt8] {
        var out = [UInt8](); out.reserveCapacity(160 + detail.utf8.count)
        out.append(contentsOf: Array("{\"type\":".utf8)); JSONText.appendQuoted("urn:lede:problem:\(slug)", to: &out)
        out.append(contentsOf: Array(",\"title\":".utf8)); JSONText.appendQuoted(title, to: &out)
        out.append(contentsOf: Array(",\"status\":\(status),\"detail\":".utf8)); JSONText.appendQuoted(detail, to: &out)
        for (k, v) in extensions {
            out.append(44); JSONText.appendQuoted(k, to: &out); out.append(58); out.append(contentsOf: Array(v.utf8))
        }
        // The trace of the request it answers, when made while one is handled (an event stream's error event too).
        if let trace = TraceContext.current { Problem.appendTraceMember(trace, to: &out) }
        out.append(125)
        return out
    }

    static let traceKey = Array(",\"traceId\":\"".utf8)

    /// `,"traceId":"<32 hex digits>"`, the last member of a problem.
    static func appendTraceMember(_ trace: TraceContext, to out: inout [UInt8]) {
        out.append(contentsOf: traceKey); trace.appendTraceID(to: &out); out.append(34)
    }

    /// Whether an encoded problem already names its trace.
    static func namesTrace(_ body: [UInt8]) -> Bool {
        let key = traceKey
        guard body.count >= key.count + 34 else { return false }
        let start = body.count - key.count - 34
        return Array(body[start..<(start + key.count)]) == key
    }

    public var response: HTTPResponse {
        var h = headers
        h.set("Content-Type", "application/problem+json")
        h.set("Cache-Control", "no-store")
        return HTTPResponse(status: status, headers: h, body: .bytes(jsonBytes))
    }
}

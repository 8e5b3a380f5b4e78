
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

/// An error that knows the problem it is answered with (as Hummingbird's `HTTPResponseError` knows its status): a
/// handler throws it, and the server answers with that problem. The server knows no feature's errors; each error
/// type maps itself where it is defined or where the app gives it its words.
public protocol ProblemConvertible: Error {
    var problem: Problem { get }
}

extension Problem: ProblemConvertible {
    public var problem: Problem { self }

    /// The problem `error` is answered with: its own when it knows one, else a 500 that tells nothing of it.
    public static func answering(_ error: any Error) -> Problem {
        (error as? any ProblemConvertible)?.problem
            ?? Problem(status: 500, slug: "internal", detail: "Something went wrong while answering; it has been logged.")
    }
}

/// Words for a problem in the language of the request it answers: given to the server by the app (the server knows
/// no language). Asked only for answers that are problems.
public protocol ProblemLocalizer: Sendable {
    /// The title for `status` in the request's language, that language (for `Content-Language`), and whether a
    /// request field chose it (then `Vary: Accept-Language`); nil to leave the problem as written.
    func title(status: Int, for request: HTTPRequest) -> (title: String, language: String, byHeader: Bool)?
}

extension Problem {
    /// The problem body with its title replaced, when it carries the standard reason phrase for its status (a problem
    /// with a title of its own keeps it). Nil when the body is not a problem this server wrote.
    static func retitled(_ body: [UInt8], status: Int, title: String) -> [UInt8]? {
        // `{"type":"…","title":"<reason>",` as `jsonBytes` writes it.
        var standard = Array(",\"title\":".utf8)
        JSONText.appendQuoted(HTTPStatus.reason(status), to: &standard)
        standard.append(44)
        guard let start = body.firstRange(of: standard) else { return nil }
        var replacement = Array(",\"title\":".utf8)
        JSONText.appendQuoted(title, to: &replacement)
        replacement.append(44)
        var out = body
        out.replaceSubrange(start, with: replacement)
        return out
    }
}

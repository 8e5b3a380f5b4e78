
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
    /// `detail` as a message of the app's catalogue, for a `ProblemLocalizer` to give in the request's language (nil:
    /// `detail` is said once, as written — a wiki's own text, say, already in the reader's language).
    public var message: ProblemMessage?

    public init(status: Int, slug: String? = nil, title: String? = nil, detail: String, message: ProblemMessage? = nil,
                headers: HTTPHeaders = HTTPHeaders(), extensions: [(String, String)] = []) {
        self.status = status
        self.title = title ?? HTTPStatus.reason(status)
        self.detail = detail
        self.slug = slug ?? Problem.defaultSlug(status)
        self.headers = headers
        self.extensions = extensions
        self.message = message
    }

    static func defaultSlug(_ status: Int) -> String {
        HTTPStatus.reason(status).lowercased().split(separator: " ").joined(separator: "-")
    }

    public var jsonBytes: [UInt8] {
        var out = [UInt8](); out.reserveCapacity(160 + detail.utf8.count)
        out.append(contentsOf: Problem.typeKey); var slug = slug
        slug.withUTF8 { out.append(contentsOf: $0) }   // a slug is plain ASCII: nothing to escape
        out.append(34)
        out.append(contentsOf: Problem.titleKey); JSONText.appendQuoted(title, to: &out)
        out.append(contentsOf: Problem.statusKey); JSONText.appendInt(status, to: &out)
        out.append(contentsOf: Problem.detailKey); JSONText.appendQuoted(detail, to: &out)
        for (k, v) in extensions {
            out.append(44); JSONText.appendQuoted(k, to: &out); out.append(58); out.append(contentsOf: v.utf8)
        }
        // The trace of the request it answers, when made while one is handled (an event stream's error event too).
        if let trace = TraceContext.current { Problem.appendTraceMember(trace, to: &out) }
        out.append(125)
        return out
    }

    static let typeKey = Array("{\"type\":\"urn:lede:problem:".utf8)
    static let titleKey = Array(",\"title\":".utf8)
    static let statusKey = Array(",\"status\":".utf8)
    static let detailKey = Array(",\"detail\":".utf8)

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
        // Kept beside its bytes for the localizer: a problem answered in English is never encoded twice.
        return HTTPResponse(status: status, headers: h, body: .problem(ProblemRecord(self, bytes: jsonBytes)))
    }
}

/// A problem's `detail` as a message of the app's catalogue: its key and the values of its `$1`, `$2`… (numbers,
/// names and paths, which read the same in every language).
public struct ProblemMessage: Sendable, Equatable {
    public var key: String
    public var parameters: [String]
    public init(_ key: String, _ parameters: [String] = []) { self.key = key; self.parameters = parameters }
}

/// The problem a response was made from, carried with it to the connection that may give it in another language.
public final class ProblemRecord: Sendable {
    public let problem: Problem
    /// `problem.jsonBytes`, as encoded when the response was made.
    public let bytes: [UInt8]
    init(_ problem: Problem, bytes: [UInt8]) { self.problem = problem; self.bytes = bytes }
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
            ?? Problem(status: 500, slug: "internal", detail: "Something went wrong while answering; it has been logged.",
                       message: ProblemMessage("lede-problem-internal"))
    }
}

/// Words for a problem in the language of the request it answers: given to the server by the app (the server knows
/// no language). Asked only for answers made from a `Problem`.
public protocol ProblemLocalizer: Sendable {
    /// The problem's words in the request's interface language; nil to leave the problem as written.
    func words(for problem: Problem, request: HTTPRequest) -> ProblemWordsInLanguage?
}

/// A problem's title and detail in one language.
public struct ProblemWordsInLanguage: Sendable {
    /// The title, when the problem's is its status's standard one (a title of the problem's own stays).
    public var title: String?
    /// The detail, when the problem's `message` is in the catalogue.
    public var detail: String?
    /// The language they are in, for `Content-Language`.
    public var language: String
    /// Whether `Accept-Language` chose it (then `Vary: Accept-Language`).
    public var byHeader: Bool
    public init(title: String?, detail: String?, language: String, byHeader: Bool) {
        self.title = title; self.detail = detail; self.language = language; self.byHeader = byHeader
    }
}

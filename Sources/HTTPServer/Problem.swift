import HTTPCore

/// RFC 9457 problem details. Every error Lede sends is one of these.
public struct Problem: Error, Sendable {
    public var status: Int
    public var title: String
    public var detail: String
    /// A short slug naming the kind of problem; becomes `type` as the app's type base followed by it
    /// (`ServerConfiguration.Naming.problemTypeBase`).
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

    /// One of the server's own problems: its detail the message's English (`ServerMessage.english`), its message that
    /// case with the same parameters, for an app's catalogue to word in the reader's language.
    public init(status: Int, slug: String? = nil, _ message: ServerMessage, _ parameters: String..., headers: HTTPHeaders = HTTPHeaders()) {
        self.init(status: status, slug: slug, detail: message.english(parameters), message: ProblemMessage(server: message, parameters),
                  headers: headers)
    }

    static func defaultSlug(_ status: Int) -> String {
        HTTPStatus.reason(status).lowercased().split(separator: " ").joined(separator: "-")
    }

    /// The problem as JSON: `type` is `typeBase` followed by the slug; `trace`, when given, is its last member.
    public func jsonBytes(typeBase: String, trace: TraceContext? = nil) -> [UInt8] {
        var out = [UInt8](); out.reserveCapacity(160 + typeBase.utf8.count + detail.utf8.count)
        out.append(contentsOf: Problem.typeKey)
        var base = typeBase, slug = slug
        base.withUTF8 { JSONText.appendEscaped($0, to: &out) }
        slug.withUTF8 { out.append(contentsOf: $0) }   // a slug is plain ASCII: nothing to escape
        out.append(34)
        out.append(contentsOf: Problem.titleKey); JSONText.appendQuoted(title, to: &out)
        out.append(contentsOf: Problem.statusKey); JSONText.appendInt(status, to: &out)
        out.append(contentsOf: Problem.detailKey); JSONText.appendQuoted(detail, to: &out)
        for (k, v) in extensions {
            out.append(44); JSONText.appendQuoted(k, to: &out); out.append(58); out.append(contentsOf: v.utf8)
        }
        if let trace { Problem.appendTraceMember(trace, to: &out) }
        out.append(125)
        return out
    }

    static let typeKey = Array("{\"type\":\"".utf8)
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
        // Encoded once, by the connection that answers with it: with the app's type base, in the request's language,
        // naming the request's trace.
        return HTTPResponse(status: status, headers: h, body: .problem(ProblemRecord(self)))
    }
}

/// A problem's `detail` as a message of the app's catalogue: its key and the values of its `$1`, `$2`… (numbers,
/// names and paths, which read the same in every language).
public struct ProblemMessage: Sendable, Equatable {
    /// The app's catalogue key; for the server's own problems, the `ServerMessage`'s raw value.
    public var key: String
    public var parameters: [String]
    /// Which of the server's own problems this is, when the server made it: the app maps it to its catalogue (the
    /// server names no key of any app's).
    public var server: ServerMessage?
    public init(_ key: String, _ parameters: [String] = []) { self.key = key; self.parameters = parameters }
    public init(server: ServerMessage, _ parameters: [String] = []) {
        key = server.rawValue; self.parameters = parameters; self.server = server
    }
}

/// The problems the server itself makes. Each is worded in English here (`english`, the server's one table of its own
/// words); an app that answers in other languages maps every case to a message of its catalogue (an exhaustive switch,
/// so a new case is a compile error).
public enum ServerMessage: String, CaseIterable, Sendable {
    /// No route matches the path. `$1`: the path.
    case noRoute = "no-route"
    /// The server is shutting down (readiness).
    case draining
    /// The client's budget is spent. `$1`: seconds to wait; `$2`: the burst, in units; `$3`: the refill a second.
    case rateLimited = "rate-limited"
    /// The server holds as many streams as it allows. `$1`: that number.
    case streamsFull = "streams-full"
    /// A handler failed with an error that maps to no problem.
    case internalError = "internal"
    /// The path takes other methods. `$1`: the method; `$2`: the path; `$3`: the methods it takes.
    case methodNotAllowed = "method-not-allowed"
    /// A method the server implements nowhere. `$1`: the method.
    case methodNotImplemented = "method-not-implemented"
    /// A request body below the minimum rate. `$1`: the bytes a second it must average.
    case bodyTooSlow = "body-too-slow"
    /// The budget of request bodies (all, or the address's share) is full.
    case bodiesBusy = "bodies-busy"
    /// A handler lost its responder without answering.
    case noAnswer = "no-answer"
    /// A request's head did not arrive in time (answered before any request was read: no language to word it in).
    case requestTimeout = "request-timeout"
    /// The server is at its connection limit (written at accept, before any request is read).
    case overloaded

    /// The message in English, with its parameters (as the cases above name them).
    public func english(_ p: [String]) -> String {
        func at(_ i: Int) -> String { i < p.count ? p[i] : "" }
        switch self {
        case .noRoute: return "No route for \(at(0))."
        case .draining: return "The server is shutting down."
        case .rateLimited:
            // The count grouped by thousands, the noun agreeing with it.
            var count = at(1)
            for i in stride(from: count.count - 3, to: 0, by: -3) { count.insert(",", at: count.index(count.startIndex, offsetBy: i)) }
            return "Too many requests from this client; retry after \(at(0)) s. The limit is \(count) \(at(1) == "1" ? "unit" : "units") at once, refilled at \(at(2)) a second."
        case .streamsFull: return "The server has as many open streams as it allows (\(at(0))); retry shortly."
        case .internalError: return "Something went wrong while answering; it has been logged."
        case .methodNotAllowed: return "\(at(0)) is not allowed on \(at(1)); use \(at(2))."
        case .methodNotImplemented: return "The method \(at(0)) is not implemented by this server; it serves GET, HEAD and POST."
        case .bodyTooSlow: return "The request body arrived slower than \(at(0)) bytes a second."
        case .bodiesBusy: return "The server is receiving as many request bodies as it holds at once; retry shortly."
        case .noAnswer: return "The server's handler ended without an answer."
        case .requestTimeout: return "The request was not received in time."
        case .overloaded: return "The server is at its connection limit; retry shortly."
        }
    }
}

/// The problem a response was made from, carried with it to the connection, which encodes it (with the app's type
/// base, in the request's language, naming its trace).
public final class ProblemRecord: Sendable {
    public let problem: Problem
    init(_ problem: Problem) { self.problem = problem }
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
            ?? Problem(status: 500, slug: "internal", .internalError)
    }
}

/// The app's languages, given to the server (the server knows none): a request's languages, read once when it is
/// dispatched (asked only of a request with `Accept-Language` or a query: one with neither names none), and a problem's
/// words in them (asked only for answers made from a `Problem`).
public protocol ProblemLocalizer: Sendable {
    /// The languages `request` asks words in (`RequestLanguage.unnamed` when none).
    func language(of request: HTTPRequest) -> RequestLanguage
    /// The problem's words in the request's language; nil to leave the problem as written.
    func words(for problem: Problem, language: RequestLanguage) -> ProblemWordsInLanguage?
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

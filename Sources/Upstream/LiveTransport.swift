import EventLoops
import HTTPClient
import LedeBasics
import HTTPCore

/// Sends upstream requests over HTTP(S) with Lede's own `HTTPClient` (epoll loops, keep-alive pools, OpenSSL):
/// the base URL from the `{lang}` template, the contract's User-Agent, gzip asked for and inflated, one deadline
/// over connect, handshake, send and receive, and the response size cap enforced while bytes arrive.
/// Redirects come back as they are, with their `Location`: `UpstreamClient` resolves and follows them
/// (RFC 3986 §5) within the origin, the same way for every transport and every origin.
public final class LiveTransport: UpstreamTransport {
    public let template: String
    public let userAgent: String
    private let client: HTTPClient
    /// The template split at `{lang}`.
    private let templateParts: [String]
    /// The fields every call sends, in this order, before the per-call ones (`Authorization`, `Content-Type`).
    private let fixedFields: HTTPHeaders

    public static let version = "0.2.0"
    /// The field a user-bound call's credentials go in.
    static let credentialsField = "Authorization"

    /// `template`: e.g. `https://{lang}.wikipedia.org` or `http://127.0.0.1:9000/{lang}`.
    public init(template: String, contact: String, client: HTTPClient) {
        self.template = template
        self.userAgent = "Lede/\(LiveTransport.version) (\(contact))"
        self.client = client
        self.templateParts = template.components(separatedBy: "{lang}")
        fixedFields = ["User-Agent": userAgent, "Accept": "application/json", "Accept-Encoding": "gzip"]
    }

    /// A transport with a client of its own (one loop, the default pool size, the system trust store).
    public convenience init(template: String, contact: String, maxResponseBytes: Int = 8 << 20) throws {
        self.init(template: template, contact: contact, client: try HTTPClient(configuration: .init(maxResponseBytes: maxResponseBytes)))
    }

    public func baseURL(lang: String) -> String { templateParts.count == 1 ? template : templateParts.joined(separator: lang) }

    /// The request's URL parsed and its head (request line, `Host`, the fixed fields) written once.
    public func prepare(_ request: UpstreamRequest) -> UpstreamRequest {
        // A GET's credentials are its call field (named and checked once); another method sends them in its fields.
        guard let ready = try? PreparedRequest(method: request.method.rawValue, url: request.url(baseParts: templateParts), headers: fixedFields,
                                               callField: request.method == .get ? Self.credentialsField : nil)
        else { return request }   // an unusable URL fails when it is sent, as it would unprepared
        var r = request
        r.prepared = PreparedUpstreamRequest(owner: ObjectIdentifier(self), request: ready)
        return r
    }

    /// The per-call fields (`Authorization`, a form's `Content-Type`) and body of a request. A GET's one field, its
    /// credentials, comes as `fieldValue` (the prepared request's call field), with no list made for it (the badge's
    /// way); a POST's or DELETE's come in `fields`.
    /// With a request's trace current, its `traceparent` (a child: a new span id whose parent is the request's span) and
    /// `tracestate` go along: the client writes them into the request's bytes (`trace:`), no string made.
    private static func perCall(_ request: UpstreamRequest) -> (fields: HTTPHeaders, fieldValue: String?, body: [UInt8]) {
        var fields = HTTPHeaders()
        if let address = request.forwardedFor { fields.add("X-Forwarded-For", address) }
        if let variant = request.variant { fields.add("Accept-Language", variant) }
        if request.method == .get { return (fields, request.authorization, []) }
        if let auth = request.authorization { fields.add(Self.credentialsField, auth) }
        switch request.method {
        case .post where !request.json.isEmpty:
            fields.add("Content-Type", "application/json")
            return (fields, nil, request.json)
        case .post:
            fields.add("Content-Type", "application/x-www-form-urlencoded")
            return (fields, nil, request.encodedForm ?? Array(UpstreamRequest.formBody(request.form).utf8))
        default:
            return (fields, nil, [])   // DELETE: no body
        }
    }

    /// A request this transport prepared, sent from the call object (no task, no closure): the call is the client's own
    /// entry for it. On a server loop the call goes out and its answer is read, and `call` is answered, on that loop.
    /// Redirects come back as answers, as from `send`; a request it did not prepare is sent by `send` instead.
    public func start(_ call: UpstreamCall, deadline: Double) -> Bool {
        // The call's request read where it lies (a copy retained its box and each of its strings).
        guard let prepared = call.request.prepared, prepared.owner == ObjectIdentifier(self) else { return false }
        let (fields, fieldValue, body) = Self.perCall(call.request)
        client.execute(prepared.request, headers: fields, fieldValue: fieldValue, trace: call.trace, body: body, timeout: deadline, call: call)
        return true
    }

    /// The client's response as the rest of Lede reads it: status, body and its fields (the same list the client read
    /// them into: nothing copied, no string made until a field is asked for).
    static func answer(_ response: consuming ClientResponse) -> UpstreamResponse {
        UpstreamResponse(status: response.status, body: response.body, headers: response.head.headers)
    }

    public func send(_ request: UpstreamRequest, deadline: Double) async throws -> UpstreamResponse {
        let (perCall, fieldValue, body) = Self.perCall(request)
        // A request this transport prepared goes out from its written head; a redirect is sent unprepared.
        let ready = request.prepared.flatMap { $0.owner == ObjectIdentifier(self) ? $0.request : nil }
        guard deadline > 0 else { throw UpstreamError.timeout }
        let response: ClientResponse
        do {
            if let ready {
                response = try await client.execute(ready, headers: perCall, fieldValue: fieldValue, trace: TraceContext.current, body: body, timeout: deadline)
            } else {
                var fields = fixedFields
                for f in perCall.fields { fields.add(f.name, f.value) }
                if let fieldValue { fields.add(Self.credentialsField, fieldValue) }
                response = try await client.execute(ClientRequest(method: request.method.rawValue, url: request.url(baseParts: templateParts), headers: fields, body: body),
                                                    trace: TraceContext.current, timeout: deadline)
            }
        } catch {
            throw Self.upstreamError(error)
        }
        return Self.answer(response)
    }

    /// How a failed exchange reads to the rest of Lede.
    static func upstreamError(_ e: HTTPClientError) -> UpstreamError {
        switch e {
        case .timeout: return .timeout
        case .tooLarge: return .tooLarge
        case .malformed(let why): return .malformed(why)
        case .certificate(let why): return .untrusted(why)
        case .reset, .connect, .resolve, .tls, .invalidURL: return .unavailable(status: 0)
        }
    }
}

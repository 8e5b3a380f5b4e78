import HTTPCore
import Synchronization
/// A response a handler returns. The server adds `Date`, `Server`, `Content-Length`, `Connection`,
/// `X-Request-ID`, and negotiates gzip.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: Body

    public enum Body: Sendable {
        /// Bytes encoded for this response; compressed per request when large and the client accepts gzip.
        case bytes([UInt8])
        /// Bytes encoded once and shared between responses: compressed once, with strong ETags.
        case prepared(PreparedBody)
        /// Fragments encoded (and compressed) once, assembled per request with a few per-request bytes.
        case assembled(AssembledBody)
        /// A body produced over time (`HTTPResponse.stream`, `HTTPResponse.eventStream`). Boxed: the stream's fields
        /// (its type, its producer, its abandonment) would otherwise make every response as large as they are, and a
        /// response is copied a few times on every request.
        indirect case stream(ResponseStream)
        /// A problem (`Problem.response`), encoded by the connection that answers with it (the app's type base, the
        /// request's language and trace): a case of its own rather than a field, so a response stays as small as it was.
        case problem(ProblemRecord)
    }

    /// The problem the response was made from (`Problem.response`), if it was.
    public var problem: ProblemRecord? {
        if case .problem(let record) = body { return record }
        return nil
    }

    public init(status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), body: Body = .bytes([])) {
        self.status = status; self.headers = headers; self.body = body
    }

    public init(status: Int = 200, contentType: String, bytes: [UInt8], headers: HTTPHeaders = HTTPHeaders()) {
        var h = headers
        h.set("Content-Type", contentType)
        self.init(status: status, headers: h, body: .bytes(bytes))
    }

    public static func json(_ bytes: [UInt8], status: Int = 200, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json", bytes: bytes, headers: headers)
    }

    public static func text(_ string: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "text/plain; charset=utf-8", bytes: Array(string.utf8))
    }

    /// A body assembled from fragments (its Content-Type and ETag travel with it).
    public static func assembled(_ body: AssembledBody, status: Int = 200, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        HTTPResponse(status: status, headers: headers, body: .assembled(body))
    }

    /// A shared, pre-encoded body (its Content-Type travels with it).
    public static func prepared(_ body: PreparedBody, status: Int = 200, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        HTTPResponse(status: status, headers: headers, body: .prepared(body))
    }

    public var bodyCount: Int {
        switch body {
        case .bytes(let b): return b.count
        case .problem(let r): return r.problem.jsonBytes(typeBase: ServerConfiguration.Naming().problemTypeBase).count
        case .prepared(let p): return p.identity.count
        case .assembled(let a): return a.count
        case .stream: return 0
        }
    }
}

/// An immutable body encoded once: identity bytes, their gzip form (when worth it), a strong ETag for each
/// representation, and the fields that always travel with it (`Cache-Control`, `Vary`…). The response fields
/// of both representations are rendered here, once, so answering with it copies bytes and nothing else.
/// Safe to share between event loops.
public final class PreparedBody: Sendable {
    public let contentType: String
    public let identity: [UInt8]
    public let gzip: [UInt8]?
    public let etag: String
    public let gzipETag: String
    public let headers: HTTPHeaders
    /// The fields from after `Date` through `Content-Length`, per representation.
    let identityHead: [UInt8]
    let gzipHead: [UInt8]

    public init(contentType: String, bytes: [UInt8], headers: HTTPHeaders = HTTPHeaders()) {
        self.contentType = contentType
        self.identity = bytes
        self.headers = headers
        let hash = FNV1a.hash(bytes)
        let etag = "\"\(hash)\"", gzipETag = "\"\(hash)-gz\""
        self.etag = etag
        self.gzipETag = gzipETag
        let gzip: [UInt8]?
        if bytes.count > Compression.threshold, Compression.isCompressible(contentType), let z = Gzip.compress(bytes), z.count < bytes.count {
            gzip = z
        } else {
            gzip = nil
        }
        self.gzip = gzip
        (identityHead, gzipHead) = Self.heads(headers, contentType: contentType, identity: bytes, gzip: gzip, etag: etag, gzipETag: gzipETag)
    }

    /// The same body with one field set to `value` (another `Vary`, say), made once and kept with this one: asked
    /// again, the same sibling answers (no allocation a request).
    public func setting(_ name: String, _ value: String) -> PreparedBody {
        let key = name + "\u{0}" + value
        if let known = siblings.withLock({ $0[key] }) { return known }
        var fields = headers
        fields.set(name, value)
        let made = PreparedBody(self, headers: fields)
        return siblings.withLock { table in
            if let known = table[key] { return known }
            table[key] = made
            return made
        }
    }
    private let siblings = Mutex<[String: PreparedBody]>([:])

    /// The same representation (bytes, compression, ETags) under other response fields: no second compression.
    public init(_ other: PreparedBody, headers: HTTPHeaders) {
        contentType = other.contentType; identity = other.identity; gzip = other.gzip
        etag = other.etag; gzipETag = other.gzipETag
        self.headers = headers
        (identityHead, gzipHead) = Self.heads(headers, contentType: contentType, identity: identity, gzip: gzip, etag: etag, gzipETag: gzipETag)
    }

    /// The fields from after `Date` through `Content-Length` of each representation.
    private static func heads(_ headers: HTTPHeaders, contentType: String, identity: [UInt8], gzip: [UInt8]?, etag: String, gzipETag: String) -> ([UInt8], [UInt8]) {
        let summary = ResponseEncoder.FieldSummary(headers.fields)
        var plain: [UInt8] = [], zipped: [UInt8] = []
        ResponseEncoder.appendFields(headers.fields, summary: summary, status: 200, contentType: contentType, etag: etag, gzipped: false,
                                     varies: gzip != nil, bodyCount: identity.count, to: &plain)
        if let gzip {
            ResponseEncoder.appendFields(headers.fields, summary: summary, status: 200, contentType: contentType, etag: gzipETag, gzipped: true,
                                         varies: true, bodyCount: gzip.count, to: &zipped)
        }
        return (plain, zipped)
    }
}


public enum Compression {
    /// Bodies larger than this are gzip-compressed for clients that accept it.
    public static let threshold = 1024
    static let compressiblePrefixes: [[UInt8]] = ["text/", "application/json", "application/problem+json", "application/yaml",
                                                  "application/javascript"].map { Array($0.utf8) }
    static let jsonSuffix = Array("+json".utf8)

    /// Whether a body of this type is worth compressing; compared as bytes, case-insensitively, with no string made
    /// (every assembled body asks).
    public static func isCompressible(_ contentType: String?) -> Bool {
        guard var t = contentType else { return false }
        return t.withUTF8 { u in
            func matches(_ w: [UInt8], at start: Int) -> Bool {
                guard start >= 0, start + w.count <= u.count else { return false }
                for i in 0..<w.count where ASCII.lower(u[start + i]) != w[i] { return false }
                return true
            }
            return compressiblePrefixes.contains { matches($0, at: 0) } || matches(jsonSuffix, at: u.count - jsonSuffix.count)
        }
    }

    /// Whether `Accept-Encoding` admits gzip (a `q=0` excludes it; `*` admits it). Scans bytes, no allocation.
    public static func acceptsGzip(_ headers: HTTPHeaders) -> Bool {
        var gzip: Bool?
        var star = false
        headers.forEach(named: "Accept-Encoding") { value in
            WeightedList.forEach(bytes: value) { coding, q in
                let acceptable = q.map { $0 > 0 } ?? true   // a malformed weight does not refuse
                if ASCII.equalsLowercase(coding, "gzip") || ASCII.equalsLowercase(coding, "x-gzip") { gzip = acceptable }
                else if coding.count == 1, coding[0] == 42 { star = acceptable }
                return true
            }
        }
        return gzip ?? star
    }
}

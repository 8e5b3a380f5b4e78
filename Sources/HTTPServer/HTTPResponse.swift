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

    /// A shared, pre-encoded body (its Content-Type travels with it).
    public static func prepared(_ body: PreparedBody, status: Int = 200, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        HTTPResponse(status: status, headers: headers, body: .prepared(body))
    }

    public var bodyCount: Int {
        switch body {
        case .bytes(let b): return b.count
        case .prepared(let p): return p.identity.count
        }
    }
}

/// An immutable body encoded once: identity bytes, their gzip form (when worth it), and a strong ETag for
/// each representation. Safe to share between event loops.
public final class PreparedBody: Sendable {
    public let contentType: String
    public let identity: [UInt8]
    public let gzip: [UInt8]?
    public let etag: String
    public let gzipETag: String

    public init(contentType: String, bytes: [UInt8]) {
        self.contentType = contentType
        self.identity = bytes
        let hash = FNV1a.hash(bytes)
        self.etag = "\"\(hash)\""
        self.gzipETag = "\"\(hash)-gz\""
        if bytes.count > Compression.threshold, Compression.isCompressible(contentType), let z = Gzip.compress(bytes), z.count < bytes.count {
            self.gzip = z
        } else {
            self.gzip = nil
        }
    }
}

enum FNV1a {
    static func hash(_ bytes: [UInt8]) -> String {
        var h: UInt64 = 0xcbf29ce484222325
        for b in bytes { h ^= UInt64(b); h = h &* 0x100000001b3 }
        let s = String(h, radix: 16)
        return String(repeating: "0", count: 16 - s.count) + s
    }
}

public enum Compression {
    /// Bodies larger than this are gzip-compressed for clients that accept it.
    public static let threshold = 1024
    public static func isCompressible(_ contentType: String?) -> Bool {
        guard let t = contentType?.lowercasedASCII() else { return false }
        return t.hasPrefix("text/") || t.hasPrefix("application/json") || t.hasPrefix("application/problem+json")
            || t.hasPrefix("application/yaml") || t.hasPrefix("application/javascript") || t.hasSuffix("+json")
    }

    /// Whether `Accept-Encoding` admits gzip (a `q=0` excludes it; `*` admits it).
    public static func acceptsGzip(_ headers: HTTPHeaders) -> Bool {
        guard headers["Accept-Encoding"] != nil else { return false }
        var gzip: Bool?
        var star = false
        for member in headers.tokens("Accept-Encoding") {
            let parts = member.split(separator: ";").map { $0.trimmingOWS() }
            guard let coding = parts.first else { continue }
            var q = 1.0
            for p in parts.dropFirst() where p.hasPrefix("q=") { q = Double(p.dropFirst(2)) ?? 1.0 }
            if coding == "gzip" || coding == "x-gzip" { gzip = q > 0 } else if coding == "*" { star = q > 0 }
        }
        return gzip ?? star
    }
}

import Foundation
import HTTPServer
import LedeBasics
import Wikimedia
import HTTPCore
import Upstream

/// JSON responses and the one place where errors become problem responses.
enum Responses {
    /// `Vary` of a public answer whose edition (and so its text) may come from the request's `Accept-Language`: a shared
    /// cache in front keeps one copy per language as well as per encoding, and never serves German to an English reader.
    static let varyByLanguage = "Accept-Encoding, Accept-Language"

    static let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return e
    }()

    /// JSON with a strong ETag (the server derives the gzip variant's tag and answers If-None-Match with 304).
    static func json<T: Encodable>(_ value: T, cacheControl: String, status: Int = 200, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        json(bytes: [UInt8]((try? encoder.encode(value)) ?? Data("{}".utf8)), cacheControl: cacheControl, status: status, headers: headers)
    }

    /// Encoded JSON with its `Cache-Control` and a strong ETag.
    static func json(bytes: [UInt8], cacheControl: String, status: Int = 200, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        let etag = FNV1a.quotedTag(bytes)
        if headers.count == 0 {
            // The usual case, in one list (set() on an empty list grew it three times).
            return HTTPResponse(status: status, headers: HTTPHeaders([("Cache-Control", cacheControl), ("ETag", etag), ("Content-Type", "application/json")]),
                                body: .bytes(bytes))
        }
        var h = headers
        h.set("Cache-Control", cacheControl)
        h.set("ETag", etag)
        return .json(bytes, status: status, headers: h)
    }

    /// A JSON answer encoded once and kept as a prepared body (gzip compressed once, strong ETag per
    /// representation, `Cache-Control: public, max-age=<ttl>`) for `ttl` seconds. A fresh one is answered on the
    /// event loop; otherwise it is built off the loop, concurrent requests for one key sharing one build. Errors
    /// are not kept (a missing page briefly is, by the cache).
    /// `languageFixed`: the request named its language (`lang=`), so `Accept-Language` changed nothing of this answer:
    /// it goes out without it in `Vary` (the same entry, and a sibling of its body with the other field, kept with it).
    static func prepared<T: Encodable & Sendable>(_ cache: UpstreamCache, key: String, ttl: Int, headers: HTTPHeaders = HTTPHeaders(),
                                                  languageFixed: Bool = false,
                                                  make: @escaping @Sendable () async throws -> T) -> HandlerResult {
        if let warm = cache.cachedValue(key, as: PreparedBody.self) { return .response(.prepared(languageFixed ? fixing(warm) : warm)) }
        return async {
            let made = try await preparedValue(cache, key: key, ttl: ttl, headers: headers, make: make)
            return .prepared(languageFixed ? fixing(made) : made)
        }
    }

    /// `body` (made with `varyByLanguage`) for a request that named its language: `Vary` without `Accept-Language`.
    static func fixing(_ body: PreparedBody) -> PreparedBody {
        body.headers["Vary"] == varyByLanguage ? body.setting("Vary", varyByEncoding) : body
    }
    static let varyByEncoding = "Accept-Encoding"

    /// What `prepared` answers, made (or joined, when another request is making it) off the loop.
    static func preparedValue<T: Encodable & Sendable>(_ cache: UpstreamCache, key: String, ttl: Int, headers: HTTPHeaders = HTTPHeaders(),
                                                     make: @escaping @Sendable () async throws -> T) async throws -> PreparedBody {
        var fields = headers
        fields.set("Cache-Control", "public, max-age=\(ttl)")
        let kept = fields
        return try await cache.value(key, ttl: Double(ttl)) {
            let prepared = preparedBody(try await make(), headers: kept)   // upstream errors propagate
            return (prepared, cost(of: prepared))
        }
    }

    /// `value` encoded once, with its gzip representation and strong ETags.
    static func preparedBody<T: Encodable>(_ value: T, headers: HTTPHeaders) -> PreparedBody {
        PreparedBody(contentType: "application/json", bytes: [UInt8]((try? encoder.encode(value)) ?? Data("{}".utf8)), headers: headers)
    }

    /// What a prepared body weighs in a cache: both representations.
    static func cost(of body: PreparedBody) -> Int { body.identity.count + (body.gzip?.count ?? 0) }

    /// Prepares `value` and keeps it under `key` for `ttl` seconds (for answers built on the spot).
    static func keep<T: Encodable>(_ value: T, headers: HTTPHeaders, in cache: UpstreamCache, key: String, ttl: Double, staleFor: Double = 0) -> PreparedBody {
        let prepared = preparedBody(value, headers: headers)
        cache.insert(key, prepared, cost: cost(of: prepared), ttl: ttl, staleFor: staleFor)
        return prepared
    }

    /// Refuses a request body that is not `application/json` (415 with `Accept-Post`).
    static func requireJSON(_ request: HTTPRequest) throws {
        let type = (request.headers["Content-Type"] ?? "").split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard type == "application/json" else {
            throw Problem(status: 415, slug: "unsupported-media-type", .problemJsonRequired, headers: ["Accept-Post": "application/json"])
        }
    }

    /// The problem response an error is answered with (`Problem.answering`: the error's own problem, else a 500).
    static func problem(_ error: any Error) -> HTTPResponse { Problem.answering(error).response }

    /// Runs `work` off the loop; what it throws is answered with its problem (by the server, as for every handler).
    static func async(_ work: @escaping @Sendable () async throws -> HTTPResponse) -> HandlerResult { .async(work) }
}

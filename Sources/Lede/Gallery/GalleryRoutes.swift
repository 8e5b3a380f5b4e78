import HTTPCore
import HTTPServer
import LedeBasics
import Wikimedia
import Upstream

enum GalleryRoutes {
    struct ListBody: Encodable {
        var query: String
        var source: String
        var items: [GalleryImage]
        var message: String?
    }
    struct DetailBody: Encodable { var image: GalleryImage; var related: [GalleryImage] }

    static let imageHit: HTTPHeaders = ["Cache-Control": "public, max-age=60", "X-Cache": "HIT"]
    static let imagesHit: HTTPHeaders = ["Cache-Control": "public, max-age=60", "Vary": "Accept-Encoding, Accept-Language", "X-Cache": "HIT"]
    /// How long a prepared grid is served: a minute, like its max-age (the listing behind it is kept five; a grid
    /// prepared from a cached listing may be served up to a minute past that listing's own time).
    static let preparedTTL: Double = 60

    /// `responses`: prepared grids per keyword and message language, bounded LRU.
    static func register(on router: Router, reddit: RedditClient, responses: UpstreamCache) {
        router.get("/images") { ctx in
            let q: String
            q = try keyword(ctx.request)
            // The answer depends on the keyword and, for an empty grid, on the message's language: one prepared
            // answer per pair, served on the loop while the listing behind it is fresh.
            let message = RedditRules.noResultsMessage(words: ctx.language.words)
            let key = "images:\(q.lowercased())|\(message)"
            if let warm = responses.cachedValue(key, as: PreparedBody.self) { return .response(.prepared(warm)) }
            return Responses.async {
                let (items, source) = try await reddit.images(q)
                return answer(source, key: key, hit: Self.imagesHit, in: responses) { fromCache in
                    ListBody(query: q, source: fromCache ? "cache" : "api", items: items, message: items.isEmpty ? message : nil)
                }
            }
        }
        router.get("/images/{id}") { ctx in
            let q: String, id: String, exclude: Set<String>
            q = try keyword(ctx.request)
            id = ctx.parameter("id") ?? ""
            guard isPostID(id) else { throw bad(.problemGalleryImageId) }
            let items = try Animals.list(ctx.request.queryParameter("exclude"), name: "exclude")
            guard items.allSatisfy(isPostID) else { throw bad(.problemGalleryExclude, "exclude") }
            exclude = Set(items)
            // One prepared answer per keyword, image and exclusion set (bounded LRU, like the grids).
            let key = "image:\(q.lowercased()):\(id):\(exclude.sorted().joined(separator: ","))"
            if let warm = responses.cachedValue(key, as: PreparedBody.self) { return .response(.prepared(warm)) }
            return Responses.async {
                let (items, source) = try await reddit.images(q)
                guard let image = items.first(where: { $0.id == id }) else {
                    throw Problem(status: 404, slug: "not-found", .problemNoGalleryImage, id, q)
                }
                let body = DetailBody(image: image, related: RedditRules.related(items, selected: id, exclude: exclude))
                return answer(source, key: key, hit: Self.imageHit, in: responses) { _ in body }
            }
        }
    }

    /// The answer built from a listing lookup. Unless the listing was stale, the body as the next requests get it
    /// (`fromCache`) is kept prepared under `key`; a listing that came from the cache answers with that prepared
    /// body, a fresh one with its own body marked `X-Cache: MISS`.
    static func answer<T: Encodable & Sendable>(_ source: UpstreamCache.Source, key: String, hit: HTTPHeaders, in responses: UpstreamCache,
                                                body: (_ fromCache: Bool) -> T) -> HTTPResponse {
        let fromCache = source == .hit || source == .stale
        if source != .stale {
            let prepared = Responses.keep(body(true), headers: hit, in: responses, key: key, ttl: preparedTTL)
            if fromCache { return .prepared(prepared) }
        }
        var headers = hit
        headers.set("X-Cache", fromCache ? "HIT" : "MISS")
        return Responses.json(body(fromCache), cacheControl: "public, max-age=60", headers: headers)
    }

    static func keyword(_ r: HTTPRequest) throws -> String {
        guard let q = r.queryParameter("q"), RedditRules.isValidKeyword(q) else {
            throw bad(.problemGallerySubreddit, "q", "2", "21")
        }
        return q
    }

    static func isPostID(_ s: String) -> Bool { (1...20).contains(s.utf8.count) && s.utf8.allSatisfy { (48...57).contains($0) || (97...122).contains($0) || (65...90).contains($0) } }

    static func bad(_ key: MessageKey, _ parameters: String...) -> Problem { Problem(status: 400, slug: "invalid-gallery-request", key, parameters: parameters) }
}

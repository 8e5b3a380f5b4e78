import Foundation
import HTTPServer
import LedeBasics
import Wikimedia
import Upstream

/// `GET https://www.reddit.com/r/{KEYWORD}/top.json` — the parts rgallery reads.
struct RedditListing: Codable, Sendable, Equatable {
    struct Image: Codable, Sendable, Equatable { var url: String; var width: Int?; var height: Int? }
    struct PreviewImage: Codable, Sendable, Equatable { var source: Image?; var resolutions: [Image]? }
    struct Preview: Codable, Sendable, Equatable { var images: [PreviewImage]? }
    struct Post: Codable, Sendable, Equatable {
        var id: String
        var title: String?
        var author: String?
        var permalink: String?
        var url: String?
        var over18: Bool?
        var postHint: String?
        var isVideo: Bool?
        var isSelf: Bool?
        var preview: Preview?
        enum CodingKeys: String, CodingKey {
            case id, title, author, permalink, url, over18 = "over_18", postHint = "post_hint", isVideo = "is_video", isSelf = "is_self", preview
        }
    }
    struct Child: Codable, Sendable, Equatable { var kind: String?; var data: Post }
    struct Data: Codable, Sendable, Equatable { var children: [Child] }
    var kind: String?
    var data: Data
}

/// An image of the grid.
struct GalleryImage: Encodable, Sendable, Equatable {
    struct Ref: Encodable, Sendable, Equatable { var url: String; var width: Int?; var height: Int? }
    var id: String
    var title: String
    var thumbnail: Ref
    var image: Ref
    var author: String?
    var permalink: String?
}

enum RedditRules {
    /// Subreddit names: letters, digits, underscore, 2–21 characters.
    static func isValidKeyword(_ s: String) -> Bool {
        (2...21).contains(s.utf8.count) && s.utf8.allSatisfy { (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) || $0 == 95 }
    }

    /// Reddit escapes `&` in preview URLs as `&amp;`.
    static func unescape(_ url: String) -> String { url.replacingOccurrences(of: "&amp;", with: "&") }

    /// Image posts only (a preview image, an image hint or an image URL; never video or text), never NSFW.
    static func images(_ listing: RedditListing) -> [GalleryImage] {
        var seen = Set<String>()
        return listing.data.children.compactMap { child -> GalleryImage? in
            let p = child.data
            guard p.over18 != true, p.isVideo != true, p.isSelf != true, let first = p.preview?.images?.first, let source = first.source else { return nil }
            let lower = (p.url ?? "").lowercased()
            let looksLikeImage = p.postHint == "image" || [".jpg", ".jpeg", ".png", ".gif", ".webp"].contains { lower.hasSuffix($0) }
            guard looksLikeImage, seen.insert(p.id).inserted else { return nil }
            // The thumbnail: the preview resolution closest to 320 px wide, else the source.
            let thumb = (first.resolutions ?? []).min { abs(($0.width ?? 0) - 320) < abs(($1.width ?? 0) - 320) } ?? source
            return GalleryImage(id: p.id, title: p.title ?? "", thumbnail: .init(url: unescape(thumb.url), width: thumb.width, height: thumb.height),
                                image: .init(url: unescape(source.url), width: source.width, height: source.height),
                                author: p.author, permalink: p.permalink.map { $0.hasPrefix("/") ? "https://www.reddit.com" + $0 : $0 })
        }
    }

    /// The detail page's related grid: the other images of the search, never the selected one nor any excluded.
    static func related(_ images: [GalleryImage], selected: String, exclude: Set<String>) -> [GalleryImage] {
        images.filter { $0.id != selected && !exclude.contains($0.id) }
    }

    /// `No results` in the app's two languages (English, Italian), by the language of the reader's words (the
    /// request's, read once: `RequestContext.language.words`).
    static func noResultsMessage(words: String?) -> String {
        guard let words else { return "No results" }
        return words == "it" || words.hasPrefix("it-") ? "Nessun risultato" : "No results"
    }
}

/// Top posts of a subreddit, cached per keyword in the shared cache; fetched through the upstream guard.
final class RedditClient: Sendable {
    /// Reddit's origin, through the same guard, deadline and metrics as every Wikimedia call.
    let upstream: any GuardedUpstream
    let cache: UpstreamCache
    let ttl: Double = 300

    init(upstream: any GuardedUpstream, cache: UpstreamCache = UpstreamCache()) {
        self.upstream = upstream; self.cache = cache
    }

    static func request(_ keyword: String) -> UpstreamRequest {
        UpstreamRequest(lang: "reddit", path: "/r/\(keyword)/top.json", kind: .reddit)
    }

    /// The grid for `keyword` (already validated), and whether it came from the cache.
    func images(_ keyword: String) async throws -> ([GalleryImage], UpstreamCache.Source) {
        let key = "reddit:" + keyword.lowercased()
        return try await cache.lookup(key, ttl: ttl) { [self] in
            let response = try await upstream.answer(Self.request(keyword))
            switch response.status {
            case 200..<300: break
            case 403, 404: return ([], 16)   // a private, banned or missing subreddit: no results, not an error
            default: throw UpstreamError.unavailable(status: response.status)
            }
            guard let listing = try? UpstreamJSONDecoder().decode(RedditListing.self, from: response.body) else {
                throw UpstreamError.malformed("reddit: the answer is not a listing")
            }
            return (RedditRules.images(listing), response.body.count)
        }
    }
}

extension CallKind {
    /// Reddit's listings (the rgallery screen): a kind of their own for the metrics and a `Retry-After`.
    static let reddit = CallKind("reddit")
}

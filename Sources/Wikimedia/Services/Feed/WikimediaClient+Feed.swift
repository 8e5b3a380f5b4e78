import EventLoops
import Foundation
import LedeBasics
import Upstream

// The featured feed, page summaries, related and random pages, nearby and search: REST v1 and the Action API's
// `query` (docs/UPSTREAM.md, "Feed and pages").
extension WikimediaClient {
    static func featuredRequest(_ lang: LanguageCode, _ date: FeedDate) -> UpstreamRequest {
        UpstreamRequest(lang: lang, path: "/api/rest_v1/feed/featured/\(date.pathComponent)", kind: .feed)
    }

    static func summaryRequest(_ lang: LanguageCode, _ title: String) -> UpstreamRequest {
        UpstreamRequest(lang: lang, path: "/api/rest_v1/page/summary/" + UpstreamRequest.percentEncode(ArticleTitle.normalise(title), keep: ":"), kind: .summary)
    }

    static let pageProps: [(String, String)] = [("ppprop", "disambiguation"), ("piprop", "thumbnail"), ("pithumbsize", "320")]

    static func relatedRequest(_ lang: LanguageCode, _ title: String) -> UpstreamRequest {
        UpstreamRequest(lang: lang, path: "/w/api.php", query: [
            ("action", "query"), ("format", "json"), ("formatversion", "2"), ("generator", "search"),
            ("gsrsearch", "morelike:" + ArticleTitle.display(title)), ("gsrnamespace", "0"), ("gsrlimit", "20"),
            ("gsrqiprofile", "classic_noboostlinks"), ("prop", "pageprops|pageimages|description|extracts"),
        ] + pageProps + [("pilimit", "20"), ("exintro", "1"), ("explaintext", "1"), ("exlimit", "20")], kind: .related)
    }

    /// Random pages per call: the most the extracts module answers for at once.
    static let randomBatch = 20

    static func randomRequest(_ lang: LanguageCode) -> UpstreamRequest {
        UpstreamRequest(lang: lang, path: "/w/api.php", query: [
            ("action", "query"), ("format", "json"), ("formatversion", "2"), ("generator", "random"),
            ("grnnamespace", "0"), ("grnfilterredir", "nonredirects"), ("grnlimit", "\(randomBatch)"),
            ("prop", "pageprops|pageimages|description|extracts"),
        ] + pageProps + [("pilimit", "\(randomBatch)"), ("exintro", "1"), ("explaintext", "1"), ("exlimit", "\(randomBatch)")], kind: .random)
    }

    static func nearbyRequest(_ lang: LanguageCode, _ lat: Double, _ lon: Double, _ radius: Int) -> UpstreamRequest {
        let point = "\(Coordinates.format(lat))|\(Coordinates.format(lon))"
        return UpstreamRequest(lang: lang, path: "/w/api.php", query: [
            ("action", "query"), ("format", "json"), ("formatversion", "2"), ("generator", "geosearch"),
            ("ggscoord", point), ("ggsradius", "\(radius)"), ("ggslimit", "20"),
            ("prop", "coordinates|pageprops|pageimages|description"), ("ppprop", "disambiguation"),
            ("codistancefrompoint", point), ("colimit", "20"), ("piprop", "thumbnail"), ("pithumbsize", "320"), ("pilimit", "20"),
        ], kind: .nearby)
    }

    static func prefixSearchRequest(_ lang: LanguageCode, _ q: String) -> UpstreamRequest {
        UpstreamRequest(lang: lang, path: "/w/api.php", query: [
            ("action", "query"), ("format", "json"), ("formatversion", "2"), ("generator", "prefixsearch"),
            ("gpssearch", q), ("gpsnamespace", "0"), ("gpslimit", "24"), ("prop", "pageprops|pageimages|description"),
        ] + pageProps + [("pilimit", "24"), ("redirects", "1")], kind: .search)
    }

    static func fullTextSearchRequest(_ lang: LanguageCode, _ q: String) -> UpstreamRequest {
        UpstreamRequest(lang: lang, path: "/w/api.php", query: [
            ("action", "query"), ("format", "json"), ("formatversion", "2"), ("generator", "search"),
            ("gsrsearch", q), ("gsrnamespace", "0"), ("gsrwhat", "text"), ("gsrlimit", "24"),
            ("prop", "pageprops|pageimages|description"),
        ] + pageProps + [("pilimit", "24"), ("redirects", "1")], kind: .search)
    }


    public func featuredFeed(lang: LanguageCode, date: FeedDate) async throws -> FeaturedFeed {
        let req = Self.featuredRequest(lang, date)
        let ttl = date >= today() ? ttls.feedToday : ttls.feedPast
        return try await cache.value("feed:\(lang.tag):\(date)", ttl: ttl) { [self] in try await rest(req, as: FeaturedFeed.self) }
    }

    public func summary(lang: LanguageCode, title: String) async throws -> PageSummary {
        let req = Self.summaryRequest(lang, title)
        return try await cache.value("summary:\(lang.tag):\(ArticleTitle.normalise(title))", ttl: ttls.summary) { [self] in
            let (summary, size, redirected) = try await restFollowing(req, as: PageSummary.self)
            var s = summary
            // Reached through a redirect (`Bombay` → `Mumbai`): the card says where the reader came from.
            if redirected, ArticleTitle.normalise(title) != ArticleTitle.normalise(s.title) { s.redirectedFrom = ArticleTitle.display(title) }
            return (s, size)
        }
    }

    public func related(lang: LanguageCode, title: String) async throws -> QueryResult {
        let req = Self.relatedRequest(lang, title)
        return try await cache.value("related:\(lang.tag):\(ArticleTitle.normalise(title))", ttl: ttls.related) { [self] in try await pages(req) }
    }

    public func randomCandidates(lang: LanguageCode) async throws -> QueryResult {
        try await pages(Self.randomRequest(lang)).0
    }

    public func nearby(lang: LanguageCode, latitude: Double, longitude: Double, radiusMeters: Int) async throws -> QueryResult {
        let req = Self.nearbyRequest(lang, latitude, longitude, radiusMeters)
        return try await cache.value("nearby:\(lang.tag):\(req.pathAndQuery)", ttl: ttls.nearby) { [self] in try await pages(req) }
    }

    public func prefixSearch(lang: LanguageCode, query: String) async throws -> QueryResult {
        let req = Self.prefixSearchRequest(lang, query)
        return try await cache.value("prefix:\(lang.tag):\(query)", ttl: ttls.search) { [self] in try await pages(req) }
    }

    public func fullTextSearch(lang: LanguageCode, query: String) async throws -> QueryResult {
        let req = Self.fullTextSearchRequest(lang, query)
        return try await cache.value("fulltext:\(lang.tag):\(query)", ttl: ttls.search) { [self] in try await pages(req) }
    }
}

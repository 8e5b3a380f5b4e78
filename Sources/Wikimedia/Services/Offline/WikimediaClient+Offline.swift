import LedeBasics
import Foundation
import Upstream

// Saved articles offline (docs/UPSTREAM.md, "Offline"): which revision each saved page is at, in batches of 50 titles;
// for a page at a new revision, PCS's list of the mobile HTML's CSS and JavaScript and its media list, both pinned to
// that revision. Public and per revision: nothing user-bound, nothing cached here (Lede keeps the manifests).
extension WikimediaClient {
    /// The titles joined for `titles=`; past this many bytes the call is a form POST (a URL of 50 long titles
    /// percent-encoded would pass what proxies accept in a request line).
    static let revisionsGetLimit = 2_000

    static func revisionsRequest(_ lang: LanguageCode, _ titles: [String]) -> UpstreamRequest {
        let joined = titles.joined(separator: "|")
        let params = [
            ("action", "query"), ("format", "json"), ("formatversion", "2"), ("prop", "info|revisions"), ("rvprop", "ids|timestamp"),
            ("redirects", "1"), ("converttitles", "1"), ("curtimestamp", "1"), ("titles", joined),
        ]
        if joined.utf8.count > revisionsGetLimit {
            return UpstreamRequest(method: .post, lang: lang, path: "/w/api.php", form: params, kind: .revisions)
        }
        return UpstreamRequest(lang: lang, path: "/w/api.php", query: params, kind: .revisions)
    }

    static func pinnedPath(_ service: String, _ title: String, revision: Int?) -> String {
        var path = "/api/rest_v1/page/\(service)/" + UpstreamRequest.percentEncode(ArticleTitle.normalise(title), keep: ":")
        if let revision { path += "/\(revision)" }
        return path
    }

    public func pageRevisions(lang: LanguageCode, titles: [String]) async throws -> PageRevisions {
        let wanted = Array(titles.prefix(PageRevisions.maxPerCall))
        guard !wanted.isEmpty else { return PageRevisions(byTitle: [:], now: nil) }
        let req = Self.revisionsRequest(lang, wanted)
        let response = try await actionAnswer(req)
        let envelope = try decode(RevisionsEnvelope.self, response.body, kind: req.kind)
        if let e = envelope.error { try actionError(e.code, info: e.info, req, response) }
        // No `query` at all: none of the titles is a page the wiki can name (every one invalid).
        let byTitle = envelope.query?.resolve(wanted) ?? [:]
        return PageRevisions(byTitle: byTitle, now: envelope.curtimestamp)
    }

    public func offlineResources(lang: LanguageCode, title: String, revision: Int?) async throws -> [String] {
        let req = UpstreamRequest(lang: lang, path: Self.pinnedPath("mobile-html-offline-resources", title, revision: revision), kind: .offlineResources)
        return try await restFollowing(req, as: OfflineResourcesAnswer.self).0.urls
    }

    public func mediaList(lang: LanguageCode, title: String, revision: Int) async throws -> [MediaListItem] {
        let req = UpstreamRequest(lang: lang, path: Self.pinnedPath("media-list", title, revision: revision), kind: .media)
        return try await restFollowing(req, as: MediaListAnswer.self).0.items ?? []
    }
}

import EventLoops
import Foundation
import LedeBasics
import Upstream

// The article's media list (REST) and its files' sizes and credits (`prop=imageinfo`).
extension WikimediaClient {
    static func mediaRequest(_ lang: LanguageCode, _ title: String) -> UpstreamRequest {
        UpstreamRequest(lang: lang, path: "/api/rest_v1/page/media-list/" + UpstreamRequest.percentEncode(ArticleTitle.normalise(title), keep: ":"), kind: .media)
    }

    /// At most 50 files a call (the Action API's limit for `titles`).

    static func filesRequest(_ lang: LanguageCode, _ files: [String]) -> UpstreamRequest {
        UpstreamRequest(lang: lang, path: "/w/api.php", query: [
            ("action", "query"), ("titles", files.joined(separator: "|")), ("prop", "imageinfo"), ("iiprop", "url|size|extmetadata"),
            ("iiurlwidth", "640"), ("iiextmetadatafilter", "Artist|Credit|LicenseShortName|LicenseUrl|ImageDescription|AttributionRequired"),
            ("format", "json"), ("formatversion", "2"),
        ], kind: .files)
    }

    public func mediaList(lang: LanguageCode, title: String) async throws -> [MediaListItem] {
        let req = Self.mediaRequest(lang, title)
        return try await cache.value("media:\(lang.tag):\(ArticleTitle.normalise(title))", ttl: ttls.media) { [self] in
            let (answer, size, _) = try await restFollowing(req, as: MediaListAnswer.self)
            return (answer.items ?? [], size)
        }
    }

    public func fileInfo(lang: LanguageCode, files: [String]) async throws -> [String: FileInfo] {
        let wanted = Array(files.prefix(FileInfo.maxPerCall))
        guard !wanted.isEmpty else { return [:] }
        let req = Self.filesRequest(lang, wanted)
        return try await cache.value("files:\(lang.tag):\(wanted.joined(separator: "|"))", ttl: ttls.files) { [self] in
            let (q, size) = try await action(req, as: ImageInfoQuery.self)
            var out: [String: FileInfo] = [:]
            // Answers use spaces where the request had underscores (`normalized`): matched on the normalised title.
            let byKey = Dictionary((q.pages ?? []).map { (ArticleTitle.normalise($0.title), $0) }, uniquingKeysWith: { a, _ in a })
            for file in wanted { if let info = byKey[ArticleTitle.normalise(file)] { out[file] = info } }
            return (out, size)
        }
    }
}

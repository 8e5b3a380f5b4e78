import EventLoops
import Foundation
import LedeBasics
import Upstream

// Parsoid's HTML of a page (the references are read from it).
extension WikimediaClient {
    static func pageHTMLRequest(_ lang: LanguageCode, _ title: String) -> UpstreamRequest {
        // Its answer's `ETag` names the revision and render (`PageHTML.etag`).
        UpstreamRequest(lang: lang, path: "/w/rest.php/v1/page/" + UpstreamRequest.percentEncode(ArticleTitle.normalise(title), keep: ":") + "/html",
                        kind: .html)
    }

    /// Parsoid's HTML of the page (redirects followed) and its `ETag` (revision and render): bytes, never decoded as JSON
    /// and never kept here (the references built from them are). Larger than the body cap is `tooLarge`.
    public func pageHTML(lang: LanguageCode, title: String) async throws -> PageHTML {
        let (response, _) = try await exchange(Self.pageHTMLRequest(lang, title))
        switch response.status {
        case 200..<300: return PageHTML(bytes: response.body, etag: response.headers["etag"])
        case 404: throw UpstreamError.notFound("The page does not exist.")
        case 401, 403: throw UpstreamError.notAuthorised
        default: throw UpstreamError.unavailable(status: response.status)
        }
    }
}

import EventLoops
import Foundation
import LedeBasics
import Upstream

// The article screen's parts: contents (`action=parse`), language links and the edition's main page
// (`meta=siteinfo`).
extension WikimediaClient {
    static func contentsRequest(_ lang: LanguageCode, _ title: String) -> UpstreamRequest {
        UpstreamRequest(lang: lang, path: "/w/api.php", query: [
            ("action", "parse"), ("page", ArticleTitle.normalise(title)), ("prop", "sections|displaytitle"), ("redirects", "1"),
            ("format", "json"), ("formatversion", "2"),
        ], kind: .contents)
    }

    static func languagesRequest(_ lang: LanguageCode, _ title: String) -> UpstreamRequest {
        UpstreamRequest(lang: lang, path: "/w/api.php", query: [
            ("action", "query"), ("prop", "langlinks"), ("titles", ArticleTitle.normalise(title)), ("lllimit", "max"),
            ("llprop", "url|langname|autonym"), ("redirects", "1"), ("format", "json"), ("formatversion", "2"),
        ] + lang.convertTitles, kind: .languages)
    }

    static func siteInfoRequest(_ lang: LanguageCode) -> UpstreamRequest {
        UpstreamRequest(lang: lang, path: "/w/api.php", query: [
            ("action", "query"), ("meta", "siteinfo"), ("siprop", "general"), ("format", "json"), ("formatversion", "2"),
        ], kind: .siteinfo)
    }

    public func articleContents(lang: LanguageCode, title: String) async throws -> ArticleContents {
        let req = Self.contentsRequest(lang, title)
        return try await cache.value("contents:\(lang.tag):\(ArticleTitle.normalise(title))", ttl: ttls.contents) { [self] in
            let response = try await actionAnswer(req)
            let answer = try decode(ParseAnswer.self, response.body, kind: req.kind)
            if let e = answer.error {
                if e.code == "missingtitle" || e.code == "invalidtitle" || e.code == "nosuchpageid" { throw UpstreamError.notFound("The page does not exist.") }
                try actionError(e.code, info: e.info, req, response)
            }
            guard let parse = answer.parse, let title = parse.title else { throw UpstreamError.malformed("contents: no parse in the answer") }
            return (ArticleContents(title: title, displayTitle: parse.displaytitle, sections: parse.sections ?? []), response.body.count)
        }
    }

    public func languageLinks(lang: LanguageCode, title: String) async throws -> [LanguageLink] {
        let req = Self.languagesRequest(lang, title)
        return try await cache.value("languages:\(lang.tag):\(ArticleTitle.normalise(title))", ttl: ttls.languages) { [self] in
            let (q, size) = try await action(req, as: LangLinksQuery.self)
            guard let page = q.pages?.first else { throw UpstreamError.malformed("languages: no page in the answer") }
            if page.missing || page.invalid { throw UpstreamError.notFound("The page does not exist.") }
            return (page.langlinks ?? [], size)
        }
    }

    /// Asked once per edition a day (an edition's main page changes about never).
    public func mainPage(lang: LanguageCode) async throws -> String {
        guard let main = try await siteGeneral(lang: lang).mainpage, !main.isEmpty else { throw UpstreamError.malformed("siteinfo: no general.mainpage") }
        return main
    }

    /// The edition's `meta=siteinfo` general facts, kept a day.
    func siteGeneral(lang: LanguageCode) async throws -> SiteInfoQuery.General {
        let req = Self.siteInfoRequest(lang)
        return try await cache.value("siteinfo:\(lang.tag)", ttl: 86_400) { [self] in
            let (q, size) = try await action(req, as: SiteInfoQuery.self)
            guard let general = q.general else { throw UpstreamError.malformed("siteinfo: no general") }
            return (general, size)
        }
    }
}

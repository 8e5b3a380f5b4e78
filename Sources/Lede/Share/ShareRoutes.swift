import HTTPServer
import LedeBasics
import Wikimedia
import HTTPCore
import Upstream

/// `GET /share/{title}.png` (the card: PNG, or `format=jpeg` for link previews) and `GET /share/{title}` (a small HTML
/// page whose `og:*` tags name the card: the URL the app's share sheet passes along as text).
enum ShareRoutes {
    static func register(on router: Router, service: ShareService, publicURL: String?) {
        router.add("GET", "/share/{title}", cost: Costs.render) { ctx in
            let raw = ctx.parameter("title") ?? ""
            let lang: LanguageCode, selection: String?
            lang = try LanguageCode.resolve(ctx.request)
            selection = try ctx.request.queryParameter("text").map { raw in
                guard let s = ShareCard.selection(raw) else {
                    throw Problem(status: 400, slug: "invalid-parameter", .problemParameterTooLong, "text", String(ShareCard.maxTextCharacters),
                                  extensions: [("parameter", JSONText.quote("text"))])
                }
                return s
            }
            if raw.hasSuffix(".png") {
                let title: String, scale: Int, format: ShareService.Format
                title = try Parameters.articleTitle(String(raw.dropLast(4)))
                scale = try Parameters.int(ctx.request, "scale", default: 2, range: ShareCard.scales)
                switch ctx.request.queryParameter("format") ?? "png" {
                case "png": format = .png
                case "jpeg": format = .jpeg
                default: throw Problem(status: 400, slug: "invalid-parameter", .problemParameterChoice, "format", "png", "jpeg", extensions: [("parameter", JSONText.quote("format"))])
                }
                let named = LanguageCode.named(by: ctx.request)
                return Responses.async {
                    let card = try await service.card(lang: lang, title: title, selection: selection, scale: scale, format: format)
                    return .prepared(named ? Responses.fixing(card) : card)
                }
            }
            let title: String
            title = try Parameters.articleTitle(raw)
            let base = publicURL ?? origin(ctx)
            // Without --public-url the page names the origin the request came to, which a trusted proxy's forwarding
            // headers change (from any other client they are not read, and change nothing).
            // Accept-Language chose the edition only when `lang=` did not.
            let language = LanguageCode.named(by: ctx.request) ? Responses.varyByEncoding : Responses.varyByLanguage
            let vary = publicURL == nil && ctx.viaTrustedProxy ? language + ", X-Forwarded-Proto, X-Forwarded-Host" : language
            return Responses.async {
                let summary = try await service.api.summary(lang: lang, title: title)
                let card = Card(summary: summary, lang: lang)
                let text = ShareService.text(selection: selection, summary: summary, lang: lang)
                let html = page(card: card, text: text, selection: selection, lang: lang, base: base)
                var headers: HTTPHeaders = ["Cache-Control": "public, max-age=3600", "Content-Language": lang.bcp47, "Vary": vary]
                for (name, value) in pageSecurity(base: base) { headers.add(name, value) }
                return .prepared(PreparedBody(contentType: "text/html; charset=utf-8", bytes: Array(html.utf8), headers: headers))
            }
        }
    }

    /// The page as a hostile page would be: no script at all, nothing loaded but the card (from `base`, the origin the
    /// page names it at) and the page's own inline style, no form, no base URL, never framed, no referrer sent across
    /// origins. (`X-Content-Type-Options: nosniff` is on every answer.)
    static func pageSecurity(base: String) -> [(String, String)] {
        [("Content-Security-Policy", "default-src 'none'; img-src 'self' \(base); style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
         ("Referrer-Policy", "strict-origin-when-cross-origin"),
         ("X-Frame-Options", "DENY")]
    }

    /// The article's link as the page shows it: an `https` URL of the article's own Wikipedia (its edition's host,
    /// desktop or mobile, no user or port) as upstream named it; else the one Lede builds from the edition and title.
    static func articleLink(_ card: Card, lang: LanguageCode) -> String {
        let u = URIReference(card.url)
        guard u.scheme?.lowercased() == "https", let host = u.authority?.lowercased(),
              host == "\(lang.code).wikipedia.org" || host == "\(lang.code).m.wikipedia.org",
              !card.url.utf8.contains(where: { $0 < 33 || $0 == 127 }) else {
            return Card.articleURL(lang: lang.code, title: card.title)
        }
        return card.url
    }

    /// `http(s)://host` this request came to. `X-Forwarded-Proto: https` and `X-Forwarded-Host` count only from a
    /// trusted proxy (`--trusted-proxies`): any client can send them. A host that is not a plain host[:port] is
    /// `localhost`.
    static func origin(_ ctx: RequestContext) -> String {
        let scheme = ctx.forwarded("X-Forwarded-Proto")?.lowercased() == "https" ? "https" : "http"
        let host = ctx.forwarded("X-Forwarded-Host") ?? ctx.request.headers["Host"] ?? ""
        return "\(scheme)://\(isPlainHost(host) ? host : "localhost")"
    }

    static func isPlainHost(_ host: String) -> Bool {
        !host.isEmpty && host.utf8.count <= 255 && host.utf8.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2E || b == 0x2D || b == 0x3A || b == 0x5B || b == 0x5D
        }
    }

    /// The page's look, inline (no resource from elsewhere, no script): the system font stack, one column from 320 px
    /// to a desktop's width with nothing wider than the screen, a dark scheme, `border-inline-start` so a right-to-left
    /// page mirrors itself. Every colour pair reaches 4.5:1 (the link's button: white on #36c 5.4:1; dark, #101418 on
    /// #88a3e8 7.4:1; the muted text 7.1:1 and 7.7:1).
    static let pageStyle = """
    :root{color-scheme:light dark;--bg:#fff;--fg:#202122;--muted:#54595d;--rule:#c8ccd1;--link:#36c;--on-link:#fff}\
    @media (prefers-color-scheme:dark){:root{--bg:#101418;--fg:#eaecf0;--muted:#a2a9b1;--rule:#54595d;--link:#88a3e8;--on-link:#101418}}\
    *{box-sizing:border-box}\
    body{margin:0;background:var(--bg);color:var(--fg);font:1rem/1.5 -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,"Noto Sans",\
    "Helvetica Neue",Arial,sans-serif}\
    main{max-width:40rem;margin:0 auto;padding:1.25rem 1rem 2rem}\
    .wordmark,h1{font-family:"Linux Libertine",Georgia,"Times New Roman",serif;font-weight:normal}\
    .wordmark{font-size:1.25rem;margin:0 0 1rem}\
    img{display:block;max-width:100%;height:auto;border:1px solid var(--rule);border-radius:.5rem}\
    h1{font-size:1.75rem;line-height:1.25;margin:1.25rem 0 .25rem;overflow-wrap:anywhere}\
    .description{color:var(--muted);margin:0 0 1rem}\
    blockquote{margin:0 0 1.5rem;padding:0 1rem;border-inline-start:4px solid var(--rule);font-size:1.125rem;overflow-wrap:anywhere}\
    a.read{display:inline-block;padding:.75rem 1.25rem;border-radius:.5rem;background:var(--link);color:var(--on-link);font-weight:600;\
    text-decoration:none}\
    a.read:focus-visible{outline:3px solid var(--fg);outline-offset:2px}\
    footer{margin-top:2rem;color:var(--muted);font-size:.875rem}
    """

    /// The link preview page: every value HTML-escaped, the card's URL with everything it depends on.
    static func page(card: Card, text: String, selection: String?, lang: LanguageCode, base: String) -> String {
        let path = UpstreamRequest.percentEncode(ArticleTitle.normalise(card.title), keep: ":()")
        var query = "lang=\(lang.tag)&format=jpeg"
        if let selection { query += "&text=" + UpstreamRequest.percentEncode(selection, keep: "") }
        let image = "\(base)/share/\(path).png?\(query)"
        let dir = Card.rtl.contains(lang.code) ? "rtl" : "ltr"
        // Every text shown or put in a tag without bidirectional controls and invisible format characters.
        func e(_ s: String) -> String { HTMLText.escape(ShareCard.visible(s)) }
        let link = articleLink(card, lang: lang)
        return """
        <!DOCTYPE html>
        <html lang="\(e(lang.bcp47))" dir="\(dir)">
        <head>
        <meta charset="utf-8">
        <title>\(e(Messages.shared.text(.sharePageTitle, in: lang.tag, card.title)))</title>
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta property="og:type" content="article">
        <meta property="og:site_name" content="Wikipedia">
        <meta property="og:title" content="\(e(card.title))">
        <meta property="og:description" content="\(e(text))">
        <meta property="og:url" content="\(e(link))">
        <meta property="og:image" content="\(e(image))">
        <meta property="og:image:type" content="image/jpeg">
        <meta property="og:image:width" content="\(ShareCard.widthPoints * 2)">
        <meta property="og:image:height" content="\(ShareCard.heightPoints * 2)">
        <meta property="og:image:alt" content="\(e(text))">
        <meta name="twitter:card" content="summary_large_image">
        <meta name="twitter:title" content="\(e(card.title))">
        <meta name="twitter:description" content="\(e(text))">
        <meta name="twitter:image" content="\(e(image))">
        <link rel="canonical" href="\(e(link))">
        <style>\(pageStyle)</style>
        </head>
        <body>
        <main>
        <p class="wordmark">Wikipedia</p>
        <img src="\(e(image))" alt="\(e(text))" width="\(ShareCard.widthPoints * 2)" height="\(ShareCard.heightPoints * 2)">
        <h1>\(e(card.title))</h1>
        \(card.description.map { "<p class=\"description\">\(e($0))</p>" } ?? "")
        <blockquote>\(e(text))</blockquote>
        <p><a class="read" href="\(e(link))">\(e(Messages.shared.text(.shareReadOn, in: lang.tag)))</a></p>
        <footer>\(e(Messages.shared.text(.shareTextLicence, in: lang.tag, "CC BY-SA 4.0")))</footer>
        </main>
        </body>
        </html>

        """
    }
}

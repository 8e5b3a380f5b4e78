import Foundation
import HTTPServer
import LedeBasics
import Wikimedia
import HTTPCore
import Upstream

/// The article screen's rules: values in, values out, tested without sockets.
extension ArticleScreen {

    /// The table of contents in document order: plain-text titles, numbers as upstream counts them.
    static func sections(_ contents: ArticleContents) -> [Section] {
        contents.sections.enumerated().map { i, s in
            Section(id: s.index.flatMap { Int($0) } ?? i + 1, level: s.tocLevel, number: s.number, title: HTMLText.plain(s.line), anchor: s.anchor)
        }
    }

    /// The language picker: the user's `Accept-Language` editions first (in their order), then the rest sorted by
    /// autonym (case-insensitively, ties by code). Links to unknown editions are dropped; a missing autonym falls
    /// back to the English name, then the code.
    static func editions(_ links: [LanguageLink], preferred: [String]) -> [Edition] {
        let editions = links.compactMap { l -> Edition? in
            guard let code = LanguageCode(l.lang)?.code else { return nil }
            return Edition(lang: code, title: l.title, autonym: l.autonym ?? l.langname ?? code,
                           url: l.url ?? Card.articleURL(lang: code, title: l.title))
        }
        var seen = Set<String>()
        let unique = editions.filter { seen.insert($0.lang).inserted }
        let first = preferred.compactMap { p in unique.first { $0.lang == p } }
        let rest = unique.filter { !preferred.contains($0.lang) }.sorted {
            let a = $0.autonym.lowercased(), b = $1.autonym.lowercased()
            return a != b ? a < b : $0.lang < $1.lang
        }
        return first + rest
    }

    /// The files a gallery shows (`showInGallery`), in page order.
    static func galleryFiles(_ items: [MediaListItem]) -> [MediaListItem] { items.filter { $0.showInGallery } }

    /// Seed 000, Image Gallery: images smaller than 30×30 are not shown — judged by the file's real size (imageinfo's
    /// width and height), not by its thumbnail. A 30×30 image stays; audio, video and files of unknown size stay.
    static let minimumImageSide = 30
    static func isLargeEnough(_ item: MediaListItem, _ info: FileInfo?) -> Bool {
        guard item.type == "image", let w = info?.width, let h = info?.height else { return true }
        return w >= minimumImageSide && h >= minimumImageSide
    }

    /// A gallery entry: the media-list item with its file's sizes and credits (HTML reduced to text).
    static func media(_ item: MediaListItem, _ info: FileInfo?) -> Media {
        let m = info?.metadata ?? [:]
        func text(_ key: String) -> String? { m[key].map(HTMLText.plain).flatMap { $0.isEmpty ? nil : $0 } }
        var thumbnail: Media.Size?
        if let t = info?.thumbURL { thumbnail = Media.Size(source: t, width: info?.thumbWidth, height: info?.thumbHeight) } else if let src = item.src {
            thumbnail = Media.Size(source: src.hasPrefix("//") ? "https:" + src : src, width: nil, height: nil)
        }
        let original = info?.url.map { Media.Size(source: $0, width: info?.width, height: info?.height) }
        let license = text("LicenseShortName").map { Media.License(name: $0, url: m["LicenseUrl"].map(HTMLText.plain).flatMap { $0.isEmpty ? nil : $0 }) }
        let attribution = m["AttributionRequired"].map { HTMLText.plain($0).lowercased() == "true" }
        let caption = item.captionText.flatMap { $0.isEmpty ? nil : $0 } ?? item.captionHTML.map(HTMLText.plain).flatMap { $0.isEmpty ? nil : $0 }
        return Media(title: item.title, type: item.type, caption: caption, thumbnail: thumbnail, original: original, artist: text("Artist"),
                     credit: text("Credit"), license: license, attributionRequired: attribution, description: text("ImageDescription"))
    }

    static func urls(lang: String, title: String) -> URLs {
        let path = UpstreamRequest.percentEncode(ArticleTitle.normalise(title), keep: ":()")
        return URLs(mobileHtml: "https://\(lang).wikipedia.org/api/rest_v1/page/mobile-html/\(path)", desktop: "https://\(lang).wikipedia.org/wiki/\(path)")
    }
}

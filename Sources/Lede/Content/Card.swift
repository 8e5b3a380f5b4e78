import Foundation
import LedeBasics
import Wikimedia
import Upstream

/// The preview card: one shape wherever an article appears (summary, feed, related, random, nearby, search).
/// Extracts are always cleaned of pronunciation parentheticals.
struct Card: Sendable, Equatable {
    struct Image: Sendable, Equatable, Encodable { var source: String; var width: Int?; var height: Int? }
    struct Point: Sendable, Equatable, Encodable { var lat: Double; var lon: Double }

    var title: String
    var displayTitle: String
    var description: String?
    var extract: String
    var extractHtml: String
    var thumbnail: Image?
    var originalImage: Image?
    var coordinates: Point?
    var type: String
    var url: String
    var lang: String
    var dir: String
    // Context-specific extras (encoded only when set).
    var views: Int?
    var rank: Int?
    var distanceMeters: Double?
    var bearingDegrees: Double?
    var redirectedFrom: String?
    var isDisambiguation: Bool?

    static let rtl: Set<String> = ["ar", "arc", "arz", "azb", "ckb", "dv", "fa", "glk", "he", "ks", "lrc", "mzn", "nqo", "pnb", "ps", "sd", "ug", "ur", "yi"]

    static func articleURL(lang: String, title: String) -> String {
        "https://\(lang).wikipedia.org/wiki/" + UpstreamRequest.percentEncode(ArticleTitle.normalise(title), keep: ":()',!*$@;")
    }

    /// From a REST summary.
    init(summary s: PageSummary, lang: LanguageCode) {
        let title = s.titles?.normalized ?? ArticleTitle.display(s.title)
        self.title = title
        displayTitle = s.displaytitle ?? title
        description = s.description
        let text = Card.leadingParagraphs(s.extract ?? "")
        extract = PronunciationStripper.clean(text)
        extractHtml = PronunciationStripper.cleanHTML(s.extractHTML.flatMap { Card.leadingParagraphsHTML($0) } ?? Card.paragraph(text))
        thumbnail = s.thumbnail.map { Image(source: $0.source, width: $0.width, height: $0.height) }
        originalImage = s.originalimage.map { Image(source: $0.source, width: $0.width, height: $0.height) }
        coordinates = s.coordinates.map { Point(lat: $0.lat, lon: $0.lon) }
        type = s.type ?? "standard"
        url = s.contentURLs?.desktop?.page ?? Card.articleURL(lang: s.lang ?? lang.code, title: title)
        self.lang = s.lang ?? lang.code
        dir = s.dir ?? (Card.rtl.contains(lang.code) ? "rtl" : "ltr")
        views = s.views; rank = s.rank
        redirectedFrom = s.redirectedFrom
    }

    /// From an Action API page (related, random, nearby, search).
    init(page p: QueryPage, lang: LanguageCode) {
        title = p.title
        displayTitle = p.title
        // An empty description is no description (upstream sends `""` for some disambiguation pages).
        description = p.description.flatMap { $0.isEmpty ? nil : $0 } ?? (p.isDisambiguation ? Card.disambiguationDescription : nil)
        extract = PronunciationStripper.clean(Card.leadingParagraphs(p.extract ?? ""))
        extractHtml = extract.isEmpty ? "" : Card.paragraph(extract)
        thumbnail = p.thumbnail.map { Image(source: $0.source, width: $0.width, height: $0.height) }
        originalImage = nil
        coordinates = p.coordinates?.first.map { Point(lat: $0.lat, lon: $0.lon) }
        type = p.isDisambiguation ? "disambiguation" : "standard"
        url = Card.articleURL(lang: lang.code, title: p.title)
        self.lang = lang.code
        dir = Card.rtl.contains(lang.code) ? "rtl" : "ltr"
    }

    static let disambiguationDescription = "Wikipedia disambiguation page"

    /// The most of an extract a preview keeps (UTF-8 bytes): real extracts are a few KB (the largest recorded, 2.6 KB);
    /// a hostile or broken answer's megabytes of text are cut to their first paragraphs before any text rule runs, so
    /// building a card costs at most this much of a loop's time (about 2-3 ms at the rules' 100-200 ns a byte).
    static let previewLimit = 16 * 1024

    /// The paragraphs of `text` that fit in `limit` bytes: cut after the last line break within it; without one, after
    /// the last sentence or word; without any, at a character boundary. Text within the limit is returned as it is.
    static func leadingParagraphs(_ text: String, limit: Int = previewLimit) -> String {
        let bytes = text.utf8
        guard bytes.count > limit else { return text }
        let head = Array(bytes.prefix(limit))
        func cut(after byte: UInt8, followedBy next: UInt8? = nil) -> Int? {
            var i = head.count - 1
            while i >= limit / 4 {
                if head[i] == byte, next == nil || (i + 1 < head.count && head[i + 1] == next!) { return i }
                i -= 1
            }
            return nil
        }
        let end: Int
        if let nl = cut(after: 10) { end = nl }                          // the paragraphs before the last break
        else if let stop = cut(after: 46, followedBy: 32) { end = stop + 1 }   // "." then a space: the sentences
        else if let space = cut(after: 32) { end = space }                // the words
        else {
            // One unbroken run: cut before the last character unless it fits whole.
            var start = head.count - 1
            while start > 0, head[start] & 0xC0 == 0x80 { start -= 1 }
            let length = head[start] < 0x80 ? 1 : head[start] >= 0xF0 ? 4 : head[start] >= 0xE0 ? 3 : 2
            end = start + length <= head.count ? head.count : start
        }
        return String(decoding: head[..<end], as: UTF8.self)
    }

    /// The paragraphs of an extract's HTML that fit in `limit` bytes, each whole (`<p>…</p>`); nil when not even the first
    /// fits (the caller then makes the HTML from the cut plain text).
    static func leadingParagraphsHTML(_ html: String, limit: Int = previewLimit) -> String? {
        guard html.utf8.count > limit else { return html }
        let head = Array(html.utf8.prefix(limit))
        let close = Array("</p>".utf8)
        var i = head.count - close.count
        while i >= 0 {
            if head[i] == 60, Array(head[i..<i + close.count]) == close { return String(decoding: head[..<(i + close.count)], as: UTF8.self) }
            i -= 1
        }
        return nil
    }

    static func paragraph(_ text: String) -> String {
        "<p>" + text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;") + "</p>"
    }
}

extension Card: Encodable {
    enum Key: String, CodingKey {
        case title, displayTitle, description, extract, extractHtml, thumbnail, originalImage, coordinates, type, url, lang, dir
        case views, rank, distanceMeters, bearingDegrees, redirectedFrom, isDisambiguation
    }
    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(title, forKey: .title)
        try c.encode(displayTitle, forKey: .displayTitle)
        try c.encode(description, forKey: .description)       // null when absent: the card shape is fixed
        try c.encode(extract, forKey: .extract)
        try c.encode(extractHtml, forKey: .extractHtml)
        try c.encode(thumbnail, forKey: .thumbnail)
        try c.encode(originalImage, forKey: .originalImage)
        try c.encode(coordinates, forKey: .coordinates)
        try c.encode(type, forKey: .type)
        try c.encode(url, forKey: .url)
        try c.encode(lang, forKey: .lang)
        try c.encode(dir, forKey: .dir)
        try c.encodeIfPresent(views, forKey: .views)
        try c.encodeIfPresent(rank, forKey: .rank)
        try c.encodeIfPresent(distanceMeters, forKey: .distanceMeters)
        try c.encodeIfPresent(bearingDegrees, forKey: .bearingDegrees)
        try c.encodeIfPresent(redirectedFrom, forKey: .redirectedFrom)
        try c.encodeIfPresent(isDisambiguation, forKey: .isDisambiguation)
    }
}

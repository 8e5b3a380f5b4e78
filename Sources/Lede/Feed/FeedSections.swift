import Foundation
import LedeBasics
import Wikimedia

/// One section of the feed as sent: `ok` with items, or a `placeholder` the client shows until it retries.
struct FeedSection<Item: Encodable>: Encodable {
    var kind: SectionKind
    var status = "ok"
    var items: [Item]
    var reason: String?
    var retryAfterSeconds: Int?
    /// becauseYouRead: the article the recommendations are for.
    var source: String?
    /// nearby: the user's point.
    var latitude: Double?
    var longitude: Double?
}

struct NoItem: Encodable {}

/// The picture of the day as the card shows it.
struct PictureCard: Encodable, Equatable, Sendable {
    var title: String
    var thumbnail: Card.Image?
    var image: Card.Image?
    var filePage: String?
    var artist: String?
    var credit: String?
    var license: License?
    var caption: String?
    var captionLang: String?

    struct License: Encodable, Equatable, Sendable { var type: String?; var code: String?; var url: String? }
}

struct NewsItem: Encodable, Sendable { var story: String; var links: [Card] }
struct OnThisDayItem: Encodable, Sendable { var text: String; var year: Int?; var pages: [Card] }

/// Pure rules that turn upstream data into section items.
enum FeedRules {
    /// Caption in the user's language: a structured caption in it, else the file description when it is in
    /// it; else English (caption, then description); else any caption (alphabetically first language, so the
    /// choice is stable); else the description in whatever language it is. (A real answer had only a zh-hant
    /// caption beside an English description: an English reader gets the description.)
    static func caption(_ p: FeaturedFeed.PictureOfTheDay, lang: String) -> (String, String)? {
        let captions = p.structured?.captions ?? [:]
        let description = (p.description?.text).flatMap { $0.isEmpty ? nil : $0 }.map { ($0, p.description?.lang ?? "en") }
        if let c = captions[lang], !c.isEmpty { return (c, lang) }
        if let d = description, d.1 == lang { return d }
        if let c = captions["en"], !c.isEmpty { return (c, "en") }
        if let d = description, d.1 == "en" { return d }
        if let (l, c) = captions.filter({ !$0.value.isEmpty }).sorted(by: { $0.key < $1.key }).first { return (c, l) }
        return description
    }

    static func picture(_ p: FeaturedFeed.PictureOfTheDay, lang: String) -> PictureCard {
        let cap = caption(p, lang: lang)
        return PictureCard(title: p.title, thumbnail: p.thumbnail.map { .init(source: $0.source, width: $0.width, height: $0.height) },
                           image: p.image.map { .init(source: $0.source, width: $0.width, height: $0.height) }, filePage: p.filePage,
                           artist: p.artist?.text, credit: p.credit?.text,
                           license: p.license.map { .init(type: $0.type, code: $0.code, url: $0.url) }, caption: cap?.0, captionLang: cap?.1)
    }

    static func mostRead(_ m: FeaturedFeed.MostRead, lang: LanguageCode) -> [Card] {
        m.articles.enumerated().map { i, s in
            var c = Card(summary: s, lang: lang)
            c.views = s.views ?? 0
            c.rank = s.rank ?? (i + 1)
            return c
        }
    }
}

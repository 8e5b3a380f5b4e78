import LedeBasics
import Wikimedia
/// The content rules of the feature specs, as pure functions over upstream results.
enum ContentRules {
    /// A page a reader may be sent to: main namespace, not a disambiguation page, not `excluding`.
    static func isReadableArticle(_ page: QueryPage, excluding source: String? = nil) -> Bool {
        guard page.isMainNamespace, !page.isDisambiguation, page.missing != true else { return false }
        if let source, ArticleTitle.normalise(page.title) == ArticleTitle.normalise(source) { return false }
        return true
    }

    /// "Because you read": never a disambiguation page, never outside the main namespace, never the source.
    static func related(_ result: QueryResult, source: String, lang: LanguageCode, limit: Int) -> [Card] {
        var seen = Set<String>()
        return result.pages.filter { isReadableArticle($0, excluding: source) && seen.insert(ArticleTitle.normalise($0.title)).inserted }
            .prefix(limit).map { Card(page: $0, lang: lang) }
    }

    /// One random readable article among the candidates, or nil when none qualifies.
    static func randomPick<G: RandomNumberGenerator>(_ result: QueryResult, using rng: inout G) -> QueryPage? {
        result.pages.filter { isReadableArticle($0) }.randomElement(using: &rng)
    }

    /// Nearby articles with distance and initial bearing from the user, nearest first.
    static func nearby(_ result: QueryResult, from user: Coordinate, lang: LanguageCode) -> [Card] {
        var cards: [Card] = []
        for page in result.pages where isReadableArticle(page) {
            guard let c = page.coordinates?.first, let point = Coordinate(latitude: c.lat, longitude: c.lon) else { continue }
            var card = Card(page: page, lang: lang)
            (card.distanceMeters, card.bearingDegrees) = distanceAndBearing(from: user, to: point)
            cards.append(card)
        }
        return cards.sorted { ($0.distanceMeters ?? 0, $0.title) < ($1.distanceMeters ?? 0, $1.title) }
    }

    /// Distance in metres and initial bearing in degrees [0, 360), both to a tenth, as cards carry them.
    static func distanceAndBearing(from user: Coordinate, to point: Coordinate) -> (Double, Double) {
        let distance = (Geo.distance(user, point) * 10).rounded() / 10
        var bearing = (Geo.bearing(user, point) * 10).rounded() / 10
        if bearing == 360 { bearing = 0 }
        return (distance, bearing)
    }

    /// Search: prefix results first; full-text results appended without duplicates when prefix gave fewer than
    /// `fill`; "Redirected from" for results reached through a redirect; disambiguation pages marked.
    static let searchFill = 12

    static func search(prefix: QueryResult, fullText: QueryResult?, lang: LanguageCode) -> [Card] {
        var cards: [Card] = []
        var seen = Set<String>()
        for (result, redirects) in [(prefix, prefix.redirects), (fullText ?? QueryResult(pages: [], redirects: []), fullText?.redirects ?? [])] {
            let redirectedFrom = Dictionary(redirects.map { ($0.to, $0.from) }, uniquingKeysWith: { a, _ in a })
            for page in result.pages where page.isMainNamespace && seen.insert(ArticleTitle.normalise(page.title)).inserted {
                var card = Card(page: page, lang: lang)
                card.redirectedFrom = redirectedFrom[page.title]
                card.isDisambiguation = page.isDisambiguation
                cards.append(card)
            }
        }
        return cards
    }

    /// Seed 000, Search ("select the first result with a matching title"): the title of the first result whose title —
    /// or the title it was redirected from — equals the typed text under MediaWiki's title rules: the first letter's
    /// case ignored (these wikis capitalise it), `_` and space alike, runs of them one, surrounding spaces trimmed.
    static func match(_ query: String, in cards: [Card]) -> String? {
        let key = titleKey(query)
        guard !key.isEmpty else { return nil }
        return cards.first { titleKey($0.title) == key || $0.redirectedFrom.map(titleKey) == key }?.title
    }

    /// A title as MediaWiki compares it on a first-letter-case-insensitive wiki.
    static func titleKey(_ text: String) -> String {
        var words: [Substring] = []
        for part in text.split(whereSeparator: { $0 == " " || $0 == "_" || $0 == "\u{A0}" || $0 == "\t" }) { words.append(part) }
        let joined = words.joined(separator: " ")
        guard let first = joined.first else { return "" }
        return first.uppercased() + joined.dropFirst()
    }
}

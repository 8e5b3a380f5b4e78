import LedeBasics
import Wikimedia
/// A key of the feed's caches, made of the values it names: a language and day's shared part, a title's "Because you
/// read" or "Continue reading" fragment, or a geosearch cell's nearby articles. Nothing is formatted or allocated to
/// make one (every warm personal feed looks up three or four), and two kinds can never meet under one key.
struct FeedKey: Hashable, Sendable {
    enum Kind: UInt8, Sendable { case shared, because, continueReading, nearby }
    let kind: Kind
    /// The edition and its variant (`LanguageCode.key`).
    let lang: UInt16
    /// The normalised title (because, continue reading); empty for the others.
    let title: String
    /// Shared: the day number and 1 for today, 0 for another day. Nearby: the cell's latitude and longitude indexes.
    let a: Int, b: Int

    init(_ kind: Kind, lang: LanguageCode, title: String) {
        self.kind = kind; self.lang = lang.key; self.title = title; a = 0; b = 0
    }

    init(_ kind: Kind, lang: LanguageCode, _ a: Int, _ b: Int) {
        self.kind = kind; self.lang = lang.key; title = ""; self.a = a; self.b = b
    }

    static func shared(lang: LanguageCode, day: Int, isToday: Bool) -> FeedKey { FeedKey(.shared, lang: lang, day, isToday ? 1 : 0) }

    /// Kind and edition as one word, then the numbers, then the title only when there is one: a lookup hashes one
    /// string at most (the derived hash hashed the language's text and an empty title too). Equal keys hash alike.
    func hash(into hasher: inout Hasher) {
        hasher.combine(UInt32(kind.rawValue) << 16 | UInt32(lang))
        hasher.combine(a)
        hasher.combine(b)
        if !title.isEmpty { hasher.combine(title) }
    }
}

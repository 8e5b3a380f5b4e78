import Foundation
import HTTPServer
import LedeBasics
import Wikimedia
import HTTPCore

/// The Explore feed's cards, in the order the screen shows them.
enum SectionKind: String, CaseIterable, Sendable, Encodable {
    case featured, mostRead, pictureOfTheDay, news, onThisDay, random, becauseYouRead, nearby, continueReading

    /// Every kind in screen order (one array, not a fresh `allCases` per call).
    static let ordered: [SectionKind] = allCases

    /// A fixed bit per kind, for compact cache keys.
    var bit: Int {
        switch self {
        case .featured: return 1
        case .mostRead: return 2
        case .pictureOfTheDay: return 4
        case .news: return 8
        case .onThisDay: return 16
        case .random: return 32
        case .becauseYouRead: return 64
        case .nearby: return 128
        case .continueReading: return 256
        }
    }

    /// The bits of every shared kind.
    static let sharedMask = ordered.reduce(0) { $1.isShared ? $0 | $1.bit : $0 }

    /// The kind whose `bit` is `1 << index` (screen order).
    init?(bitIndex index: Int) {
        switch index {
        case 0: self = .featured
        case 1: self = .mostRead
        case 2: self = .pictureOfTheDay
        case 3: self = .news
        case 4: self = .onThisDay
        case 5: self = .random
        case 6: self = .becauseYouRead
        case 7: self = .nearby
        case 8: self = .continueReading
        default: return nil
        }
    }

    /// The same for every user of a language and date.
    var isShared: Bool {
        switch self {
        case .becauseYouRead, .nearby, .continueReading: return false
        default: return true
        }
    }
}

/// Chosen section kinds as bits, iterated in screen order: a request's choice held in one word (an array of them was
/// retained and released with every copy of a request, on memory both loops share).
struct SectionSet: Sequence, Sendable, Equatable {
    private(set) var bits: Int

    init<S: Sequence>(_ kinds: S) where S.Element == SectionKind { bits = kinds.reduce(0) { $0 | $1.bit } }

    /// Every kind.
    static let all = SectionSet(bits: SectionKind.ordered.reduce(0) { $0 | $1.bit })

    private init(bits: Int) { self.bits = bits }

    func contains(_ kind: SectionKind) -> Bool { bits & kind.bit != 0 }

    func makeIterator() -> Iterator { Iterator(rest: bits) }

    struct Iterator: IteratorProtocol {
        var rest: Int
        mutating func next() -> SectionKind? {
            guard rest != 0 else { return nil }
            let index = rest.trailingZeroBitCount
            rest &= rest - 1
            return SectionKind(bitIndex: index)
        }
    }
}

/// `GET /feed` parameters, validated once at the edge.
struct FeedRequest: Sendable, Equatable {
    var lang: LanguageCode
    var date: FeedDate
    var isToday: Bool
    var sections: SectionSet
    var nearby: Coordinate?
    /// The titles in their database form (`Albert_Einstein`).
    var because: String?
    var continueTitle: String?
    var backgroundedAt: Date?
    /// `lat` without `lon` or the other way round (each well-formed): the nearby section becomes an
    /// `incomplete-location` placeholder rather than the whole feed failing.
    var incompleteLocation = false

    /// Whether every shared section is asked for (the usual request).
    var showsEverySharedSection: Bool { sections.bits & SectionKind.sharedMask == SectionKind.sharedMask }

    /// Whether any shared section is asked for.
    var wantsShared: Bool { sections.bits & SectionKind.sharedMask != 0 }

    /// Whether the request carries anything personal (then the answer is `private`).
    var isPersonal: Bool { nearby != nil || because != nil || continueTitle != nil || backgroundedAt != nil || incompleteLocation }

    static let earliest = FeedDate(year: 2015, month: 1, day: 1)!
    static let continueReadingAfter: TimeInterval = 24 * 3600

    static func parse(_ request: HTTPRequest, now: Date = Date()) throws -> FeedRequest {
        // Query parameters read once (the first value of each name wins), where they lie: numbers, the date-time and
        // ASCII titles are read from their bytes, with no string made for them.
        var parsed: FeedRequest?
        try request.withFirstQueryValues(queryNames) { parsed = try parse(values: $0, request: request, now: now) }
        return parsed!
    }

    /// The parameters the feed reads, in the order `parse(values:)` indexes them.
    static let queryNames = QueryNames(["lang", "date", "sections", "lat", "lon", "because", "continue", "backgroundedAt"])

    private static func parse(values v: UnsafeBufferPointer<RawQueryValue?>, request: HTTPRequest, now: Date) throws -> FeedRequest {
        let lang = try LanguageCode.resolve(lang: v[0]?.string, acceptLanguage: request.headers["Accept-Language"])
        let today = FeedDate.today(now: now.timeIntervalSince1970)
        var date = today
        if let raw = v[1]?.string {
            guard let d = FeedDate(raw) else { throw bad(.problemDateInvalid, "date") }
            // A well-formed date outside the feed's days names no feed: 404, like upstream's featured feed.
            guard d <= today else { throw Problem(status: 404, slug: "no-feed-for-date", .problemNoFeedFuture, raw) }
            guard d >= earliest else { throw Problem(status: 404, slug: "no-feed-for-date", .problemNoFeedBeforeStart, raw, "2015-01-01") }
            date = d
        }
        var sections = SectionSet.all
        if let raw = v[2]?.string {
            sections = SectionSet(try QueryList.cases(raw, of: SectionKind.self, name: "sections", slug: "invalid-feed-request"))
        }
        // nil: absent; .some(nil): not a plain decimal.
        func decimal(_ raw: RawQueryValue) -> Double? {
            raw.isPlain ? Coordinate.parseDecimal(bytes: raw.bytes) : Coordinate.parseDecimal(raw.string)
        }
        let lat = v[3].map(decimal), lon = v[4].map(decimal)
        var nearby: Coordinate?
        var incompleteLocation = false
        if lat != nil, lon != nil {
            nearby = try Coordinate.parse(lat: lat, lon: lon).get()
        } else if lat != nil || lon != nil {
            // Still validated: a malformed or out-of-range coordinate is a 400 whether or not its pair came.
            _ = try Coordinate.parse(lat: lat ?? .some(0), lon: lon ?? .some(0)).get()
            incompleteLocation = true
        }
        // An empty value is no value (an app with no history sends `because=`); anything else must be a title, kept in
        // its database form (`Albert_Einstein`): what the sections' cache keys are made of.
        func title(_ raw: RawQueryValue) throws -> String? {
            if raw.bytes.isEmpty { return nil }
            return raw.isPlain ? try Parameters.normalisedArticleTitle(bytes: raw.bytes) : try Parameters.normalisedArticleTitle(raw.string)
        }
        let because = try v[5].flatMap(title)
        let cont = try v[6].flatMap(title)
        var backgroundedAt: Date?
        if let raw = v[7] {
            let seconds = raw.isPlain ? Timestamp.parseRFC3339(bytes: raw.bytes) : Timestamp.parseRFC3339(raw.string)
            guard let seconds else { throw bad(.problemDatetimeInvalid, "backgroundedAt") }
            backgroundedAt = Date(timeIntervalSince1970: seconds)
        }
        var request = FeedRequest(lang: lang, date: date, isToday: date == today, sections: sections, nearby: nearby, because: because,
                                  continueTitle: cont, backgroundedAt: backgroundedAt)
        request.incompleteLocation = incompleteLocation
        return request
    }

    /// Seed 000, Returning user: more than 24 hours in the background → the Explore view, where Continue
    /// Reading offers the last article; within 24 hours the app reopens the article itself.
    static func showsContinueReading(backgroundedAt: Date?, now: Date) -> Bool {
        guard let backgroundedAt else { return false }
        return now.timeIntervalSince(backgroundedAt) > continueReadingAfter
    }

    static func bad(_ key: MessageKey, _ parameters: String...) -> Problem { Problem(status: 400, slug: "invalid-feed-request", key, parameters: parameters) }

    /// The first value of each parameter the feed reads (others are ignored): no dictionary per request.
}

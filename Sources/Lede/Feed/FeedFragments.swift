import Foundation
import HTTPServer
import Synchronization
import LedeBasics
import Wikimedia

/// The geosearch cell a nearby section is fetched and encoded for: 0.01° of latitude and longitude (about 1.1 km
/// north–south), queried at its centre. Two users in one cell share one upstream answer and one set of encoded
/// cards; each gets distances and bearings from their own exact point.
struct GeoCell: Hashable, Sendable {
    static let perDegree = 100.0
    let latIndex: Int
    let lonIndex: Int

    init(_ p: Coordinate) {
        latIndex = min(Int((p.latitude * Self.perDegree).rounded(.down)), 89 * 100 + 99)
        lonIndex = min(Int((p.longitude * Self.perDegree).rounded(.down)), 179 * 100 + 99)
    }

    var centre: Coordinate {
        Coordinate(latitude: (Double(latIndex) + 0.5) / Self.perDegree, longitude: (Double(lonIndex) + 0.5) / Self.perDegree)!
    }

}

/// A nearby section's cards for one cell, encoded once with holes where each user's `bearingDegrees` and
/// `distanceMeters` go.
struct NearbyCell: Sendable {
    struct Item: Sendable {
        let point: Coordinate
        let title: String
        /// The card's bytes around the two numbers, in order; `bearingFirst` says which number fills the first hole.
        let pieces: [BodyFragment]
        let bearingFirst: Bool
    }

    let items: [Item]
    /// This cell's answer among all built (a refreshed cell is another): what a memo of its sections is keyed by.
    let id: Int
    private static let ids = Atomic<Int>(0)
    var cost: Int { items.reduce(0) { $0 + $1.pieces.reduce(0) { $0 + $1.bytes.count + $1.deflated.count } + 64 } }

    /// The readable pages of a geosearch answer that have coordinates (the same rules as `ContentRules.nearby`).
    init(_ result: QueryResult, lang: LanguageCode) {
        var items: [Item] = []
        for page in result.pages where ContentRules.isReadableArticle(page) {
            guard let c = page.coordinates?.first, let point = Coordinate(latitude: c.lat, longitude: c.lon) else { continue }
            var card = Card(page: page, lang: lang)
            card.distanceMeters = 0
            card.bearingDegrees = 0
            let bytes = JSONLines.encode(card)
            guard let b = Self.valueRange(of: "bearingDegrees", in: bytes), let d = Self.valueRange(of: "distanceMeters", in: bytes) else { continue }
            let (first, second) = b.lowerBound < d.lowerBound ? (b, d) : (d, b)
            items.append(Item(point: point, title: card.title,
                              pieces: [BodyFragment(Array(bytes[..<first.lowerBound])),
                                       BodyFragment(Array(bytes[first.upperBound..<second.lowerBound])),
                                       BodyFragment(Array(bytes[second.upperBound...]))],
                              bearingFirst: b.lowerBound < d.lowerBound))
        }
        self.items = items
        id = Self.ids.wrappingAdd(1, ordering: .relaxed).newValue
    }

    /// Where the number of a top-level `"key":` member lies (JSONEncoder output: no spaces; a key inside a string
    /// value is escaped as `\"key\"`, so it cannot match).
    static func valueRange(of key: String, in bytes: [UInt8]) -> Range<Int>? {
        let needle = Array("\"\(key)\":".utf8)
        guard bytes.count > needle.count else { return nil }
        var i = 0
        while i + needle.count <= bytes.count {
            if bytes[i] == needle[0], Array(bytes[i..<(i + needle.count)]) == needle {
                let start = i + needle.count
                var end = start
                while end < bytes.count, bytes[end] != 44, bytes[end] != 125 { end += 1 }
                return start..<end
            }
            i += 1
        }
        return nil
    }

    /// The section for a user at `user`: items within `radius` metres, nearest first (ties by title), each with
    /// its exact distance and bearing; the user's point as `latitude`/`longitude`.
    func append(to body: inout AssembledBody, user: Coordinate, radius: Double) {
        var chosen: [(distance: Double, bearing: Double, index: Int)] = []
        chosen.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            let (distance, bearing) = ContentRules.distanceAndBearing(from: user, to: item.point)
            if distance <= radius { chosen.append((distance, bearing, index)) }
        }
        chosen.sort { $0.distance != $1.distance ? $0.distance < $1.distance : items[$0.index].title < items[$1.index].title }
        body.append(literal: Self.open)
        for (i, c) in chosen.enumerated() {
            if i > 0 { body.append(byte: UInt8(ascii: ",")) }
            let item = items[c.index]
            let first = item.bearingFirst ? c.bearing : c.distance, second = item.bearingFirst ? c.distance : c.bearing
            body.append(item.pieces[0])
            JSONNumber.append(first, to: &body)
            body.append(item.pieces[1])
            JSONNumber.append(second, to: &body)
            body.append(item.pieces[2])
        }
        body.append(literal: Self.latitude)
        JSONNumber.append(user.latitude, to: &body)
        body.append(literal: Self.longitude)
        JSONNumber.append(user.longitude, to: &body)
        body.append(literal: Self.close)
    }

    static let open = Array("{\"items\":[".utf8)
    static let latitude = Array("],\"kind\":\"nearby\",\"latitude\":".utf8)
    static let longitude = Array(",\"longitude\":".utf8)
    static let close = Array(",\"status\":\"ok\"}".utf8)
}

/// Nearby sections already assembled for a user's exact point, each kept as one fragment: the same user asking again
/// from the same place (the app's refresh, a return to the Explore tab) gets the section as one piece, with no
/// distance, bearing, number or CRC computed again. Two generations of at most `limit` entries each: a point not asked
/// for during a whole generation is forgotten (an LRU's effect without a list to keep per hit).
final class NearbyMemo: Sendable {
    struct Key: Hashable {
        let cell: Int
        let lat: UInt64
        let lon: UInt64
    }
    private struct Generations {
        var current: [Key: BodyFragment] = [:]
        var previous: [Key: BodyFragment] = [:]
    }
    private let state = Mutex(Generations())
    let limit: Int

    init(limit: Int = 4_096) { self.limit = limit }

    /// The section of `cell` for a user at `user`, from the memo or made now (and kept).
    func section(_ cell: NearbyCell, user: Coordinate, radius: Double) -> BodyFragment {
        let key = Key(cell: cell.id, lat: user.latitude.bitPattern, lon: user.longitude.bitPattern)
        let limit = self.limit
        if let kept = state.withLock({ g -> BodyFragment? in
            if let f = g.current[key] { return f }
            guard let f = g.previous.removeValue(forKey: key) else { return nil }
            g.current[key] = f   // asked for again: into the current generation
            return f
        }) { return kept }
        var body = AssembledBody(capacity: 4 + 5 * cell.items.count)
        cell.append(to: &body, user: user, radius: radius)
        let fragment = BodyFragment(assembled: body)
        state.withLock { g in
            if g.current.count >= limit { g.previous = g.current; g.current = [:] }
            g.current[key] = fragment
        }
        return fragment
    }

    var count: Int { state.withLock { $0.current.count + $0.previous.count } }
}

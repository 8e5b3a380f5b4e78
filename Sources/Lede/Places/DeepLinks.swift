import Foundation
import HTTPServer
import LedeBasics
import Wikimedia
import HTTPCore
import Upstream

/// `wikipedia://places` links the Wikipedia app opens in its Places tab (seed 004).
enum DeepLinks {
    /// `wikipedia://places?WMFLocationLat=…&WMFLocationLon=…` — at most 7 decimals, never an exponent, `-0` as `0`.
    static func places(_ c: Coordinate) -> String {
        "wikipedia://places?WMFLocationLat=\(Coordinates.format(c.latitude))&WMFLocationLon=\(Coordinates.format(c.longitude))"
    }

    /// `wikipedia://places?WMFArticleURL=<percent-encoded https article URL>` (what the unmodified app understands).
    static func places(article: ArticleURL) -> String {
        "wikipedia://places?WMFArticleURL=" + UpstreamRequest.percentEncode(article.url, keep: "")
    }

    /// A label for people: the name, or the coordinates as `52.3547° N, 4.8339° E`.
    static func label(name: String?, _ c: Coordinate) -> String {
        if let name, !name.isEmpty { return name }
        func part(_ v: Double, _ pos: String, _ neg: String) -> String {
            let r = (abs(v) * 10_000).rounded() / 10_000
            return TextFormat.fixed(r, digits: 4) + "° " + (r == 0 ? pos : (v < 0 ? neg : pos))
        }
        return "\(part(c.latitude, "N", "S")), \(part(c.longitude, "E", "W"))"
    }
}

/// A Wikipedia article URL, valid by construction: `https://{lang}.wikipedia.org/wiki/{title}` and nothing else.
struct ArticleURL: Sendable, Equatable {
    let url: String
    let lang: String

    init(lang: LanguageCode, title: String) {
        self.lang = lang.code
        url = Card.articleURL(lang: lang.code, title: title)
    }

    /// Parses a URL the client sends; nil for other schemes and hosts, userinfo, ports, queries, fragments,
    /// whitespace or control characters, bad percent-encoding, or a missing title.
    init?(_ raw: String) {
        guard raw.utf8.count <= 2048 else { return nil }
        let u = Array(raw.utf8)
        let prefix = Array("https://".utf8)
        guard u.count > prefix.count, Array(u[0..<prefix.count]) == prefix else { return nil }
        guard u.allSatisfy({ $0 > 32 && $0 < 127 && !"\"<>\\^`{|}#?@".utf8.contains($0) }) else { return nil }
        let rest = raw.dropFirst(prefix.count)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let host = rest[rest.startIndex..<slash]
        let suffix = ".wikipedia.org"
        guard host.hasSuffix(suffix), let lang = LanguageCode(String(host.dropLast(suffix.count))), host == "\(lang.code)\(suffix)" else { return nil }
        let path = rest[slash...]
        guard path.hasPrefix("/wiki/"), path.count > "/wiki/".count else { return nil }
        let title = path.dropFirst("/wiki/".count)
        guard let decoded = PercentDecoding.decode(title), !decoded.isEmpty, !decoded.unicodeScalars.contains(where: { $0.value < 32 || $0.value == 127 }) else { return nil }
        self.url = raw
        self.lang = lang.code
    }
}

/// A place of the locations list.
struct Place: Sendable, Equatable {
    var name: String?
    var coordinate: Coordinate
}

public struct LocationsFileError: Error, CustomStringConvertible, Equatable {
    public var description: String
}

/// The locations file of the seed's assignment: a JSON array, or `{"locations": [...]}`, of
/// `{ "name"?, "lat", "long" | "lon" }`.
enum LocationsLoader {
    /// The assignment's list: Amsterdam, Mumbai, Copenhagen and one unnamed place (in Madrid).
    static let embedded: [Place] = [
        Place(name: "Amsterdam", coordinate: Coordinate(latitude: 52.3547498, longitude: 4.8339215)!),
        Place(name: "Mumbai", coordinate: Coordinate(latitude: 19.0823998, longitude: 72.8111468)!),
        Place(name: "Copenhagen", coordinate: Coordinate(latitude: 55.6713442, longitude: 12.5237848)!),
        Place(name: nil, coordinate: Coordinate(latitude: 40.4380638, longitude: -3.7495758)!),
    ]

    static func load(path: String) throws -> [Place] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LocationsFileError(description: "\(path): cannot be read (missing, or not a readable file)")
        }
        do { return try parse(data) } catch let e as LocationsFileError {
            throw LocationsFileError(description: "\(path): \(e.description)")
        }
    }

    static func parse(_ data: Data) throws -> [Place] {
        let root: JSONValue
        do { root = try UpstreamJSONDecoder().decode(JSONValue.self, from: Array(data)) } catch {
            throw LocationsFileError(description: "not valid JSON")
        }
        let entries: [JSONValue]
        switch root {
        case .array(let a): entries = a
        case .object(let o):
            guard case .array(let a)? = o["locations"] else { throw LocationsFileError(description: "expected a JSON array or an object with a \"locations\" array") }
            entries = a
        default: throw LocationsFileError(description: "expected a JSON array or an object with a \"locations\" array")
        }
        return try entries.enumerated().map { i, entry in
            guard case .object(let o) = entry else { throw LocationsFileError(description: "entry \(i) is not an object") }
            func number(_ key: String) -> Double? {
                switch o[key] {
                case .int(let n)?: return Double(n)
                case .double(let d)?: return d
                default: return nil
                }
            }
            guard let lat = number("lat") else { throw LocationsFileError(description: "entry \(i) has no numeric \"lat\"") }
            guard let lon = number("long") ?? number("lon") else { throw LocationsFileError(description: "entry \(i) has no numeric \"long\" or \"lon\"") }
            guard let c = Coordinate(latitude: lat, longitude: lon) else {
                throw LocationsFileError(description: "entry \(i) has coordinates out of range (lat -90…90, long -180…180)")
            }
            var name: String?
            switch o["name"] {
            case nil, .null?: name = nil
            case .string(let s)?:
                guard s.count <= 200, !s.unicodeScalars.contains(where: { $0.value < 32 }) else { throw LocationsFileError(description: "entry \(i) has an unusable \"name\"") }
                name = s.isEmpty ? nil : s
            default: throw LocationsFileError(description: "entry \(i) has a \"name\" that is not a string")
            }
            return Place(name: name, coordinate: c)
        }
    }
}

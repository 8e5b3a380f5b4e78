import HTTPServer
import LedeBasics
import Wikimedia
import HTTPCore

enum PlacesRoutes {
    /// Bodies are written by hand so coordinates keep the link's formatting: at most 7 decimals, never an exponent.
    struct LinkBody {
        var url: String
        var coordinate: Coordinate?
        var name: String?
        var article: String?
        var json: [UInt8] {
            let lat = coordinate.map { Coordinates.format($0.latitude) } ?? "null"
            let lon = coordinate.map { Coordinates.format($0.longitude) } ?? "null"
            return Array("{\"article\":\(article.map(JSONText.quote) ?? "null"),\"latitude\":\(lat),\"longitude\":\(lon),\"name\":\(name.map(JSONText.quote) ?? "null"),\"url\":\(JSONText.quote(url))}".utf8)
        }
    }

    static func locationsJSON(_ places: [Place]) -> [UInt8] {
        let items = places.map { p in
            "{\"deeplink\":\(JSONText.quote(DeepLinks.places(p.coordinate))),\"label\":\(JSONText.quote(DeepLinks.label(name: p.name, p.coordinate))),"
                + "\"latitude\":\(Coordinates.format(p.coordinate.latitude)),\"longitude\":\(Coordinates.format(p.coordinate.longitude)),"
                + "\"name\":\(p.name.map(JSONText.quote) ?? "null")}"
        }
        return Array("{\"locations\":[\(items.joined(separator: ","))]}".utf8)
    }

    static func response(_ bytes: [UInt8], cacheControl: String, vary: String? = nil) -> HTTPResponse {
        var headers: HTTPHeaders = ["Cache-Control": cacheControl, "ETag": FNV1a.quotedTag(bytes)]
        if let vary { headers.set("Vary", vary) }
        return .json(bytes, headers: headers)
    }

    static func register(on router: Router, places: [Place]) {
        let list = PreparedBody(contentType: "application/json", bytes: locationsJSON(places), headers: ["Cache-Control": "public, max-age=300"])
        router.get("/places/locations") { _ in .response(.prepared(list)) }

        router.get("/places/deeplink") { ctx in
            return .response(response(try pointLink(ctx.request).json, cacheControl: "public, max-age=86400"))
        }
        router.get("/places/deeplink/{title}") { ctx in
            return .response(response(try articleLink(ctx.parameter("title"), ctx.request).json, cacheControl: "public, max-age=86400", vary: Responses.varyByLanguage))
        }
    }

    /// The first value of each query parameter; a parameter given twice is a 400.
    static func query(_ r: HTTPRequest) throws -> [String: String] {
        var q: [String: String] = [:]
        for item in r.queryItems {
            guard q[item.name] == nil else { throw bad(.problemParameterRepeated, String(item.name.prefix(40))) }
            q[item.name] = item.value
        }
        return q
    }

    /// `/places/deeplink?lat=&lon=[&name=]`: the link for a point.
    static func pointLink(_ r: HTTPRequest) throws -> LinkBody {
        let q = try query(r)
        guard q["article"] == nil, q["title"] == nil else { throw bad(.problemPlacesArticleRoute, "GET /places/deeplink/{title}?lang=…") }
        let c = try Coordinate.parse(lat: q["lat"], lon: q["lon"]).get()
        var name: String?
        if let n = q["name"] {
            // Counted in code points, as JSON Schema's maxLength counts.
            guard n.unicodeScalars.count <= 200, !n.unicodeScalars.contains(where: { $0.value < 32 || $0.value == 127 }) else {
                throw bad(.problemTextFieldInvalid, "name", "200")
            }
            name = n.isEmpty ? nil : n
        }
        return LinkBody(url: DeepLinks.places(c), coordinate: c, name: name, article: nil)
    }

    /// `/places/deeplink/{title}?lang=`: the link that opens Places on an article (`WMFArticleURL`).
    static func articleLink(_ rawTitle: String?, _ r: HTTPRequest) throws -> LinkBody {
        let q = try query(r)
        let title = try Parameters.articleTitle(rawTitle)
        let article = ArticleURL(lang: try LanguageCode.resolve(lang: q["lang"], acceptLanguage: r.headers["Accept-Language"]), title: title)
        return LinkBody(url: DeepLinks.places(article: article), coordinate: nil, name: nil, article: article.url)
    }

    static func bad(_ key: MessageKey, _ parameters: String...) -> Problem { Problem(status: 400, slug: "invalid-deeplink-request", key, parameters: parameters) }
}

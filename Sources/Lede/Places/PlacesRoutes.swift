import HTTPServer

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

    static func response(_ bytes: [UInt8], cacheControl: String) -> HTTPResponse {
        .json(bytes, headers: ["Cache-Control": cacheControl, "ETag": "\"\(FNV1a.hash(bytes))\""])
    }

    static func register(on router: Router, places: [Place]) {
        let list = PreparedBody(contentType: "application/json", bytes: locationsJSON(places), headers: ["Cache-Control": "public, max-age=300"])
        router.get("/places/locations") { _ in .response(.prepared(list)) }

        router.get("/places/deeplink") { ctx in
            do { return .response(response(try link(ctx.request).json, cacheControl: "public, max-age=86400")) }
            catch { return .response(Responses.problem(error)) }
        }
    }

    static func link(_ r: HTTPRequest) throws -> LinkBody {
        var q: [String: String] = [:]
        for item in r.queryItems {
            guard q[item.name] == nil else { throw bad("\(item.name.prefix(40)) is given more than once.") }
            q[item.name] = item.value
        }
        let byPoint = q["lat"] != nil || q["lon"] != nil
        let byArticle = q["article"] != nil || q["title"] != nil
        guard byPoint != byArticle else { throw bad("Give either lat and lon, or article (or title with lang) — exactly one form.") }
        if byPoint {
            let c = try Coordinate.parse(lat: q["lat"], lon: q["lon"]).get()
            var name: String?
            if let n = q["name"] {
                guard n.count <= 200, !n.unicodeScalars.contains(where: { $0.value < 32 || $0.value == 127 }) else { throw bad("name must be at most 200 characters without control characters.") }
                name = n.isEmpty ? nil : n
            }
            return LinkBody(url: DeepLinks.places(c), coordinate: c, name: name, article: nil)
        }
        let article: ArticleURL
        if let raw = q["article"] {
            guard q["title"] == nil else { throw bad("Give article or title, not both.") }
            guard let a = ArticleURL(raw) else { throw bad("article must be an https://{lang}.wikipedia.org/wiki/Title URL.") }
            article = a
        } else {
            let title = try ContentRoutes.articleTitle(q["title"])
            article = ArticleURL(lang: try LanguageCode.resolve(lang: q["lang"], acceptLanguage: r.headers["Accept-Language"]), title: title)
        }
        return LinkBody(url: DeepLinks.places(article: article), coordinate: nil, name: nil, article: article.url)
    }

    static func bad(_ detail: String) -> Problem { Problem(status: 400, slug: "invalid-deeplink-request", detail: detail) }
}

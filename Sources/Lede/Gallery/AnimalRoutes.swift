import HTTPCore
import HTTPServer
import LedeBasics
import Wikimedia
import Upstream

enum AnimalRoutes {
    struct Item: Encodable {
        var id: Int, name: String, image: String, thumbnail: String, tags: [String], isFavorite: Bool
        init(_ a: Animal, favorites: Set<Int>) {
            id = a.id; name = a.name; image = a.image; thumbnail = a.thumbnail; tags = a.tags; isFavorite = favorites.contains(a.id)
        }
    }
    struct ListBody: Encodable { var items: [Item]; var count: Int; var message: String? }
    struct TagsBody: Encodable { var tags: [String] }

    /// `responses`: the prepared answers of each distinct query (normalised: tags and favorites sorted), bounded LRU.
    static func register(on router: Router, responses: UpstreamCache) {
        router.get("/animals") { ctx in
            let tags = Set(try Animals.list(ctx.request.queryParameter("tags"), name: "tags"))
            let favorites = try Animals.favorites(ctx.request.queryParameter("favorites"))
            let only = try Animals.flag(ctx.request.queryParameter("favoritesOnly"), name: "favoritesOnly")
            let key = "animals:\(tags.sorted().joined(separator: ","))|\(favorites.sorted().map(String.init).joined(separator: ","))|\(only)"
            if let warm = responses.cachedValue(key, as: PreparedBody.self) { return .response(.prepared(warm)) }
            let items = Animals.filter(tags: tags, favorites: favorites, favoritesOnly: only).map { Item($0, favorites: favorites) }
            let body = ListBody(items: items, count: items.count, message: items.isEmpty ? Animals.noAnimalsMessage : nil)
            return .response(.prepared(Responses.keep(body, headers: ["Cache-Control": "public, max-age=300"], in: responses, key: key, ttl: 300)))
        }
        let tags = Responses.json(TagsBody(tags: Animals.tags), cacheControl: "public, max-age=3600")
        router.get("/animals/tags") { _ in .response(tags) }
        // An animal's answer depends only on whether it is among the favorites: both forms prepared at start.
        let itemHeaders: HTTPHeaders = ["Cache-Control": "public, max-age=300"]
        let items = Dictionary(uniqueKeysWithValues: Animals.all.map { a in
            (a.id, (plain: Responses.preparedBody(Item(a, favorites: []), headers: itemHeaders),
                    favorite: Responses.preparedBody(Item(a, favorites: [a.id]), headers: itemHeaders)))
        })
        router.get("/animals/{id}") { ctx in
            let animal = try find(ctx.parameter("id"))
            let favorites = try Animals.favorites(ctx.request.queryParameter("favorites"))
            guard let prepared = items[animal.id] else { throw Problem(status: 404, slug: "not-found", .problemNoAnimal, String(animal.id)) }
            return .response(.prepared(favorites.contains(animal.id) ? prepared.favorite : prepared.plain))
        }
        router.get("/animals/{id}/image.svg") { ctx in
            let animal = try find(ctx.parameter("id"))
            let size = try Parameters.int(ctx.request, "size", default: 640, range: 16...2048)
            var h = HTTPHeaders()
            h.set("Cache-Control", "public, max-age=86400")
            return .response(HTTPResponse(status: 200, contentType: "image/svg+xml; charset=utf-8", bytes: Array(animal.svg(size: size).utf8), headers: h))
        }
    }

    static func find(_ raw: String?) throws -> Animal {
        guard let raw, raw.utf8.count <= 9, raw.utf8.allSatisfy({ (48...57).contains($0) }), let id = Int(raw) else {
            throw Problem(status: 400, slug: "invalid-gallery-request", .problemAnimalId)
        }
        guard let a = Animals.all.first(where: { $0.id == id }) else {
            throw Problem(status: 404, slug: "not-found", .problemNoAnimal, String(id))
        }
        return a
    }
}

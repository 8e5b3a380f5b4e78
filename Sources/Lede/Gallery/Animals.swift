import HTTPServer
import LedeBasics
import Wikimedia

/// Automation Animals (seed 001): 12 animals with tags. Favourites live on the device; the client sends them.
struct Animal: Sendable, Equatable {
    var id: Int
    var name: String
    var tags: [String]
    var emoji: String
    var colour: String
    /// Served by Lede itself (relative to its base URL), so the images exist wherever Lede runs.
    var image: String { "/animals/\(id)/image.svg" }
    var thumbnail: String { "/animals/\(id)/image.svg?size=160" }

    /// A cartoon tile: the animal's emoji on its colour, with its name.
    func svg(size: Int) -> String {
        """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(size)" height="\(size)" viewBox="0 0 100 100" role="img" aria-label="\(name)">\
        <rect width="100" height="100" rx="12" fill="\(colour)"/>\
        <text x="50" y="58" font-size="52" text-anchor="middle" dominant-baseline="middle">\(emoji)</text>\
        <text x="50" y="92" font-size="11" font-family="Helvetica, Arial, sans-serif" text-anchor="middle" fill="#222">\(name)</text>\
        </svg>
        """
    }
}

enum Animals {
    /// Cartoon animals as in the seed app (image source: stockfreeimages.com's Cartoon Animals set).
    static let all: [Animal] = [
        Animal(id: 1, name: "Lion", tags: ["wild", "mammal", "africa", "carnivore"], emoji: "🦁", colour: "#F6C453"),
        Animal(id: 2, name: "Elephant", tags: ["wild", "mammal", "africa", "herbivore"], emoji: "🐘", colour: "#B8C4D6"),
        Animal(id: 3, name: "Giraffe", tags: ["wild", "mammal", "africa", "herbivore"], emoji: "🦒", colour: "#F2D398"),
        Animal(id: 4, name: "Zebra", tags: ["wild", "mammal", "africa", "herbivore"], emoji: "🦓", colour: "#E6E6E6"),
        Animal(id: 5, name: "Monkey", tags: ["wild", "mammal", "jungle"], emoji: "🐒", colour: "#C9A27E"),
        Animal(id: 6, name: "Parrot", tags: ["bird", "jungle", "pet"], emoji: "🦜", colour: "#9FD89F"),
        Animal(id: 7, name: "Penguin", tags: ["bird", "antarctica", "carnivore"], emoji: "🐧", colour: "#A8D8F0"),
        Animal(id: 8, name: "Dog", tags: ["pet", "mammal", "farm"], emoji: "🐕", colour: "#E8C9A0"),
        Animal(id: 9, name: "Cat", tags: ["pet", "mammal", "carnivore"], emoji: "🐈", colour: "#F4B6A6"),
        Animal(id: 10, name: "Cow", tags: ["farm", "mammal", "herbivore"], emoji: "🐄", colour: "#D9EAD3"),
        Animal(id: 11, name: "Frog", tags: ["amphibian", "jungle", "pond"], emoji: "🐸", colour: "#B6E3A8"),
        Animal(id: 12, name: "Owl", tags: ["bird", "forest", "carnivore"], emoji: "🦉", colour: "#C7B299"),
    ]

    static var tags: [String] { Array(Set(all.flatMap(\.tags))).sorted() }

    /// The gallery: tags applied with OR (an animal with any selected tag), then favourites only if asked.
    static func filter(tags: Set<String>, favorites: Set<Int>, favoritesOnly: Bool) -> [Animal] {
        all.filter { a in
            (tags.isEmpty || !tags.isDisjoint(with: a.tags)) && (!favoritesOnly || favorites.contains(a.id))
        }
    }

    static let noAnimalsMessage = "No animals found"

    /// A comma list: no empty items, at most 100.
    static func list(_ raw: String?, name: String) throws -> [String] {
        guard let raw else { return [] }
        return try QueryList.items(raw, name: name, slug: "invalid-gallery-request")
    }

    static func favorites(_ raw: String?) throws -> Set<Int> {
        Set(try list(raw, name: "favorites").map { item in
            guard item.utf8.count <= 9, item.utf8.allSatisfy({ (48...57).contains($0) }), let id = Int(item) else { throw bad(.problemAnimalFavorites, "favorites") }
            return id
        })
    }

    static func flag(_ raw: String?, name: String) throws -> Bool {
        switch raw {
        case nil, "false", "0": return false
        case "true", "1": return true
        default: throw bad(.problemFieldBoolean, name)
        }
    }

    static func bad(_ key: MessageKey, _ parameters: String...) -> Problem { Problem(status: 400, slug: "invalid-gallery-request", key, parameters: parameters) }
}

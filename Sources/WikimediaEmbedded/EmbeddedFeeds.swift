import Foundation
import Synchronization
import LedeBasics
import Wikimedia
import HTTPCore

/// Featured feeds for the embedded default: one per day for the 7 days up to the reference date, built from
/// the embedded articles; other dates get the reference date's snapshot. News only on the reference date
/// (upstream sends news for today only).
enum EmbeddedFeeds {
    struct Picture {
        var file: String
        var artist: String
        var license: (String, String, String)
        var description: String
        var captions: [String: String]
    }

    static let pictures: [Picture] = [
        Picture(file: "Nyhavn_at_dusk,_Copenhagen.jpg", artist: "Julian Herzog", license: ("CC BY-SA 4.0", "cc-by-sa-4.0", "https://creativecommons.org/licenses/by-sa/4.0"),
                description: "Nyhavn, a 17th-century waterfront in Copenhagen, at dusk.",
                captions: ["en": "Nyhavn at dusk, Copenhagen", "de": "Nyhavn in der Abenddämmerung, Kopenhagen", "it": "Nyhavn al tramonto, Copenaghen"]),
        Picture(file: "Gateway_of_India_at_night.jpg", artist: "Dhruvaraj S", license: ("CC BY-SA 3.0", "cc-by-sa-3.0", "https://creativecommons.org/licenses/by-sa/3.0"),
                description: "The Gateway of India in Mumbai, lit at night.",
                captions: ["en": "The Gateway of India at night"]),
        Picture(file: "Palacio_Real_de_Madrid_desde_la_Almudena.jpg", artist: "Carlos Delgado", license: ("CC BY-SA 4.0", "cc-by-sa-4.0", "https://creativecommons.org/licenses/by-sa/4.0"),
                description: "The Royal Palace of Madrid seen from the Almudena Cathedral.",
                captions: ["de": "Der Königliche Palast von Madrid, von der Almudena-Kathedrale aus gesehen", "es": "El Palacio Real visto desde la Almudena"]),
        Picture(file: "Rijksmuseum_reflection.jpg", artist: "Diliff", license: ("CC BY-SA 3.0", "cc-by-sa-3.0", "https://creativecommons.org/licenses/by-sa/3.0"),
                description: "The Rijksmuseum reflected in a canal, Amsterdam.",
                captions: ["en": "The Rijksmuseum reflected in the canal", "it": "Il Rijksmuseum riflesso nel canale"]),
        Picture(file: "Mercury_transit_2016.jpg", artist: "NASA/SDO", license: ("Public domain", "pd", ""),
                description: "Mercury crossing the face of the Sun on 9 May 2016.",
                captions: ["en": "Transit of Mercury, 9 May 2016", "de": "Merkurtransit am 9. Mai 2016", "it": "Transito di Mercurio, 9 maggio 2016"]),
        Picture(file: "Tivoli_Gardens_at_night.jpg", artist: "Bob Collowan", license: ("CC BY-SA 4.0", "cc-by-sa-4.0", "https://creativecommons.org/licenses/by-sa/4.0"),
                description: "Tivoli Gardens at night.", captions: [:]),
        Picture(file: "Aldrin_Apollo_11_original.jpg", artist: "Neil Armstrong", license: ("Public domain", "pd", ""),
                description: "Buzz Aldrin on the Moon during Apollo 11.",
                captions: ["en": "Buzz Aldrin on the Moon, 1969", "de": "Buzz Aldrin auf dem Mond, 1969", "it": "Buzz Aldrin sulla Luna, 1969"]),
    ]

    /// On-this-day events by month-day, with the titles of their pages.
    static let events: [String: [(Int, String, [String])]] = [
        "11-14": [(1969, "Apollo 12, the second crewed mission to land on the Moon, is launched.", ["Apollo 11"])],
        "11-15": [(1920, "The first assembly of the League of Nations is held in Geneva.", ["Nuremberg trials"])],
        "11-16": [(1945, "UNESCO is founded.", ["UNESCO"])],
        "11-17": [(1869, "The Suez Canal is inaugurated in Egypt.", ["Suez Canal"]), (1867, "Marie Curie's first birthday is still days away; Poland is under partition.", ["Marie Curie"])],
        "11-18": [(1928, "Steamboat Willie is released.", ["Ada Lovelace"])],
        "11-19": [(1863, "Abraham Lincoln delivers the Gettysburg Address.", ["Gettysburg Address"])],
        "11-20": [(1945, "The Nuremberg trials begin against 24 major Nazi war criminals.", ["Nuremberg trials"]),
                  (1902, "Albert Einstein prepares to take up work at the Swiss patent office in Bern.", ["Albert Einstein"])],
    ]

    static func feed(lang: String, date: FeedDate, articles: [EmbeddedArticle]) -> FeaturedFeed {
        let reference = EmbeddedTransport.referenceDate
        let offset = date.dayNumber - (reference.dayNumber - 6)
        let isSnapshot = !(0...6).contains(offset)
        let day = isSnapshot ? 6 : offset
        let feedDate = isSnapshot ? reference : date
        let standard = articles.filter { $0.ns == 0 && !$0.isDisambiguation }
        let summary = { (a: EmbeddedArticle) in EmbeddedTransport.summary(a, lang: lang) }

        var feed = FeaturedFeed()
        // One day in the week has no featured article, as happens upstream for some wikis.
        if day != 3 { feed.tfa = summary(standard[(day * 3) % standard.count]) }
        let previous = feedDate.adding(days: -1)
        var most: [PageSummary] = []
        for rank in 1...5 {
            var s = summary(standard[(day + rank * 2) % standard.count])
            s.views = 412_000 - rank * 61_000 + day * 3_700
            s.rank = rank
            most.append(s)
        }
        feed.mostread = .init(date: "\(previous)Z", articles: most)
        let pic = pictures[day % pictures.count]
        let captionLang: String? = pic.captions[lang] != nil ? lang : (pic.captions["en"] != nil ? "en" : pic.captions.keys.sorted().first)
        feed.image = .init(title: "File:" + pic.file, thumbnail: EmbeddedTransport.thumbnail(pic.file, width: 640), image: EmbeddedTransport.original(pic.file),
                           filePage: "https://commons.wikimedia.org/wiki/File:" + pic.file,
                           artist: .init(text: pic.artist, html: "<a href=\"//commons.wikimedia.org/wiki/User:\(pic.artist.replacingOccurrences(of: " ", with: "_"))\">\(pic.artist)</a>", lang: nil),
                           credit: .init(text: "Own work", html: "Own work", lang: nil),
                           license: .init(type: pic.license.0, code: pic.license.1, url: pic.license.2.isEmpty ? nil : pic.license.2),
                           description: .init(text: captionLang.flatMap { pic.captions[$0] } ?? pic.description, html: pic.description, lang: captionLang ?? "en"),
                           structured: pic.captions.isEmpty ? nil : .init(captions: pic.captions))
        if feedDate == reference {
            let find = { (t: String) in standard.first { $0.title == t } }
            feed.news = [
                .init(story: "<!--Nov 19-->The <a rel=\"mw:WikiLink\" href=\"./Rijksmuseum\">Rijksmuseum</a> in <a rel=\"mw:WikiLink\" href=\"./Amsterdam\">Amsterdam</a> reopens its Gallery of Honour after restoration.",
                      links: [find("Rijksmuseum") ?? standard[0], find("Amsterdam") ?? standard[0]].map(summary)),
                .init(story: "<!--Nov 18-->A transit of <a rel=\"mw:WikiLink\" href=\"./Mercury_(planet)\">Mercury</a> is observed from the Indian Ocean.",
                      links: [find("Mercury (planet)") ?? standard[1]].map(summary)),
            ]
        }
        let key = "\(TextFormat.padded(feedDate.month, 2))-\(TextFormat.padded(feedDate.day, 2))"
        feed.onthisday = (events[key] ?? []).map { year, text, titles in
            let pages = titles.compactMap { t in articles.first { $0.title == t } ?? nil }.map(summary)
            return .init(text: text, year: year, pages: pages.isEmpty ? [summary(standard[0])] : pages)
        }
        return feed
    }
}

/// The demo users' notifications (Echo, `notformat=model`). Demo-only tokens: `Bearer demo-alice`, `Bearer demo-bob`.
enum EmbeddedNotifications {
    static let users = ["demo-alice": "Alice", "demo-bob": "Bob"]
    /// alice: 120 unread (more than 99) and 15 read; bob: 3 unread and 6 read.
    static let counts = ["Alice": (unread: 120, read: 15), "Bob": (unread: 3, read: 6)]

    static func user(for authorization: String?) -> String? {
        guard let auth = authorization, auth.hasPrefix("Bearer ") else { return nil }
        return users[String(auth.dropFirst(7))]
    }

    static func token(for user: String) -> String { "\(user.lowercased())0c5e9d2f1a7b+\\" }

    static func ids(for user: String) -> [Int] {
        let c = counts[user]!
        let base = user == "Alice" ? 700_000 : 800_000
        return (0..<(c.unread + c.read)).map { base + 10 * ($0 + 1) }
    }

    static let initiallyRead: [String: Set<Int>] = {
        var out: [String: Set<Int>] = [:]
        for (user, c) in counts { out[user] = Set(ids(for: user).suffix(c.read)) }
        return out
    }()

    static let kinds: [(type: String, category: String, header: @Sendable (String, String) -> String, body: String?)] = [
        ("edit-user-talk", "edit-user-talk", { a, u in "\(a) left a message on your talk page." }, "Thanks for the copy-edit on Nyhavn — could you check the references too?"),
        ("mention", "mention", { a, u in "\(a) mentioned you on Talk:Amsterdam." }, "What do you think of the new lead? The population figure needs a source."),
        ("reverted", "reverted", { a, u in "Your edit on Madrid was reverted." }, "Undid revision: unsourced population figure"),
        ("edit-thank", "edit-thank", { a, u in "\(a) thanked you for your edit on Rijksmuseum." }, nil),
        ("welcome", "system", { _, u in "Welcome to Wikipedia, \(u)! We're glad you're here." }, nil),
        ("login-fail-new", "login-fail", { _, _ in "There have been 3 failed attempts to log in to your account from a new device." }, nil),
        ("page-linked", "article-linked", { _, _ in "A link was made from Copenhagen to Tivoli Gardens." }, nil),
        ("mention-summary", "mention", { a, u in "\(a) mentioned you in an edit summary on Mumbai." }, nil),
    ]

    /// Built (and encoded) once per user and language.
    private static let built = Mutex<[String: [EchoNotification]]>([:])
    private static let encodedCache = Mutex<[String: [Encoded]]>([:])

    /// The user's notifications, newest first, with `read` set from `read`. Built once per user and language.
    static func list(for user: String, lang: String, read: Set<Int>) -> [EchoNotification] {
        let base = built.withLock { cache -> [EchoNotification] in
            if let b = cache[user + "|" + lang] { return b }
            let b = build(for: user, lang: lang)
            cache[user + "|" + lang] = b
            return b
        }
        return base.map { n in var n = n; n.read = read.contains(n.id) ? "20261121083000" : nil; return n }
    }

    /// A notification as the embedded Echo answer writes it: its JSON in both read states, encoded once.
    struct Encoded: Sendable {
        let id: Int
        let unix: Int
        let unread: [UInt8]
        let read: [UInt8]
    }


    /// The user's notifications, newest first, each encoded once per user and language.
    static func encoded(for user: String, lang: String) -> [Encoded] {
        if let e = encodedCache.withLock({ $0[user + "|" + lang] }) { return e }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        let e = list(for: user, lang: lang, read: []).map { n -> Encoded in
            var r = n; r.read = "20261121083000"
            return Encoded(id: n.id, unix: n.timestamp?.utcunix ?? 0, unread: Array((try? encoder.encode(n)) ?? Data()), read: Array((try? encoder.encode(r)) ?? Data()))
        }
        encodedCache.withLock { $0[user + "|" + lang] = e }
        return e
    }

    private static func build(for user: String, lang: String) -> [EchoNotification] {
        let agents = user == "Alice" ? ["Bob", "Carol", "Dmitri", "Eun-ji"] : ["Alice", "Farah", "Giulia"]
        let start = 1_795_176_000  // 2026-11-20T12:00:00Z, the embedded reference date
        return ids(for: user).enumerated().map { i, id in
            let kind = kinds[(i + (user == "Bob" ? 3 : 0)) % kinds.count]
            let agent = agents[i % agents.count]
            let unix = start - i * 37 * 60
            let iso = Timestamp.rfc3339(seconds: unix)
            let json: [String: Any] = [
                "wiki": "\(lang)wiki", "id": id, "type": kind.type, "category": kind.category, "section": kind.category == "system" || kind.category == "login-fail" ? "alert" : "message",
                "timestamp": ["utciso8601": iso, "utcunix": unix, "unix": String(unix)],
                "title": ["full": "User talk:\(user)", "namespace": "User_talk", "namespace-key": 3, "text": user],
                "agent": ["id": 1000 + i % agents.count, "name": agent],
                "*": ["header": kind.header(agent, user), "compactHeader": kind.header(agent, user), "body": kind.body ?? "",
                      "icon": kind.type, "links": ["primary": ["url": "https://\(lang).wikipedia.org/wiki/User_talk:\(user)#c-\(id)", "label": "View"],
                                                    "secondary": [["url": "https://\(lang).wikipedia.org/wiki/User:\(agent)", "label": agent, "icon": "userAvatar"]]]] as [String: Any],
            ]
            let data = try! JSONSerialization.data(withJSONObject: json)
            return try! JSONDecoder().decode(EchoNotification.self, from: data)
        }
    }
}


import Foundation
import LedeBasics
import Wikimedia
import HTTPCore
import Upstream

/// Saved articles offline, without sockets: the sync token, what changed since one, which of an image's sizes the
/// reader downloads, which URLs a manifest may name, and the manifest's shape.
enum OfflineRules {
    /// The width images are chosen for when the request names none: a phone's 320-point screen at 2×.
    static let defaultWidth = 640
    static let widthRange = 100...4096
    /// Seconds either side of a sync's time that still count as "since": an edit stamped in the second the revisions
    /// were read, clocks of two wikis a little apart. Listing an article twice costs a manifest; missing one costs the
    /// reader an old copy, so the margin is on the side of listing.
    static let margin = 5
    /// A token older than this names removals the reading lists no longer keep (their retention is 30 days): the
    /// answer is the whole list again (`complete`).
    static let retention = 29 * 86_400
    /// The most images one article's manifest names (the largest media lists stay below it).
    static let maxImages = 500

    // MARK: - The sync token

    /// What a sync token says: whose list (the reading list's id, different for every user) and the wiki's time the
    /// answer was read at. Not secret, and needs none: every answer is read with the reader's own credentials; the
    /// list id only tells a token of another user's from one of theirs.
    struct SyncToken: Equatable, Sendable {
        var list: Int
        var since: Int
    }

    /// `o1.<list>.<since>.<check>`: the check (8 hex digits of FNV-1a over the rest) tells a token this server wrote
    /// from one mistyped or cut short.
    static func write(_ t: SyncToken) -> String {
        let body = "o1.\(t.list).\(t.since)"
        return body + "." + check(body)
    }

    static func read(_ raw: String) -> SyncToken? {
        guard raw.utf8.count <= 64 else { return nil }
        let parts = raw.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "o1", parts[1].utf8.allSatisfy({ (48...57).contains($0) }), parts[2].utf8.allSatisfy({ (48...57).contains($0) }),
              let list = Int(parts[1]), let since = Int(parts[2]), String(parts[3]) == check(parts[0..<3].joined(separator: ".")) else { return nil }
        return SyncToken(list: list, since: since)
    }

    private static func check(_ body: String) -> String {
        let h = FNV1a.value(Array(body.utf8))
        return String(UInt32(truncatingIfNeeded: h ^ (h >> 32)), radix: 16)
    }

    // MARK: - What changed

    /// Whether a stamp (RFC 3339) falls at or after `since` (within the margin). A missing or unreadable stamp counts
    /// as changed: an article is listed again rather than left stale.
    static func isSince(_ stamp: String?, _ since: Int) -> Bool {
        guard let stamp, let t = Timestamp.parseRFC3339(stamp) else { return true }
        return t >= Double(since - margin)
    }

    // MARK: - URLs a manifest may name

    /// A URL the phone may download from: `https:` (a protocol-relative one made so) on Wikimedia's own hosts
    /// (`*.wikipedia.org`, `*.wikimedia.org`); nil for anything else, so an upstream answer cannot send the reader
    /// elsewhere.
    static func wikimediaURL(_ raw: String) -> String? {
        let url: String
        if raw.hasPrefix("//") { url = "https:" + raw } else if raw.hasPrefix("https://") { url = raw } else { return nil }
        let rest = url.utf8.dropFirst(8)
        let hostEnd = rest.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? rest.endIndex
        guard let host = String(rest[rest.startIndex..<hostEnd])?.lowercased(), !host.isEmpty,
              host.utf8.allSatisfy({ ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 45 || $0 == 46 }),
              url.utf8.allSatisfy({ $0 > 32 && $0 < 127 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) else { return nil }
        let trusted = ["wikipedia.org", "wikimedia.org"]
        guard trusted.contains(where: { host == $0 || host.hasSuffix("." + $0) }) else { return nil }
        return url
    }

    /// What an offline resource is, by PCS's paths (`/data/css/`, `/data/javascript/`, `/data/i18n/`).
    static func resourceKind(_ url: String) -> String {
        if url.contains("/data/css/") { return "css" }
        if url.contains("/data/javascript/") { return "javascript" }
        if url.contains("/data/i18n/") { return "messages" }
        return "other"
    }

    // MARK: - Images

    /// The pixel width a Wikimedia thumbnail's name says (`…/640px-Name.jpg` → 640; also `lossy-page1-640px-…`).
    static func thumbWidth(_ url: String) -> Int? {
        guard let slash = url.lastIndex(of: "/") else { return nil }
        let name = url[url.index(after: slash)...]
        guard let px = name.range(of: "px-") else { return nil }
        let digits = name[..<px.lowerBound].reversed().prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, digits.count <= 5 else { return nil }
        return Int(String(digits.reversed()))
    }

    /// The size of an item the reader downloads: of its `srcset` (the sizes the mobile HTML names), the narrowest at
    /// least `width` wide, else the widest; the 1× entry when no name says its width. Nil when it has none on
    /// Wikimedia's hosts.
    static func image(_ item: MediaListItem, width: Int) -> Manifest.Image? {
        var candidates: [(url: String, width: Int?)] = []
        for s in item.srcset { if let url = wikimediaURL(s.src) { candidates.append((url, thumbWidth(url))) } }
        if candidates.isEmpty, let src = item.src, let url = wikimediaURL(src) { candidates.append((url, thumbWidth(url))) }
        guard !candidates.isEmpty else { return nil }
        let sized = candidates.compactMap { c in c.width.map { (c.url, $0) } }
        let chosen: (String, Int?)
        if let fit = sized.filter({ $0.1 >= width }).min(by: { $0.1 < $1.1 }) { chosen = (fit.0, fit.1) }
        else if let widest = sized.max(by: { $0.1 < $1.1 }) { chosen = (widest.0, widest.1) }
        else { chosen = (candidates[0].url, nil) }
        return Manifest.Image(file: item.title, type: item.type, url: chosen.0, width: chosen.1)
    }

    // MARK: - The manifest

    /// One revision of one page as the phone stores it: immutable, kept per revision and width by every reader.
    struct Manifest: Sendable, Equatable, Encodable {
        struct Resource: Sendable, Equatable, Encodable { var kind: String; var url: String }
        struct Image: Sendable, Equatable, Encodable { var file: String; var type: String; var url: String; var width: Int? }
        var revision: Int
        var timestamp: String?
        /// The mobile HTML of this revision.
        var html: String
        var resources: [Resource]
        var images: [Image]
    }

    /// The manifest of `page` at `revision` from PCS's two answers: only URLs on Wikimedia's hosts, each once.
    static func manifest(site: String, page: String, revision: Int, timestamp: String?, resources: [String], media: [MediaListItem], width: Int) -> Manifest {
        var seen = Set<String>()
        let res = resources.compactMap { raw -> Manifest.Resource? in
            guard let url = wikimediaURL(raw), seen.insert(url).inserted else { return nil }
            return Manifest.Resource(kind: resourceKind(url), url: url)
        }
        var images: [Manifest.Image] = []
        for item in media where images.count < maxImages {
            if let image = image(item, width: width), seen.insert(image.url).inserted { images.append(image) }
        }
        let html = site + "/api/rest_v1/page/mobile-html/" + UpstreamRequest.percentEncode(ArticleTitle.normalise(page), keep: ":") + "/\(revision)"
        return Manifest(revision: revision, timestamp: timestamp, html: html, resources: res, images: images)
    }

    /// One article of an answer: its manifest, or a placeholder the app keeps its copy under and asks again for.
    struct Article: Sendable, Encodable {
        var lang: String
        /// As saved (the Saved tab's title).
        var title: String
        /// The page the wiki names it now, when that differs (a redirect followed, a title converted).
        var page: String?
        var status: String
        var revision: Int?
        var timestamp: String?
        var html: String?
        var resources: [Manifest.Resource]?
        var images: [Manifest.Image]?
        var reason: String?
        var retryAfterSeconds: Int?

        init(lang: LanguageCode, title: String, page: String?, manifest: Manifest) {
            self.lang = lang.code; self.title = title; self.page = page == title ? nil : page; status = "ok"
            revision = manifest.revision; timestamp = manifest.timestamp; html = manifest.html; resources = manifest.resources; images = manifest.images
        }

        init(lang: LanguageCode, title: String, page: String?, placeholder reason: String, retryAfter: Int) {
            self.lang = lang.code; self.title = title; self.page = page == title ? nil : page; status = "placeholder"
            self.reason = reason; retryAfterSeconds = retryAfter
        }
    }

    /// An article the reader no longer needs: taken off Saved (`unsaved`) or gone from the wiki (`deleted`).
    struct Removed: Sendable, Encodable, Hashable {
        var lang: String
        var title: String
        var reason: String
    }
}

import Foundation
import HTTPServer
import Imaging
import Synchronization
import LedeBasics
import Wikimedia
import HTTPCore
import Upstream

/// The share card's work: the summary (its first sentence, its lead image), the lead image's thumbnail from the media
/// origin (its bytes and pixels capped before anything is decoded), the image's credits, the render on a bounded pool
/// of workers, and the encoded card kept by everything it depends on (language, title, the page's last edit, text,
/// scale, format).
final class ShareService: Sendable {
    struct Settings: Sendable {
        /// Lead image bytes accepted, at most (a 640 px thumbnail is about 100 KB).
        var maxImageBytes = 4 << 20
        /// Lead image pixels accepted, at most: checked on the header, before decoding (40 megapixels are refused).
        var maxImagePixels = 16_000_000
        /// Deadline of the lead image's fetch.
        var imageTimeout = 5.0
        /// Renders waiting beyond those running, at most; past it a card is `503` with `Retry-After`.
        var queueBound = 16
        /// The thumbnail width asked of the media origin.
        var thumbnailWidth = 640
        /// Cards kept, at most, and their bytes (a 1024 px JPEG is about 100 KB, a PNG up to 600 KB).
        var maxCards = 2_000
        var maxCardBytes = 48 << 20
    }

    /// A selection's part of a card's key: 128 bits of SipHash under this process's random key, so no client can make
    /// two selections share a card (a 64-bit FNV could be collided on purpose).
    static func digest(_ selection: String) -> String { Digest.hex128(selection) }

    let api: any WikimediaAPI
    /// The lead images' origin (upload.wikimedia.org), through the upstream guard.
    let media: any GuardedUpstream
    /// The encoded cards, in a budget of their own: any client can ask for a card of any selection, and a flood of them
    /// must not push article screens and summaries out of the shared responses.
    let cards: UpstreamCache
    /// Each page revision's lead image, decoded once with its credits (or nil: none to show), for every card of that
    /// page whatever its text: a handful of pages, a few hundred KB each.
    let leads: KeyedCache<String>
    let settings: Settings
    let typesetters: TypesetterPool?
    let workers: Workers
    private let waiting = Atomic<Int>(0)

    init(api: any WikimediaAPI, media: any GuardedUpstream, settings: Settings = Settings(), catalog: FontCatalog? = FontCatalog.discover()) {
        self.api = api; self.media = media; self.settings = settings
        cards = UpstreamCache(limits: .init(maxEntries: settings.maxCards, maxBytes: settings.maxCardBytes, staleIfError: 0))
        leads = KeyedCache(limits: .init(maxEntries: 64, maxBytes: 48 << 20, staleIfError: 0))
        typesetters = catalog.map(TypesetterPool.init)
        workers = Workers(count: ProcessInfo.processInfo.activeProcessorCount)
    }

    enum Format: String, Sendable { case png, jpeg }

    /// The card's text: the selection, or the article's first sentence.
    static func text(selection: String?, summary: PageSummary, lang: LanguageCode) -> String {
        if let selection, !selection.isEmpty { return selection }
        return ShareCard.firstSentence(Card(summary: summary, lang: lang).extract)
    }

    func card(lang: LanguageCode, title: String, selection: String?, scale: Int, format: Format) async throws -> PreparedBody {
        guard let typesetters else {
            throw Problem(status: 503, slug: "share-fonts-missing", .problemShareFontsMissing, "fonts-noto-core",
                          headers: ["Retry-After": "3600"])
        }
        let summary = try await api.summary(lang: lang, title: title)
        // The page's last edit stands for its revision; without a selection the text is the first sentence of that
        // revision, made only when the card is (a kept card is found without reading the summary's extract).
        let textKey = selection.map(Self.digest) ?? "first-sentence"
        let page = "\(lang.tag):\(ArticleTitle.normalise(summary.title)):\(summary.timestamp ?? "-")"
        let key = "share:\(page):\(scale):\(format.rawValue):\(textKey)"
        if let kept = cards.cachedValue(key, as: PreparedBody.self) { return kept }
        return try await cards.value(key, ttl: 86_400) { [self] in
            let text = Self.text(selection: selection, summary: summary, lang: lang)
            // One fetch and one decode per page revision, however many cards (concurrent ones wait for the same).
            let lead: LeadImage? = try await leads.value(page, ttl: 3_600) { [self] in
                let image = try await leadImage(summary, lang: lang)
                return (image, 256 + (image?.image.pixels.count ?? 0))
            }
            let content = ShareCard.Content(text: ShareCard.visible(text), title: ShareCard.visible(Card(summary: summary, lang: lang).title), language: lang.code, image: lead?.image,
                                            imageLicense: lead?.license, imageAuthor: lead?.author, wordsLanguage: lang.tag)
            let bytes = try await render(content, scale: scale, format: format, typesetters: typesetters)
            let body = PreparedBody(contentType: format == .png ? "image/png" : "image/jpeg", bytes: bytes,
                                    headers: ["Cache-Control": "public, max-age=86400", "Content-Language": lang.bcp47, "Vary": Responses.varyByLanguage])
            return (body, bytes.count)
        }
    }

    /// Renders off the event loops, on the share pool; refused with `503` when the pool's queue is full.
    func render(_ content: ShareCard.Content, scale: Int, format: Format, typesetters: TypesetterPool) async throws -> [UInt8] {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        guard waiting.wrappingAdd(1, ordering: .relaxed).newValue <= cores + settings.queueBound else {
            waiting.wrappingSubtract(1, ordering: .relaxed)
            throw Problem(status: 503, slug: "share-busy", .problemShareBusy,
                          headers: ["Retry-After": "\(1 + Int.random(in: 0...2))"])
        }
        defer { waiting.wrappingSubtract(1, ordering: .relaxed) }
        return try await workers.run {
            let image = typesetters.with { ShareCard.render(content, scale: scale, typesetter: $0) }
            return Self.encode(image, format: format)
        }
    }

    /// PNG, or a JPEG under 300 KB (WhatsApp drops larger previews): the quality stepped down until it fits.
    static func encode(_ image: RGBImage, format: Format) -> [UInt8] {
        guard format == .jpeg else { return PNG.encode(image) }
        var bytes: [UInt8] = []
        for quality in [86, 76, 64, 50] {
            bytes = JPEG.encode(image, quality: quality)
            if bytes.count < 300_000 { break }
        }
        return bytes
    }

    struct LeadImage: Sendable { var image: RGBImage; var license: String?; var author: String? }

    /// The summary's lead image at the thumbnail width, with its credits; nil when the page has none, when it is not a
    /// JPEG (a drawing's PNG rendering) or when its file's licence cannot be read (no image is shown without it).
    /// Refused (502) when larger than the caps or unreadable.
    func leadImage(_ summary: PageSummary, lang: LanguageCode) async throws -> LeadImage? {
        guard let source = summary.thumbnail?.source ?? summary.originalimage?.source, let path = Self.thumbnailPath(source, width: settings.thumbnailWidth),
              let file = Self.fileName(source) else { return nil }
        guard file.lowercased().hasSuffix(".jpg") || file.lowercased().hasSuffix(".jpeg") else { return nil }
        async let credits = try? api.fileInfo(lang: lang, files: ["File:" + file])
        let response = try await media.answer(UpstreamRequest(lang: lang.code, path: path, kind: .media))
        switch response.status {
        case 200..<300: break
        case 404: return nil
        default: throw UpstreamError.unavailable(status: response.status)
        }
        let image = try await Self.decode(response.body, settings: settings, workers: workers)
        guard let info = (await credits)?["File:" + file], let license = info.metadata["LicenseShortName"].map(HTMLText.plain), !license.isEmpty else { return nil }
        let author = info.metadata["Artist"].map(HTMLText.plain).flatMap { $0.isEmpty ? nil : $0 }
        return LeadImage(image: image, license: license, author: author)
    }

    /// The image's bytes checked and decoded (off the loops): over the byte cap, over the pixel cap by its header, or
    /// unreadable (cut short, damaged) is a 502 problem.
    static func decode(_ bytes: [UInt8], settings: Settings, workers: Workers) async throws -> RGBImage {
        guard bytes.count <= settings.maxImageBytes else {
            throw Problem(status: 502, slug: "share-image-refused", .problemShareImageTooLarge, String(settings.maxImageBytes))
        }
        let result: Result<RGBImage, JPEG.Failure> = try await workers.run { Result { () throws(JPEG.Failure) in try JPEG.decode(bytes, maxPixels: settings.maxImagePixels) } }
        switch result {
        case .success(let image): return image
        case .failure(.tooLarge(let w, let h)):
            throw Problem(status: 502, slug: "share-image-refused", .problemShareImageTooManyPixels, String(w), String(h), String(settings.maxImagePixels))
        case .failure(.unreadable):
            throw Problem(status: 502, slug: "share-image-refused", .problemShareImageUnreadable)
        }
    }

    /// The path of a Commons thumbnail URL at `width` (`…/320px-Name.jpg` → `…/640px-Name.jpg`); an original's path
    /// becomes its thumbnail's. Nil for a URL of another host.
    static func thumbnailPath(_ url: String, width: Int) -> String? {
        let ref = URIReference(url.hasPrefix("//") ? "https:" + url : url)
        guard let origin = ref.origin, origin.hasSuffix("upload.wikimedia.org") else { return nil }
        let path = ref.path
        var parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard let last = parts.last, !last.isEmpty else { return nil }
        if parts.contains("thumb") {
            guard let dash = last.firstIndex(of: "-"), last[..<dash].hasSuffix("px") else { return path }
            parts[parts.count - 1] = "\(width)px" + last[dash...]
            return parts.joined(separator: "/")
        }
        // /wikipedia/commons/a/ab/Name.jpg → /wikipedia/commons/thumb/a/ab/Name.jpg/640px-Name.jpg
        guard parts.count >= 5 else { return nil }
        parts.insert("thumb", at: 3)
        return parts.joined(separator: "/") + "/\(width)px-\(last)"
    }

    /// The file's name in a Commons URL (`Albert_Einstein_Head.jpg`), percent-decoded.
    static func fileName(_ url: String) -> String? {
        let parts = URIReference(url.hasPrefix("//") ? "https:" + url : url).path.split(separator: "/").map(String.init)
        guard let i = parts.firstIndex(of: "thumb") else { return parts.last.map { $0.removingPercentEncoding ?? $0 } }
        guard parts.count > i + 3 else { return nil }
        return parts[i + 3].removingPercentEncoding ?? parts[i + 3]
    }
}

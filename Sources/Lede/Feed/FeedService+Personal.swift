import Foundation
import Synchronization
import HTTPServer
import LedeBasics
import Wikimedia
import HTTPCore
import Upstream

/// The personal sections (because you read, nearby, continue reading): each kept by its own key, built within the
/// section deadline, a placeholder past it.
extension FeedService {
    /// A personal section as kept: an encoded section, a nearby cell (numbers written per request), or nothing
    /// (the continue-reading article no longer exists).
    enum PersonalPart: Sendable {
        case section(Fragment)
        case nearby(NearbyCell)
        case absent

        var cost: Int {
            switch self {
            case .section(let f): return f.body.bytes.count + f.body.deflated.count
            case .nearby(let cell): return cell.cost
            case .absent: return 64
            }
        }
    }

    /// The three personal parts of one request (a slot each: no dictionary per request).
    struct PersonalParts: Sendable {
        var because, nearby, continueReading: PersonalPart?
        subscript(_ kind: SectionKind) -> PersonalPart? {
            get {
                switch kind {
                case .becauseYouRead: return because
                case .nearby: return nearby
                case .continueReading: return continueReading
                default: return nil
                }
            }
            set {
                switch kind {
                case .becauseYouRead: because = newValue
                case .nearby: nearby = newValue
                case .continueReading: continueReading = newValue
                default: break
                }
            }
        }
    }

    static let personalKinds: [SectionKind] = [.becauseYouRead, .nearby, .continueReading]
    static let nearbyRadius = 10_000
    /// How long a personal fragment is kept: as long as the content route answers of the same data.
    static func ttl(_ kind: SectionKind) -> Double { kind == .becauseYouRead ? 600 : 300 }

    /// The fragment cache key of a personal section this request shows, or nil when it does not show it.
    func personalKey(_ kind: SectionKind, _ r: FeedRequest, now clock: Date? = nil) -> FeedKey? {
        switch kind {
        case .becauseYouRead:
            guard let title = r.because else { return nil }
            return FeedKey(.because, lang: r.lang, title: title)   // already normalised
        case .continueReading:
            guard let title = r.continueTitle, FeedRequest.showsContinueReading(backgroundedAt: r.backgroundedAt, now: clock ?? now()) else { return nil }
            return FeedKey(.continueReading, lang: r.lang, title: title)
        case .nearby:
            guard let point = r.nearby else { return nil }
            let cell = GeoCell(point)
            return FeedKey(.nearby, lang: r.lang, cell.latIndex, cell.lonIndex)
        default:
            return nil
        }
    }

    /// Builds (or finds) each personal part within the section deadline; failures become placeholders, which
    /// are never kept (the upstream cache and guard decide when to try again).
    func personalParts(_ request: FeedRequest) async -> PersonalParts {
        await withTaskGroup(of: (SectionKind, PersonalPart?).self) { group in
            for kind in Self.personalKinds where request.sections.contains(kind) {
                group.addTask { [self] in (kind, await personalPart(kind, request, deadline: sectionTimeout)) }
            }
            var out = PersonalParts()
            for await (kind, part) in group { if let part { out[kind] = part } }
            return out
        }
    }

    /// One personal part within `deadline` (nil when the request does not show it). A failure is a placeholder, never
    /// kept; work that misses the deadline goes on and fills the fragment cache for the next request.
    func personalPart(_ kind: SectionKind, _ request: FeedRequest, deadline: Double, retry: Int? = nil) async -> PersonalPart? {
        guard let key = personalKey(kind, request) else { return nil }
        let outcome = await withDeadline(deadline) { [self] in
            try await fragments.value(key, ttl: Self.ttl(kind)) { [self] () async throws -> (PersonalPart, Int) in
                let part = try await buildPersonal(kind, request)
                return (part, part.cost)
            }
        }
        switch outcome {
        case .ok(let part): return part
        case .timeout: return .section(placeholder(kind, .timeout, retry: retry))
        // No such wiki upstream (or not in the embedded default): the section is left out, not failed.
        case .failed(let e) where Self.isNotFound(e): return .absent
        case .failed(let e): return .section(placeholder(kind, status(of: e), retry: retry))
        }
    }

    func buildPersonal(_ kind: SectionKind, _ r: FeedRequest) async throws -> PersonalPart {
        let lang = r.lang
        switch kind {
        case .becauseYouRead:
            let source = r.because!
            let result = try await api.related(lang: lang, title: source)
            let section = FeedSection(kind: .becauseYouRead, items: ContentRules.related(result, source: source, lang: lang, limit: 3),
                                      source: ArticleTitle.display(source))
            return .section(Fragment(kind: kind, body: BodyFragment(JSONLines.encode(section)), status: .ok))
        case .continueReading:
            do {
                let s = try await api.summary(lang: lang, title: r.continueTitle!)
                return .section(Fragment(kind: kind, body: BodyFragment(JSONLines.encode(FeedSection(kind: .continueReading, items: [Card(summary: s, lang: lang)]))), status: .ok))
            } catch UpstreamError.notFound {
                return .absent   // the article is gone: no card, not a retry
            }
        default:
            let centre = GeoCell(r.nearby!).centre
            let result = try await api.nearby(lang: lang, latitude: centre.latitude, longitude: centre.longitude, radiusMeters: Self.nearbyRadius)
            return .nearby(NearbyCell(result, lang: lang))
        }
    }
}

import Foundation
import Synchronization
import HTTPServer
import LedeBasics
import Wikimedia
import HTTPCore

/// The feed answered: from memory when every part it needs is at hand (a prepared body, or a personal feed assembled
/// from cached fragments with no encoding), else after its parts arrive; a feed whose every section is a placeholder
/// is a 502.
extension FeedService {
    /// The response when every part the request needs is at hand: answered on the event loop with no upstream
    /// work and no encoding. A feed without personal parameters is a prepared body; a personal one is assembled
    /// from the cached shared part, the cached personal fragments and the per-request numbers.
    func cachedResponse(for request: FeedRequest) -> HTTPResponse? {
        if !request.isPersonal {
            let key = PreparedKey(request)
            let t = now().timeIntervalSinceReferenceDate
            return prepared.withLock { prepared in
                guard let entry = prepared[key], entry.expires > t else { return nil }
                return .prepared(entry.body)
            }
        }
        // The clock read once for the four lookups (both caches run on `now`).
        let clock = now(), t = clock.timeIntervalSinceReferenceDate
        var part: SharedPart?
        if request.wantsShared {
            guard let cached = sharedCache.cachedValue(sharedKey(request), as: SharedPart.self, at: t) else { return nil }
            part = cached
        }
        var personal = PersonalParts()
        for kind in Self.personalKinds where request.sections.contains(kind) {
            switch personalKey(kind, request, now: clock) {
            case nil: continue
            case let key?:
                guard let value = fragments.cachedValue(key, as: PersonalPart.self, at: t) else { return nil }
                personal[kind] = value
            }
        }
        do { return try assemble(request, shared: part, personal: personal) } catch { return Responses.problem(error) }
    }

    func feed(_ request: FeedRequest) async throws -> HTTPResponse {
        async let sharedPart: SharedPart? = request.wantsShared ? shared(lang: request.lang, date: request.date, isToday: request.isToday) : nil
        async let personal = personalParts(request)
        let part = await sharedPart
        // A part past its lifetime, served while its refresh runs: answers showing it are kept only until the refresh
        // is expected.
        let stale = part.map { $0.expires < now() } == true
        let response = try assemble(request, shared: part, personal: await personal, maxAge: stale ? staleMaxAge : nil)
        if !request.isPersonal, case .assembled(let body) = response.body {
            // Kept whole: compressed once as one stream, answered on the loop until the shared part expires.
            let prepared = PreparedBody(contentType: "application/json", bytes: body.identityBytes(), headers: body.fields?.headers ?? response.headers)
            let expires = (part?.expires ?? now().addingTimeInterval(5)).timeIntervalSinceReferenceDate
            let t = now().timeIntervalSinceReferenceDate
            let key = PreparedKey(request), maxPrepared = self.maxPrepared
            self.prepared.withLock { kept in
                if kept.count >= maxPrepared { kept = kept.filter { $0.value.expires > t } }
                if kept.count < maxPrepared { kept[key] = (prepared, expires) }
            }
            return .prepared(prepared)
        }
        return response
    }

    /// The feed body: the shared part's head, then each chosen section's fragment (the nearby section with this
    /// user's numbers), joined by commas. A problem when every chosen section is a placeholder.
    func assemble(_ request: FeedRequest, shared part: SharedPart?, personal: PersonalParts, maxAge: Int? = nil) throws -> HTTPResponse {
        var body = AssembledBody(capacity: 24)
        var chosen = 0
        var statuses = Statuses()
        var earliestRetry: Int? = maxAge
        let wholeRun = request.showsEverySharedSection
        if let part, part.date == request.date, part.lang == request.lang.tag {
            if wholeRun {
                body.append(part.run)
                statuses.add(part.runStatuses)
                earliestRetry = Statuses.earlier(earliestRetry, part.runEarliestRetry)
                chosen += part.runStatuses.count
            } else {
                body.append(part.head)
            }
        } else {
            body.append(literal: Self.head(date: request.date, generatedAt: Timestamp.rfc3339Seconds(), lang: request.lang.tag))
        }
        for kind in request.sections {
            if kind.isShared {
                if wholeRun { continue }
                guard let f = part?.fragments[kind] else { continue }
                if chosen > 0 { body.append(byte: UInt8(ascii: ",")) }
                body.append(f.body); chosen += 1
                statuses.append(f.status, retry: f.retryAfter, earliest: &earliestRetry)
            } else {
                // The part passed where it is held (a borrowed argument): no copy retained and released per section.
                switch kind {
                case .becauseYouRead: appendPersonal(personal.because, kind, request, to: &body, statuses: &statuses, retry: &earliestRetry, chosen: &chosen)
                case .nearby: appendPersonal(personal.nearby, kind, request, to: &body, statuses: &statuses, retry: &earliestRetry, chosen: &chosen)
                case .continueReading:
                    appendPersonal(personal.continueReading, kind, request, to: &body, statuses: &statuses, retry: &earliestRetry, chosen: &chosen)
                default: continue
                }
            }
        }
        if let problem = allPlaceholders(statuses) { throw problem }
        body.append(literal: Self.tail)
        if earliestRetry.map({ $0 >= 60 }) ?? true, request.lang.code == "en" {
            // The usual answer's fields, rendered once.
            body.fields = request.isPersonal ? Self.englishPersonalFields : Self.englishSharedFields
            return .assembled(body)
        }
        return .assembled(body, headers: headers(request, earliestRetry: earliestRetry))
    }

    /// A personal section into an answer being assembled (with the comma before it when it is not the first).
    func appendPersonal(_ part: PersonalPart?, _ kind: SectionKind, _ request: FeedRequest, to body: inout AssembledBody,
                                statuses: inout Statuses, retry earliestRetry: inout Int?, chosen: inout Int) {
        switch part {
        case .section(let f)?:
            if chosen > 0 { body.append(byte: UInt8(ascii: ",")) }
            body.append(f.body); chosen += 1
            statuses.append(f.status, retry: f.retryAfter, earliest: &earliestRetry)
        case .nearby(let cell)?:
            guard let point = request.nearby else { return }
            if chosen > 0 { body.append(byte: UInt8(ascii: ",")) }
            body.append(nearbyMemo.section(cell, user: point, radius: Double(Self.nearbyRadius))); chosen += 1
            statuses.append(.ok)
        case .absent?, nil:
            if kind == .nearby, request.incompleteLocation {
                // Not counted as a failed section: nothing upstream failed, the request lacked half a point.
                if chosen > 0 { body.append(byte: UInt8(ascii: ",")) }
                body.append(Self.incompleteLocation); chosen += 1
            }
        }
    }

    /// What the sections of one answer came out as, counted (no list per request).
    struct Statuses: Sendable {
        var count = 0, failed = 0, backingOff = 0
        var longestWait: Int?
        /// Another run's counts added to these.
        mutating func add(_ other: Statuses) {
            count += other.count; failed += other.failed; backingOff += other.backingOff
            if let w = other.longestWait { longestWait = max(longestWait ?? w, w) }
        }
        /// `s` counted, and `retry` (a section's retryAfterSeconds) kept in `earliest` when it is sooner.
        mutating func append(_ s: Status, retry: Int?, earliest: inout Int?) {
            append(s)
            earliest = Self.earlier(earliest, retry)
        }
        /// The sooner of two retries, either of which may be absent.
        static func earlier(_ a: Int?, _ b: Int?) -> Int? {
            guard let b else { return a }
            return min(a ?? b, b)
        }
        mutating func append(_ s: Status) {
            count += 1
            if s != .ok && s != .timeout { failed += 1 }
            if case .backingOff(let w) = s { backingOff += 1; longestWait = max(longestWait ?? w, w) }
        }
    }

    /// Every chosen section failed: one problem instead of a feed of placeholders. Sections merely slow (still on their
    /// way at the section deadline) are not failures: that feed is answered, placeholders and all.
    func allPlaceholders(_ statuses: Statuses) -> Problem? {
        guard statuses.count > 0, statuses.failed == statuses.count else { return nil }
        if statuses.backingOff == statuses.count, let wait = statuses.longestWait {
            return Problem(status: 503, slug: "upstream-rate-limited", .problemUpstreamRateLimited, String(wait),
                           headers: ["Retry-After": "\(wait)"])
        }
        return Problem(status: 502, slug: "upstream-unavailable", .problemFeedUnavailable, headers: ["Retry-After": "\(retryAfterSeconds)"])
    }

    static func head(date: FeedDate, generatedAt: String, lang: String) -> String {
        "{\"date\":\"\(date)\",\"generatedAt\":\"\(generatedAt)\",\"lang\":\"\(lang)\",\"sections\":["
    }
    static let tail = Array("]}".utf8)
    static let incompleteLocation = BodyFragment(JSONLines.encode(FeedSection<NoItem>(kind: .nearby, status: "placeholder", items: [], reason: "incomplete-location")))
}

import Foundation
import HTTPServer
import LedeBasics
import Wikimedia
import HTTPCore

/// `GET /feed` with `Accept: application/jsonl`: the feed as JSON Lines, each section the moment it exists. The
/// first line (the head) is written before any upstream wait: the date, `generatedAt`, the language and `kinds`, the
/// ordered kinds that may follow. Every warm section goes out in that same first write; then one line per section as
/// its upstream answers — the very object the classic answer holds for it — in the order they complete. A section
/// still missing at the upstream deadline becomes its placeholder, and the answer ends after the last line. A kind
/// Wikipedia turns out to have no card for (no news on a past day, no featured feed on a small wiki, a continue-
/// reading article that is gone) sends no line.
extension FeedService {
    /// The kinds a streamed answer announces, in the request's order.
    func announcedKinds(_ r: FeedRequest) -> [SectionKind] {
        r.sections.filter { kind in
            switch kind {
            case .news: return r.isToday
            case .becauseYouRead, .continueReading: return personalKey(kind, r) != nil
            case .nearby: return r.nearby != nil || r.incompleteLocation
            default: return true
            }
        }
    }

    static func streamHead(date: FeedDate, generatedAt: String, lang: String, kinds: [SectionKind]) -> [UInt8] {
        var line = "{\"date\":\"\(date)\",\"generatedAt\":\"\(generatedAt)\",\"kinds\":["
        line += kinds.map { "\"\($0.rawValue)\"" }.joined(separator: ",")
        line += "],\"lang\":\"\(lang)\"}\n"
        return Array(line.utf8)
    }

    /// A streamed answer is the user's own and changes as it is written: never stored by a cache.
    func streamHeaders(_ r: FeedRequest) -> HTTPHeaders {
        var h = HTTPHeaders()
        h.set("Cache-Control", "private, no-store")
        h.set("Vary", "Accept, Accept-Encoding, Accept-Language")
        h.set("Content-Language", r.lang.bcp47)
        return h
    }

    /// The streamed answer. When every section is warm the whole answer is known at once: it is sent as one body on
    /// the loop (the same lines, framed by Content-Length), with no producer at all.
    func stream(_ request: FeedRequest) -> HTTPResponse {
        let warm = warmLines(request)
        if warm.pending.isEmpty {
            return HTTPResponse(status: 200, contentType: JSONLines.mediaType, bytes: warm.first, headers: streamHeaders(request))
        }
        return .stream(contentType: JSONLines.mediaType, headers: streamHeaders(request)) { [self] body in
            try await produceLines(request, warm, body)
        }
    }

    /// The head line and every warm section's line, and the kinds still to come.
    struct WarmLines: Sendable {
        var kinds: [SectionKind]
        var first: [UInt8]
        var pending: Set<SectionKind>
    }

    func warmLines(_ r: FeedRequest) -> WarmLines {
        let kinds = announcedKinds(r)
        var first = Self.streamHead(date: r.date, generatedAt: Timestamp.rfc3339Seconds(), lang: r.lang.tag, kinds: kinds)
        var pending = Set(kinds)
        // What is warm goes out with the head.
        if r.wantsShared, let part = sharedCache.cachedValue(sharedKey(r), as: SharedPart.self), part.date == r.date {
            let complete = part.landed == nil   // no placeholder in it: a kind it lacks has no card
            for kind in kinds where kind.isShared {
                if let f = part.fragments[kind], f.status == .ok { JSONLines.appendLine(f.body.bytes, to: &first); pending.remove(kind) }
                else if complete && part.fragments[kind] == nil { pending.remove(kind) }
            }
        }
        for kind in kinds where !kind.isShared {
            if kind == .nearby && r.incompleteLocation {
                JSONLines.appendLine(Self.incompleteLocation.bytes, to: &first); pending.remove(kind); continue
            }
            guard let key = personalKey(kind, r), let part = fragments.cachedValue(key, as: PersonalPart.self) else { continue }
            first.append(contentsOf: line(part, r))   // already a whole line (or nothing)
            pending.remove(kind)
        }
        return WarmLines(kinds: kinds, first: first, pending: pending)
    }

    func produceLines(_ r: FeedRequest, _ warm: WarmLines, _ body: BodyWriter) async throws {
        let kinds = warm.kinds, pending = warm.pending
        try await body.write(warm.first)

        // The rest, each within the upstream deadline, written as it lands. Shared sections built here are kept as the
        // shared part when they are all there and all real, so the next answer (streamed or classic) has them warm.
        let deadline = upstreamTimeout
        let api = self.api, pool = self.random
        let buildsSharedPart = r.showsEverySharedSection && SectionKind.ordered.allSatisfy { !$0.isShared || pending.contains($0) || ($0 == .news && !r.isToday) }
        var shared: [SectionKind: Fragment] = [:]
        var sharedComplete = true
        try await withThrowingTaskGroup(of: (lines: [UInt8], shared: [SectionKind: Fragment]?).self) { group in
            let featuredPending = Self.featuredKinds.filter { pending.contains($0) }
            if !featuredPending.isEmpty {
                group.addTask { [self] in
                    let outcome = await withDeadline(deadline) { try await api.featuredFeed(lang: r.lang, date: r.date) }
                    // A section that missed the deadline or failed shows its last good data when there is some.
                    let fragments = withLastGood(featuredFragments(outcome, lang: r.lang, isToday: r.isToday, retry: 1), key: sharedKey(r))
                    var lines: [UInt8] = []
                    for kind in kinds where featuredPending.contains(kind) {
                        if let f = fragments[kind] { JSONLines.appendLine(f.body.bytes, to: &lines) }
                    }
                    if case .failed(let e) = outcome, Self.isNotFound(e) { return (lines, [:]) }   // no feed that day: complete as it is
                    return (lines, Self.succeeded(outcome) ? fragments : nil)
                }
            }
            if pending.contains(.random) {
                group.addTask { [self] in
                    let outcome = await withDeadline(deadline) { try await pool.card(lang: r.lang).card }
                    guard let made = randomFragment(outcome, retry: 1) else { return ([], [:]) }
                    let fragment = withLastGood([.random: made], key: sharedKey(r))[.random] ?? made
                    return (JSONLines.line(fragment.body.bytes), fragment.status == .ok && !fragment.stale ? [.random: fragment] : nil)
                }
            }
            for kind in kinds where !kind.isShared && pending.contains(kind) {
                group.addTask { [self] in
                    guard let part = await personalPart(kind, r, deadline: deadline, retry: 1) else { return ([], [:]) }
                    return (line(part, r), [:])
                }
            }
            for try await result in group {
                if let fragments = result.shared { shared.merge(fragments) { a, _ in a } } else { sharedComplete = false }
                if !result.lines.isEmpty { try await body.write(result.lines) }
            }
        }
        if buildsSharedPart && sharedComplete && sharedCache.cachedValue(sharedKey(r), as: SharedPart.self) == nil {
            let part = Self.sharedPart(shared, date: r.date, lang: r.lang.tag, expires: now().addingTimeInterval(sharedTTL(isToday: r.isToday, earliestRetry: nil)))
            sharedCache.insert(sharedKey(r), part, cost: part.cost, ttl: sharedTTL(isToday: r.isToday, earliestRetry: nil), staleFor: feedMaxAge)
        }
    }

    /// One personal section's line (the nearby section with this user's numbers); empty when it has no card.
    func line(_ part: PersonalPart, _ r: FeedRequest) -> [UInt8] {
        switch part {
        case .section(let f): return JSONLines.line(f.body.bytes)
        case .nearby(let cell):
            guard let point = r.nearby else { return [] }
            return JSONLines.line(nearbyMemo.section(cell, user: point, radius: Double(Self.nearbyRadius)).bytes)
        case .absent: return []
        }
    }
}

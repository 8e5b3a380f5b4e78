import Foundation
import Synchronization
import LedeBasics
import Wikimedia
import HTTPCore

/// The embedded default's editor: the Action API's editor query and `action=edit`, answered like MediaWiki (with
/// `errorformat=html`) over wikitext made from the embedded articles, kept in this process's memory (a demo: a save
/// changes the page until the process ends).
///
/// The demo wiki:
/// - every embedded article is editable, by anyone (an anonymous edit takes the anonymous token `+\`);
/// - `Mumbai` is semi-protected (accounts only) and `Dam Square` fully protected (administrators only);
/// - `Bearer demo-bob` is partially blocked from `Rijksmuseum` (by Admin, for edit warring, until 2026-12-31);
/// - an edit whose text holds `!!!` meets an abuse filter's warning (the same edit sent again is saved);
/// - a link to `spam.example` is on the spam list (refused);
/// - a new external link asks for a captcha, whose answer is the word `lede`;
/// - a save based on an older revision conflicts when its section changed since (else it is merged, as MediaWiki does).
final class EmbeddedEditor: Sendable {
    struct Page: Sendable {
        var revision: Int
        var text: String
        /// Older revisions' text, for conflicts (the last 50).
        var history: [Int: String]
        /// When the current revision was saved (RFC 3339).
        var timestamp = EmbeddedEditor.initialTimestamp
    }

    /// When every embedded article's first revision was saved.
    static let initialTimestamp = "2026-11-18T09:12:44Z"

    private struct State: Sendable {
        var pages: [String: Page] = [:]
        var nextRevision = 1_300_000_000
        /// Edits warned by the abuse filter once (user, page, text hash): sent again, they pass.
        var warned: Set<String> = []
        /// Captchas asked and not yet answered, by id.
        var captchas: Set<String> = []
        var nextCaptcha = 4_242
    }
    private let state = Mutex(State())

    static let semiProtected: Set<String> = ["en:Mumbai"]
    static let fullyProtected: Set<String> = ["en:Dam Square"]
    /// Partial blocks: user → pages.
    static let partialBlocks: [String: Set<String>] = ["Bob": ["en:Rijksmuseum"]]
    static let captchaAnswer = "lede"

    /// The wikitext an embedded article starts with: its extract as the lead, then its headings with a sentence each.
    static func initialText(_ article: EmbeddedArticle, lang: String) -> String {
        var text = article.extract + "\n"
        for h in EmbeddedArticleScreens.contents[lang]?[article.title] ?? [] {
            let marks = String(repeating: "=", count: h.level + 1)
            let line = HTMLText.plain(h.line)
            text += "\n\(marks) \(line) \(marks)\nThis section of ''\(article.title)'' is about \(line.lowercased()).\n"
        }
        return text
    }

    private func page(_ key: String, _ article: EmbeddedArticle, lang: String, in s: inout State) -> Page {
        if let p = s.pages[key] { return p }
        let p = Page(revision: 1_200_000_000 + article.pageid % 1_000_000 + article.title.utf8.count, text: Self.initialText(article, lang: lang), history: [:])
        s.pages[key] = p
        return p
    }

    /// A page's current revision and when it was saved (as `prop=revisions` names them).
    func current(_ article: EmbeddedArticle, lang: String) -> (revision: Int, timestamp: String) {
        state.withLock { s in
            let p = page("\(lang):\(article.title)", article, lang: lang, in: &s)
            return (p.revision, p.timestamp)
        }
    }

    // MARK: - Sections (MediaWiki's: section 0 is the lead; section n is the n-th heading with what follows, down to the
    // next heading of its level or higher)

    /// The headings of `text`: (offset of its line, level).
    static func headings(_ text: String) -> [(start: String.Index, level: Int)] {
        var out: [(String.Index, Int)] = []
        var lineStart = text.startIndex
        while lineStart < text.endIndex {
            let lineEnd = text[lineStart...].firstIndex(of: "\n") ?? text.endIndex
            let line = text[lineStart..<lineEnd].trimmingCharacters(in: .whitespaces)
            let lead = line.prefix(while: { $0 == "=" }).count, trail = line.reversed().prefix(while: { $0 == "=" }).count
            if lead >= 2, trail >= 2, line.count > lead + trail { out.append((lineStart, min(lead, trail))) }
            lineStart = lineEnd < text.endIndex ? text.index(after: lineEnd) : text.endIndex
        }
        return out
    }

    /// The range of section `n` in `text`, nil when there is no such section.
    static func sectionRange(_ n: Int, in text: String) -> Range<String.Index>? {
        let hs = headings(text)
        if n == 0 { return text.startIndex..<(hs.first?.start ?? text.endIndex) }
        guard n >= 1, n <= hs.count else { return nil }
        let (start, level) = hs[n - 1]
        let end = hs[n...].first { $0.level <= level }?.start ?? text.endIndex
        return start..<end
    }

    // MARK: - Answers

    /// `query.userinfo` as the Action API gives it (formatversion=2) for a demo user, or an anonymous session.
    static func userinfo(_ user: String?) -> String {
        user.map { "{\"id\":\(FNV1a.value(Array($0.utf8)) % 100_000 + 1),\"name\":\(JSONText.quote($0))}" } ?? "{\"id\":0,\"name\":\"127.0.0.1\",\"anon\":true}"
    }

    /// The editor's query (`intestactions=edit`, with or without `prop=revisions`).
    func query(_ q: [String: String], user: String?, lang: String, articles: [EmbeddedArticle]) -> String {
        let asked = ArticleTitle.display(q["titles"] ?? "")
        let userinfo = EmbeddedEditor.userinfo(user)
        guard let article = articles.first(where: { $0.title == asked && $0.ns == 0 }) else {
            return "{\"batchcomplete\":true,\"query\":{\"pages\":[{\"ns\":0,\"title\":\(JSONText.quote(asked)),\"missing\":true,\"actions\":{\"edit\":[]}}],\"userinfo\":\(userinfo)}}"
        }
        let key = "\(lang):\(article.title)"
        let current = state.withLock { page(key, article, lang: lang, in: &$0) }
        var revisions = ""
        if (q["prop"] ?? "").contains("revisions") {
            var content = current.text
            if let raw = q["rvsection"] {
                guard let n = Int(raw), let range = Self.sectionRange(n, in: current.text) else {
                    return "{\"errors\":[{\"code\":\"nosuchsection\",\"html\":\(JSONText.quote("There is no section \(HTMLText.escape(raw)) in r\(current.revision).")),\"module\":\"query+revisions\"}]}"
                }
                content = String(current.text[range])
            }
            revisions = ",\"revisions\":[{\"revid\":\(current.revision),\"parentid\":\(current.revision - 1),\"timestamp\":\"2026-11-20T08:00:00Z\",\"slots\":{\"main\":{\"contentmodel\":\"wikitext\",\"contentformat\":\"text/x-wiki\",\"content\":\(JSONText.quote(content))}}}]"
        }
        var protection: [String] = []
        if Self.semiProtected.contains(key) { protection.append("{\"type\":\"edit\",\"level\":\"autoconfirmed\",\"expiry\":\"infinity\"}") }
        if Self.fullyProtected.contains(key) { protection.append("{\"type\":\"edit\",\"level\":\"sysop\",\"expiry\":\"infinity\"}") }
        let refusals = Self.refusals(key, user: user).map(\.json).joined(separator: ",")
        return "{\"batchcomplete\":true,\"query\":{\"pages\":[{\"pageid\":\(article.pageid),\"ns\":0,\"title\":\(JSONText.quote(article.title)),\"contentmodel\":\"wikitext\",\"pagelanguage\":\"\(lang)\",\"lastrevid\":\(current.revision),\"length\":\(current.text.utf8.count),\"protection\":[\(protection.joined(separator: ","))],\"restrictiontypes\":[\"edit\",\"move\"],\"actions\":{\"edit\":[\(refusals)]}\(revisions)}],\"userinfo\":\(userinfo)}}"
    }

    struct Refusal {
        var code: String
        var html: String
        var data: String?
        var json: String { "{\"code\":\(JSONText.quote(code)),\"html\":\(JSONText.quote(html))\(data.map { ",\"data\":\($0)" } ?? "")}" }
    }

    static func refusals(_ key: String, user: String?) -> [Refusal] {
        var out: [Refusal] = []
        if fullyProtected.contains(key) {
            out.append(Refusal(code: "protectedpage", html: "This page has been protected to prevent editing or other actions. <a href=\"/wiki/Wikipedia:Protection_policy\">Learn more</a>."))
        } else if semiProtected.contains(key), user == nil {
            out.append(Refusal(code: "protectedpage", html: "This page has been <b>semi-protected</b>: only registered users may edit it."))
        }
        if let user, partialBlocks[user]?.contains(key) == true {
            let data = "{\"blockinfo\":{\"blockid\":9001,\"blockedby\":\"Admin\",\"blockedbyid\":2,\"blockreason\":\"Edit warring\",\"blockedtimestamp\":\"2026-11-19T12:00:00Z\",\"blockexpiry\":\"2026-12-31T00:00:00Z\",\"blockpartial\":true,\"blocknocreate\":false,\"blockanononly\":false}}"
            out.append(Refusal(code: "blockedtext-partial", html: "You have been blocked from editing this page by <a href=\"/wiki/User:Admin\">Admin</a>. The reason given is <i>Edit warring</i>.", data: data))
        }
        return out
    }

    /// `action=edit`.
    func edit(_ q: [String: String], user: String?, lang: String, articles: [EmbeddedArticle]) -> String {
        func error(_ code: String, _ html: String, data: String? = nil) -> String {
            "{\"errors\":[{\"code\":\(JSONText.quote(code)),\"html\":\(JSONText.quote(html))\(data.map { ",\"data\":\($0)" } ?? ""),\"module\":\"edit\"}],\"docref\":\"See /w/api.php for API usage.\"}"
        }
        let expectedToken = user.map(EmbeddedNotifications.token(for:)) ?? "+\\"
        guard q["token"] == expectedToken else { return error("badtoken", "Invalid CSRF token.") }
        if q["assert"] == "user", user == nil { return error("assertuserfailed", "You are no longer logged in, so the action could not be completed.") }
        let asked = ArticleTitle.display(q["title"] ?? "")
        guard let article = articles.first(where: { $0.title == asked && $0.ns == 0 }) else {
            return error("missingtitle", "The page you specified doesn't exist.")
        }
        guard let text = q["text"] else { return error("missingparam", "The <var>text</var> parameter must be set.") }
        let key = "\(lang):\(article.title)"
        if let refusal = Self.refusals(key, user: user).first { return error(refusal.code, refusal.html, data: refusal.data) }
        let summary = q["summary"] ?? ""
        return state.withLock { s -> String in
            var p = page(key, article, lang: lang, in: &s)
            let section = q["section"].flatMap(Int.init)
            if q["section"] != nil, section == nil { return error("invalidsection", "The <var>section</var> parameter must be a valid section ID or <kbd>new</kbd>.") }
            guard let range = section.map({ Self.sectionRange($0, in: p.text) }) ?? (p.text.startIndex..<p.text.endIndex) else {
                return error("nosuchsection", "There is no section \(section!).")
            }
            // Conflict: the section changed since the revision the editor started from (else the edit merges).
            if let base = q["baserevid"].flatMap(Int.init), base != p.revision {
                guard let old = p.history[base] else { return error("editconflict", "Edit conflict.") }
                let then = section.map { n in Self.sectionRange(n, in: old).map { String(old[$0]) } } ?? old
                if then != String(p.text[range]) { return error("editconflict", "Edit conflict.") }
            }
            var replacement = text
            if section != nil, !replacement.hasSuffix("\n"), range.upperBound < p.text.endIndex { replacement += "\n" }
            let newText = p.text.replacingCharacters(in: range, with: replacement)
            if newText == p.text { return "{\"edit\":{\"result\":\"Success\",\"pageid\":\(article.pageid),\"title\":\(JSONText.quote(article.title)),\"contentmodel\":\"wikitext\",\"nochange\":true,\"watched\":true}}" }
            if text.contains("spam.example") {
                return error("spamblacklist", "The text you wanted to save was blocked by the spam filter. This is probably caused by a link to a blacklisted external site: <code>spam.example</code>.",
                             data: "{\"spamblacklist\":{\"matches\":[\"spam.example\"]}}")
            }
            let warnKey = "\(user ?? "-")|\(key)|\(FNV1a.hash(Array(text.utf8)))|\(summary)"
            if text.contains("!!!"), !s.warned.contains(warnKey) {
                s.warned.insert(warnKey)
                return error("abusefilter-warning-exclamation", "<b>Warning:</b> This action has been automatically identified as harmful: it adds <i>repeated exclamation marks</i>. If you believe your edit is constructive, save it again to confirm.",
                             data: "{\"abusefilter\":{\"id\":42,\"description\":\"Repeated exclamation marks\",\"actions\":[\"warn\"]}}")
            }
            let oldLinks = Self.externalLinks(p.text), newLinks = Self.externalLinks(newText)
            if !newLinks.subtracting(oldLinks).isEmpty {
                if let id = q["captchaid"], s.captchas.contains(id), q["captchaword"]?.lowercased() == Self.captchaAnswer {
                    s.captchas.remove(id)
                } else {
                    let id = "\(s.nextCaptcha)"
                    s.nextCaptcha += 1
                    s.captchas.insert(id)
                    return "{\"edit\":{\"captcha\":{\"type\":\"image\",\"mime\":\"image/png\",\"id\":\"\(id)\",\"url\":\"/w/index.php?title=Special:Captcha/image&wpCaptchaId=\(id)\"},\"result\":\"Failure\"}}"
                }
            }
            let old = p.revision
            s.nextRevision += 1
            p.history[old] = p.text
            if p.history.count > 50, let oldest = p.history.keys.min() { p.history[oldest] = nil }
            p.revision = s.nextRevision
            p.text = newText
            p.timestamp = EmbeddedClock.shared.stamp()
            s.pages[key] = p
            return "{\"edit\":{\"result\":\"Success\",\"pageid\":\(article.pageid),\"title\":\(JSONText.quote(article.title)),\"contentmodel\":\"wikitext\",\"oldrevid\":\(old),\"newrevid\":\(p.revision),\"newtimestamp\":\"\(p.timestamp)\",\"watched\":true}}"
        }
    }

    /// The external links of wikitext (`http://` and `https://`, up to a space, `]` or the line's end).
    static func externalLinks(_ text: String) -> Set<String> {
        var out = Set<String>()
        var rest = text[...]
        while let r = rest.range(of: "http") {
            let tail = rest[r.lowerBound...]
            if tail.hasPrefix("http://") || tail.hasPrefix("https://") {
                out.insert(String(tail.prefix { $0 != " " && $0 != "]" && $0 != "\n" && $0 != "|" }))
            }
            rest = rest[r.upperBound...]
        }
        return out
    }
}

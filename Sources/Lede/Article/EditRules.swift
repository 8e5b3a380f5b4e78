import Foundation
import HTTPServer
import LedeBasics
import Wikimedia
import HTTPCore
import Upstream

/// The editor's rules, pure: what a save request may hold, how the wiki's refusals become problems (one table), and
/// the editor's reasons and notices as plain text.
enum EditRules {
    /// The wiki's page size limit (`$wgMaxArticleSize`, 2048 KiB on Wikipedia): the most wikitext a save sends.
    static let maxWikitextBytes = 2 << 20
    /// The save request's body limit on its route: the wikitext with room for its JSON escapes (a client that writes
    /// non-ASCII as `\u` escapes triples a two-byte character: `é` is 2 bytes, `\u00e9` 6), and the members around it.
    static let maxBodyBytes = 3 * maxWikitextBytes + (64 << 10)
    /// MediaWiki's summary limit is 500 characters.
    static let maxSummaryCharacters = 500

    // MARK: - The save request

    struct SaveRequest: Sendable, Equatable {
        var section: Int?
        var wikitext: String
        var summary: String
        var baseRevision: Int
        var minor: Bool
        var captchaID: String?
        var captchaAnswer: String?

        func submission(title: String) -> EditSubmission {
            EditSubmission(title: title, section: section, wikitext: wikitext, summary: summary, baseRevision: baseRevision, minor: minor,
                           captcha: captchaID.map { ($0, captchaAnswer ?? "") })
        }
    }

    static let saveFields: Set<String> = ["section", "wikitext", "summary", "baseRevision", "minor", "captcha"]

    /// `{"section"?,"wikitext","summary","baseRevision","minor"?,"captcha"?:{"id","answer"}}`, strictly.
    static func parseSave(_ body: [UInt8]) throws -> SaveRequest {
        guard !body.isEmpty else { throw bad(.problemBodyEmpty, "{\"wikitext\",\"summary\",\"baseRevision\"}") }
        let object: [String: JSONValue]
        do { object = try UpstreamJSONDecoder().decode([String: JSONValue].self, from: body) } catch {
            throw bad(.problemBodyNotObject)
        }
        let unknown = object.keys.filter { !saveFields.contains($0) }.sorted()
        guard unknown.isEmpty else { throw bad(.problemBodyUnknownFields, unknown.prefix(5).map { String($0.prefix(40)) }.joined(separator: ", "), field: unknown[0]) }
        guard case .string(let wikitext)? = object["wikitext"] else { throw bad(.problemFieldStringRequired, "wikitext", field: "wikitext") }
        guard wikitext.utf8.count <= maxWikitextBytes else {
            throw Problem(status: 413, slug: "edit-too-large", .problemWikitextTooLarge, "2 MiB",
                          extensions: [("limit", "\(maxWikitextBytes)")])
        }
        guard case .string(let summary)? = object["summary"] else { throw bad(.problemFieldStringRequired, "summary", field: "summary") }
        guard summary.count <= maxSummaryCharacters else { throw bad(.problemParameterTooLong, "summary", String(maxSummaryCharacters), field: "summary") }
        guard case .int(let base)? = object["baseRevision"], base > 0 else {
            throw bad(.problemEditBaseRevision, "baseRevision", field: "baseRevision")
        }
        var section: Int?
        switch object["section"] {
        case nil, .null?: section = nil
        case .int(let n)? where (0...10_000).contains(n): section = n
        default: throw bad(.problemEditSection, "section", field: "section")
        }
        var minor = false
        switch object["minor"] {
        case nil, .null?: minor = false
        case .bool(let b)?: minor = b
        default: throw bad(.problemFieldBoolean, "minor", field: "minor")
        }
        var captchaID: String?, captchaAnswer: String?
        switch object["captcha"] {
        case nil, .null?: break
        case .object(let c)?:
            guard Set(c.keys) == ["id", "answer"], case .string(let id)? = c["id"], case .string(let answer)? = c["answer"],
                  !id.isEmpty, id.utf8.count <= 100, answer.utf8.count <= 200 else {
                throw bad(.problemEditCaptcha, "captcha", "{\"id\",\"answer\"}", field: "captcha")
            }
            captchaID = id; captchaAnswer = answer
        default: throw bad(.problemEditCaptcha, "captcha", "{\"id\",\"answer\"}", field: "captcha")
        }
        return SaveRequest(section: section, wikitext: wikitext, summary: summary, baseRevision: base, minor: minor, captchaID: captchaID, captchaAnswer: captchaAnswer)
    }

    /// `section` of the editor's GET: absent (the whole page) or a number from 0.
    static func section(_ raw: String?) throws -> Int? {
        guard let raw else { return nil }
        guard !raw.isEmpty, raw.utf8.count <= 5, raw.utf8.allSatisfy({ (48...57).contains($0) }), let n = Int(raw) else {
            throw Problem(status: 400, slug: "invalid-parameter", .problemEditSection, "section",
                          extensions: [("parameter", JSONText.quote("section"))])
        }
        return n
    }

    static func bad(_ key: MessageKey, _ parameters: String..., field: String? = nil) -> Problem {
        Problem(status: 400, slug: "invalid-edit", key, parameters: parameters, extensions: field.map { [("field", JSONText.quote($0))] } ?? [])
    }

    // MARK: - The wiki's refusals, in one table

    enum Kind: Equatable {
        case conflict, protected, blocked, disallowed, warning, badToken, notAuthorised, notFound, readOnly, rateLimited, tooLarge, rejected, failed
    }

    /// What a refusal code means. Codes with variants (`abusefilter-warning-<filter>`, `blockedtext-partial`,
    /// `mwoauth-invalid-authorization-…`) are read by prefix.
    static func kind(of message: APIMessage) -> Kind {
        let code = message.code
        if message.block != nil { return .blocked }
        switch code {
        case "editconflict": return .conflict
        case "protectedpage", "protectedtitle", "cascadeprotected", "protectednamespace", "protectednamespace-interface",
             "customcssprotected", "customjsprotected", "customjsonprotected", "sitecssprotected", "sitejsprotected", "mycustomcssprotected":
            return .protected
        case "blocked", "autoblocked", "blockedtext", "systemblockedtext", "globalblocking-blockedtext": return .blocked
        case "spamblacklist", "titleblacklist-forbidden", "abusefilter-disallowed": return .disallowed
        case "badtoken": return .badToken
        case "assertuserfailed", "assertnameduserfailed", "notloggedin", "login-required": return .notAuthorised
        case "missingtitle", "nosuchsection", "nosuchrevid": return .notFound
        case "readonly": return .readOnly
        case "ratelimited", "actionthrottledtext": return .rateLimited
        case "contenttoobig", "max-article-size-exceeded": return .tooLarge
        case "permissiondenied", "noedit", "noedit-anon", "cantedit": return .protected
        default: break
        }
        if code.hasPrefix("abusefilter-warning") { return .warning }
        if code.hasPrefix("abusefilter-disallowed") || code.hasPrefix("spamblacklist") || code.hasPrefix("titleblacklist") { return .disallowed }
        if code.hasPrefix("blockedtext") || code.hasPrefix("globalblocking") { return .blocked }
        if code.hasPrefix("mwoauth-invalid-authorization") { return .notAuthorised }
        if UpstreamError.clientErrorCodes.contains(code) { return .rejected }
        return .failed
    }

    /// The problem a refusal is answered with. `current`: the page's revision now (for a conflict).
    static func problem(_ message: APIMessage, current: Int? = nil) -> Problem {
        let text = plainText(message.html)
        var ext: [(String, String)] = [("code", JSONText.quote(message.code))]
        /// The wiki's own words when it gave any (already in the interface language: the save asks with `uselang`),
        /// else the catalogue's.
        func said(_ status: Int, _ slug: String, _ fallback: MessageKey, headers: HTTPHeaders = HTTPHeaders()) -> Problem {
            text.isEmpty ? Problem(status: status, slug: slug, fallback, headers: headers, extensions: ext)
                : Problem(status: status, slug: slug, detail: text, headers: headers, extensions: ext)
        }
        switch kind(of: message) {
        case .conflict:
            if let current { ext.append(("currentRevision", "\(current)")) }
            return Problem(status: 409, slug: "edit-conflict", .problemEditConflict, extensions: ext)
        case .protected:
            return said(403, "protected", .problemEditProtected)
        case .blocked:
            if let block = message.block { ext.append(("block", blockJSON(block))) }
            return said(403, "blocked", .problemEditBlocked)
        case .disallowed:
            if !message.matches.isEmpty { ext.append(("matches", "[" + message.matches.prefix(20).map { JSONText.quote($0) }.joined(separator: ",") + "]")) }
            return said(403, "edit-disallowed", .problemEditDisallowed)
        case .warning:
            return text.isEmpty ? Problem(status: 422, slug: "edit-warning", .problemEditWarning, extensions: ext)
                : Problem(status: 422, slug: "edit-warning", .problemEditWarningSaid, text, extensions: ext)
        case .badToken, .notAuthorised:
            return Problem(status: 401, slug: "not-authorised", .problemEditNotAuthorised, headers: ["WWW-Authenticate": BearerAuthorization.challenge], extensions: ext)
        case .notFound:
            return said(404, "not-found", .problemEditNotFound)
        case .readOnly:
            return said(503, "wiki-read-only", .problemEditReadOnly, headers: ["Retry-After": "120"])
        case .rateLimited:
            return said(429, "edit-rate-limited", .problemEditRateLimited, headers: ["Retry-After": "60"])
        case .tooLarge:
            return said(413, "edit-too-large", .problemEditTooLarge)
        case .rejected:
            return said(400, "invalid-edit", .problemEditRejected)
        case .failed:
            return text.isEmpty ? Problem(status: 502, slug: "edit-failed", .problemEditFailed, extensions: ext)
                : Problem(status: 502, slug: "edit-failed", .problemEditFailedSaid, text, extensions: ext)
        }
    }

    /// A save whose outcome is unknown (sent, then no answer): never sent again by Lede.
    static func unknownOutcome(_ e: EditOutcomeUnknown, baseRevision: Int) -> Problem {
        let timedOut = e.cause == .timeout
        return Problem(status: timedOut ? 504 : 502, slug: "edit-outcome-unknown", timedOut ? .problemEditOutcomeTimeout : .problemEditOutcomeLost,
                       extensions: [("baseRevision", "\(baseRevision)")])
    }

    /// The captcha's problem: its id and the image's absolute URL.
    static func captchaProblem(id: String, url: String, base: String) -> Problem {
        Problem(status: 428, slug: "captcha-required", .problemCaptcha,
                extensions: [("captcha", "{\"id\":\(JSONText.quote(id)),\"url\":\(JSONText.quote(absoluteURL(url, base: base)))}")])
    }

    /// `url` resolved against the wiki's base URL (the captcha's image is usually given as a path).
    static func absoluteURL(_ url: String, base: String) -> String {
        if url.hasPrefix("https://") || url.hasPrefix("http://") { return url }
        if url.hasPrefix("//") { return "https:" + url }
        let origin = URIReference(base).origin ?? base
        return origin + (url.hasPrefix("/") ? url : "/" + url)
    }

    static func blockJSON(_ b: EditBlock) -> String {
        var out = "{\"by\":" + (b.by.map(JSONText.quote) ?? "null")
        out += ",\"reason\":" + (b.reason.map { JSONText.quote(plainText($0)) } ?? "null")
        out += ",\"expiry\":" + (b.expiry.map(JSONText.quote) ?? "null")
        out += ",\"partial\":\(b.partial)}"
        return out
    }

    // MARK: - The editor's reasons and notices

    /// The HTML of a message as text, by the project's HTML reader (`<br>`, tags and entities).
    static func plainText(_ html: String) -> String { HTMLText.plain(html).trimmingCharacters(in: .whitespacesAndNewlines) }

    struct Reason: Sendable, Equatable {
        var code: String
        var text: String
        var block: EditBlock?
    }

    /// A MediaWiki timestamp (`2027-01-01T00:00:00Z`) as a date and time in the reader's language, in UTC
    /// ("1 January 2027 at 00:00 (UTC)", "1. Januar 2027 um 00:00 (UTC)"); as sent when it is no timestamp.
    static func written(date timestamp: String, language: String?) -> String {
        guard let date = try? Date(timestamp, strategy: .iso8601) else { return timestamp }
        var style = Date.FormatStyle(date: .long, time: .shortened, locale: Locale(identifier: MediaWikiLanguage.bcp47(language ?? "en")))
        style.timeZone = TimeZone(identifier: "UTC")!
        return date.formatted(style) + " (UTC)"
    }

    static func reasons(_ permission: EditPermission) -> [Reason] {
        permission.refusals.map { Reason(code: $0.code, text: plainText($0.html), block: $0.block) }
    }

    /// What the editor shows above the text: the anonymous-edit notice, and the page's edit protection when the user
    /// may edit it anyway (a semi-protected page for a signed-in user).
    /// In `language` (the reader's interface language; nil: English), from the message catalogue.
    static func notices(_ permission: EditPermission, language: String? = nil) -> [String] {
        let m = Messages.shared
        var out: [String] = []
        if permission.temporaryAccount {
            out.append(m.text(.editorNoticeTempAccount, in: language))
        } else if permission.anonymous && permission.createsTemporaryAccounts {
            out.append(m.text(.editorNoticeTempAccountCreated, in: language))
        } else if permission.anonymous {
            out.append(m.text(.editorNoticeIp, in: language))
        }
        if permission.canEdit {
            for p in permission.protection where p.type == "edit" {
                let who = p.level == "autoconfirmed" ? m.text(.editorGroupAutoconfirmed, in: language)
                    : p.level == "extendedconfirmed" ? m.text(.editorGroupExtendedconfirmed, in: language)
                    : p.level == "sysop" ? m.text(.editorGroupSysop, in: language) : m.text(.editorGroupRight, in: language, p.level)
                if p.expiry == "infinity" || p.expiry == "infinite" { out.append(m.text(.editorProtected, in: language, who)) }
                else { out.append(m.text(.editorProtectedUntil, in: language, who, written(date: p.expiry, language: language))) }
            }
        }
        return out
    }
}

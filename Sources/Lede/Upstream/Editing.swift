import HTTPServer

// The editor's two Action API calls, as both Wikipedia apps make them (docs/UPSTREAM.md, "editor open" and "edit"):
// the section's wikitext with the page's protection and whether this user may edit it, and the save. Both ask for
// `errorformat=html`: errors come as `errors[]{code, html, data}` (the messages the wiki shows its editors, with a
// block's details in `data.blockinfo`); `error{code, info}` (the old format) is read as well.

/// A block that stops the user editing (`data.blockinfo` of a refusal).
public struct EditBlock: Sendable, Equatable {
    public var by: String?
    public var reason: String?
    /// `infinite`/`infinity`, or an ISO 8601 time.
    public var expiry: String?
    /// A partial block: it covers some pages or namespaces only.
    public var partial: Bool
    public init(by: String?, reason: String?, expiry: String?, partial: Bool) { self.by = by; self.reason = reason; self.expiry = expiry; self.partial = partial }
}

/// A message of the Action API: an error, a refusal of `intestactions`, a warning.
public struct APIMessage: Sendable, Equatable {
    public var code: String
    /// The message as the wiki renders it (HTML), or its plain text when the answer gave `info`/`text` only.
    public var html: String
    public var block: EditBlock?
    /// The spam list's matched fragments (`data.spamblacklist.matches`), when that is the refusal.
    public var matches: [String]
    public init(code: String, html: String, block: EditBlock? = nil, matches: [String] = []) { self.code = code; self.html = html; self.block = block; self.matches = matches }
}

/// A protection of a page (`inprop=protection`).
public struct PageProtection: Sendable, Equatable {
    public var type: String
    public var level: String
    public var expiry: String
}

/// What the wiki says about editing one page for one user (`intestactions=edit&intestactionsdetail=full`).
public struct EditPermission: Sendable, Equatable {
    /// Why the user may not edit; empty when they may.
    public var refusals: [APIMessage]
    public var protection: [PageProtection]
    /// The wiki saw no account (`userinfo.anon`): the edit would be made under an IP address.
    public var anonymous: Bool
    /// The page's current revision (`lastrevid`).
    public var latestRevision: Int?
    public var canEdit: Bool { refusals.isEmpty }
}

/// A page or one of its sections, opened for editing.
public struct EditorPage: Sendable, Equatable {
    public var title: String
    public var revision: Int
    public var wikitext: String
    public var permission: EditPermission
}

/// How MediaWiki answered `action=edit`.
public enum EditOutcome: Sendable, Equatable {
    case saved(revision: Int, previous: Int?)
    case nochange
    /// A captcha to solve (ConfirmEdit): its id and the image's URL as the wiki gave it (often relative).
    case captcha(id: String, url: String)
    /// An error (or a `Failure` naming a code, as AbuseFilter answered before errorformat existed).
    case refused(APIMessage)
}

/// A save that failed after its request was sent: it may have been applied. Never sent again.
public struct EditOutcomeUnknown: Error, Sendable, Equatable {
    public var cause: UpstreamError
}

/// What an edit sends besides the credentials and the token.
public struct EditSubmission: Sendable, Equatable {
    public var title: String
    /// Nil: the whole page.
    public var section: Int?
    public var wikitext: String
    public var summary: String
    public var baseRevision: Int
    public var minor: Bool
    public var captcha: (id: String, answer: String)?

    public init(title: String, section: Int?, wikitext: String, summary: String, baseRevision: Int, minor: Bool, captcha: (id: String, answer: String)? = nil) {
        self.title = title; self.section = section; self.wikitext = wikitext; self.summary = summary; self.baseRevision = baseRevision
        self.minor = minor; self.captcha = captcha
    }

    public static func == (a: EditSubmission, b: EditSubmission) -> Bool {
        a.title == b.title && a.section == b.section && a.wikitext == b.wikitext && a.summary == b.summary && a.baseRevision == b.baseRevision
            && a.minor == b.minor && a.captcha?.id == b.captcha?.id && a.captcha?.answer == b.captcha?.answer
    }
}

// MARK: - Answers as sent

struct EditingAnswer: Decodable {
    var query: Query?
    var errors: [Message]?
    var error: Message?
    var edit: Edit?

    struct Query: Decodable {
        var pages: [Page]?
        var userinfo: UserInfo?
        enum CodingKeys: String, CodingKey { case pages, userinfo }
        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            pages = c.lossyList(Page.self, .pages, kind: "pages", counter: decoder.skippedItems)
            userinfo = c.lenient(UserInfo.self, .userinfo)
        }
    }

    struct UserInfo: Decodable {
        var anon: Bool
        enum CodingKeys: String, CodingKey { case anon, id }
        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            // formatversion=2 says `anon:true`; an id of 0 says the same.
            anon = c.flag(.anon) || c.lenientInt(.id) == 0
        }
    }

    struct Page: Decodable {
        var title: String?
        var missing: Bool
        var invalid: Bool
        var lastrevid: Int?
        var protection: [PageProtection]
        var refusals: [Message]?
        var revision: Revision?
        enum CodingKeys: String, CodingKey { case title, missing, invalid, lastrevid, protection, actions, revisions }
        enum ActionKeys: String, CodingKey { case edit }
        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            title = c.lenientString(.title, nonEmpty: true)
            missing = c.flag(.missing); invalid = c.flag(.invalid)
            lastrevid = c.lenientInt(.lastrevid)
            protection = (c.lossyList(Protection.self, .protection, kind: "protection", counter: nil) ?? []).map(\.value)
            if let actions = try? c.nestedContainer(keyedBy: ActionKeys.self, forKey: .actions) {
                // `intestactionsdetail=full`: a list of refusals; `boolean` (the default) would say true/false.
                if let list = actions.lossyList(Message.self, .edit, kind: "refusals", counter: nil) { refusals = list }
                else if let allowed = actions.lenientBool(.edit) { refusals = allowed ? [] : [Message(code: "permissiondenied", html: "You may not edit this page.")] }
            }
            revision = c.lossyList(Revision.self, .revisions, kind: "revisions", counter: nil)?.first
        }
    }

    struct Protection: Decodable {
        var value: PageProtection
        enum CodingKeys: String, CodingKey { case type, level, expiry }
        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            guard let type = c.lenientString(.type, nonEmpty: true), let level = c.lenientString(.level, nonEmpty: true) else {
                throw UpstreamError.malformed("protection without type or level")
            }
            value = PageProtection(type: type, level: level, expiry: c.lenientString(.expiry, nonEmpty: true) ?? "infinity")
        }
    }

    struct Revision: Decodable {
        var revid: Int
        var content: String?
        enum CodingKeys: String, CodingKey { case revid, slots, content }
        enum SlotKeys: String, CodingKey { case main }
        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            guard let id = c.lenientInt(.revid) else { throw UpstreamError.malformed("revision without revid") }
            revid = id
            if let slots = try? c.nestedContainer(keyedBy: SlotKeys.self, forKey: .slots),
               let main = try? slots.nestedContainer(keyedBy: CodingKeys.self, forKey: .main) {
                content = main.lenientString(.content)
            } else {
                content = c.lenientString(.content)   // rvslots not honoured (an old wiki): the content is on the revision
            }
        }
    }

    /// `errors[]` / `actions.edit[]` entries (`code`, `html` or `text`, `data`) and the old `error{code, info}`.
    struct Message: Decodable {
        var value: APIMessage
        init(code: String, html: String) { value = APIMessage(code: code, html: html) }
        enum CodingKeys: String, CodingKey { case code, html, text, info, data, warning }
        enum DataKeys: String, CodingKey { case blockinfo, spamblacklist }
        enum BlockKeys: String, CodingKey { case blockedby, blockreason, blockexpiry, blockpartial }
        enum SpamKeys: String, CodingKey { case matches }
        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            guard let code = c.lenientString(.code, nonEmpty: true) else { throw UpstreamError.malformed("message without code") }
            let html = c.lenientString(.html) ?? c.lenientString(.warning) ?? (c.lenientString(.text) ?? c.lenientString(.info)).map(HTMLText.escape) ?? ""
            var block: EditBlock?
            var matches: [String] = []
            if let data = try? c.nestedContainer(keyedBy: DataKeys.self, forKey: .data) {
                if let b = try? data.nestedContainer(keyedBy: BlockKeys.self, forKey: .blockinfo) {
                    block = EditBlock(by: b.lenientString(.blockedby, nonEmpty: true), reason: b.lenientString(.blockreason, nonEmpty: true),
                                      expiry: b.lenientString(.blockexpiry, nonEmpty: true), partial: b.flag(.blockpartial))
                }
                if let s = try? data.nestedContainer(keyedBy: SpamKeys.self, forKey: .spamblacklist) {
                    matches = s.lenient([String].self, .matches) ?? []
                }
            }
            value = APIMessage(code: code, html: html, block: block, matches: matches)
        }
    }

    struct Edit: Decodable {
        var result: String?
        var newrevid: Int?
        var oldrevid: Int?
        var nochange: Bool
        var captcha: Captcha?
        /// AbuseFilter before errorformat: `result:"Failure"` with `code`, `info` and the warning's HTML.
        var failure: Message?
        enum CodingKeys: String, CodingKey { case result, newrevid, oldrevid, nochange, captcha, code }
        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            result = c.lenientString(.result)
            newrevid = c.lenientInt(.newrevid); oldrevid = c.lenientInt(.oldrevid)
            nochange = c.flag(.nochange)
            captcha = c.lenient(Captcha.self, .captcha)
            failure = c.contains(.code) ? try? Message(from: decoder) : nil
        }
    }

    struct Captcha: Decodable {
        var id: String
        var url: String
        enum CodingKeys: String, CodingKey { case id, url }
        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            guard let id = c.lenientString(.id, nonEmpty: true) ?? c.lenientInt(.id).map(String.init), let url = c.lenientString(.url, nonEmpty: true) else {
                throw UpstreamError.malformed("captcha without id or url")
            }
            self.id = id; self.url = url
        }
    }

    /// The first error of the answer, in either format.
    var firstError: APIMessage? { errors?.first?.value ?? error?.value }
}

// MARK: - Requests and answers

extension WikimediaClient {
    /// The editor's query: the section's wikitext (the whole page when `section` is nil), the page's protection, the
    /// user's refusals, and who the wiki takes the user for.
    static func editorRequest(_ lang: LanguageCode, _ title: String, section: Int?, _ auth: String?) -> UpstreamRequest {
        var q: [(String, String)] = [
            ("action", "query"), ("format", "json"), ("formatversion", "2"), ("errorformat", "html"),
            ("prop", "revisions|info"), ("rvprop", "content|ids|timestamp"), ("rvslots", "main"),
        ]
        if let section { q.append(("rvsection", "\(section)")) }
        q += [("titles", ArticleTitle.normalise(title)), ("inprop", "protection"), ("intestactions", "edit"), ("intestactionsdetail", "full"),
              ("meta", "userinfo")]
        return UpstreamRequest(lang: lang.code, path: "/w/api.php", query: q, authorization: auth, kind: "editor")
    }

    /// The same question without the wikitext: whether the user may edit, and the page's current revision.
    static func editPermissionRequest(_ lang: LanguageCode, _ title: String, _ auth: String?) -> UpstreamRequest {
        UpstreamRequest(lang: lang.code, path: "/w/api.php", query: [
            ("action", "query"), ("format", "json"), ("formatversion", "2"), ("errorformat", "html"), ("prop", "info"),
            ("titles", ArticleTitle.normalise(title)), ("inprop", "protection"), ("intestactions", "edit"), ("intestactionsdetail", "full"),
            ("meta", "userinfo"),
        ], authorization: auth, kind: "editor")
    }

    /// `action=edit` as a form, fields in the order the apps send them; `assert=user` when the user is signed in.
    static func editRequest(_ lang: LanguageCode, _ edit: EditSubmission, token: String, _ auth: String?) -> UpstreamRequest {
        var form: [(String, String)] = [("action", "edit"), ("format", "json"), ("formatversion", "2"), ("errorformat", "html"),
                                        ("title", ArticleTitle.normalise(edit.title))]
        if let section = edit.section { form.append(("section", "\(section)")) }
        form += [("text", edit.wikitext), ("summary", edit.summary), ("baserevid", "\(edit.baseRevision)")]
        if edit.minor { form.append(("minor", "1")) }
        if auth != nil { form.append(("assert", "user")) }
        if let captcha = edit.captcha { form += [("captchaid", captcha.id), ("captchaword", captcha.answer)] }
        form.append(("token", token))   // last, as the apps send it: a body cut short lacks the token and is refused
        return UpstreamRequest(method: .post, lang: lang.code, path: "/w/api.php", form: form, authorization: auth, kind: "edit")
    }

    /// The editor's answer read: the page (404 when it or the section does not exist), its revision and wikitext.
    static func editorPage(_ body: [UInt8], decode: ([UInt8]) throws -> EditingAnswer) throws -> EditorPage {
        let answer = try decode(body)
        let (page, permission) = try pageState(answer)
        guard let revision = page.revision, let wikitext = revision.content else { throw UpstreamError.malformed("editor: no revision content in the answer") }
        return EditorPage(title: page.title ?? "", revision: revision.revid, wikitext: wikitext, permission: permission)
    }

    /// The page and what it says about editing it; errors thrown as what they mean.
    static func pageState(_ answer: EditingAnswer) throws -> (EditingAnswer.Page, EditPermission) {
        if let e = answer.firstError {
            switch e.code {
            case "nosuchsection": throw UpstreamError.notFound("The page has no such section.")
            case "missingtitle", "invalidtitle", "nosuchrevid": throw UpstreamError.notFound("The page does not exist.")
            default: throw EditRefusedError(message: e)
            }
        }
        guard let page = answer.query?.pages?.first else { throw UpstreamError.malformed("editor: no page in the answer") }
        if page.missing || page.invalid { throw UpstreamError.notFound("The page does not exist.") }
        let permission = EditPermission(refusals: (page.refusals ?? []).map(\.value), protection: page.protection,
                                        anonymous: answer.query?.userinfo?.anon ?? false, latestRevision: page.lastrevid ?? page.revision?.revid)
        return (page, permission)
    }

    /// The edit's answer read (any body that is not an edit result is `malformed`).
    static func editOutcome(_ answer: EditingAnswer) throws -> EditOutcome {
        if let e = answer.firstError { return .refused(e) }
        guard let edit = answer.edit else { throw UpstreamError.malformed("edit: no edit result in the answer") }
        if let captcha = edit.captcha { return .captcha(id: captcha.id, url: captcha.url) }
        if let failure = edit.failure, edit.result != "Success" { return .refused(failure.value) }
        guard edit.result == "Success" else { throw UpstreamError.malformed("edit: the result is neither Success nor a known failure") }
        if edit.nochange { return .nochange }
        guard let revision = edit.newrevid else { throw UpstreamError.malformed("edit: Success without newrevid") }
        return .saved(revision: revision, previous: edit.oldrevid)
    }

    public func editorPage(lang: LanguageCode, title: String, section: Int?, authorization: String?) async throws -> EditorPage {
        let req = Self.editorRequest(lang, title, section: section, authorization)
        let response = try await actionAnswer(req)
        // A long page's wikitext is megabytes: read off the loops.
        return try await Self.offLoop(response.body.count) { [self] in
            try Self.editorPage(response.body) { try decode(EditingAnswer.self, $0, kind: req.kind) }
        }
    }

    public func siteURL(lang: LanguageCode) -> String { transport.baseURL(lang: lang.code) }

    public func editPermission(lang: LanguageCode, title: String, authorization: String?) async throws -> EditPermission {
        let req = Self.editPermissionRequest(lang, title, authorization)
        let response = try await actionAnswer(req)
        return try Self.pageState(try decode(EditingAnswer.self, response.body, kind: req.kind)).1
    }

    /// The save: sent once within `deadline`, never again (not on a timeout, a reset connection or a 5xx: the wiki
    /// may have applied it — those are `EditOutcomeUnknown`). Redirects are not followed.
    public func edit(lang: LanguageCode, _ submission: EditSubmission, token: String, authorization: String?, deadline: Double) async throws -> EditOutcome {
        var req = Self.editRequest(lang, submission, token: token, authorization)
        if submission.wikitext.utf8.count > 64 << 10 {
            let form = req.form   // megabytes of wikitext percent-encoded off the loops
            req.encodedForm = await Workers.shared.run { Array(UpstreamRequest.formBody(form).utf8) }
        }
        let response = try await sendOnce(req, deadline: deadline)
        switch response.status {
        case 200..<300: break
        case 401, 403: throw UpstreamError.notAuthorised
        case 500...: throw EditOutcomeUnknown(cause: .unavailable(status: response.status))
        default: throw UpstreamError.unavailable(status: response.status)
        }
        return try Self.editOutcome(try decode(EditingAnswer.self, response.body, kind: req.kind))
    }

    /// `work` on a worker when the answer is large (`size` bytes), else here.
    static func offLoop<T: Sendable>(_ size: Int, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        guard size > 64 << 10 else { return try work() }
        return try await Workers.shared.run { Result { try work() } }.get()
    }
}

/// A refusal of the whole query (`errors[0]` of an editor call that is not about the page): a block on reading,
/// a bad token, an unknown parameter. The routes map it with the edit's refusals.
public struct EditRefusedError: Error, Sendable, Equatable {
    public var message: APIMessage
}

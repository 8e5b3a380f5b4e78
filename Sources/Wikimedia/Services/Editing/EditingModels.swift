import LedeBasics
import Upstream

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

    /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
    package init(type: String, level: String, expiry: String) {
        self.type = type
        self.level = level
        self.expiry = expiry
    }
}

/// What the wiki says about editing one page for one user (`intestactions=edit&intestactionsdetail=full`).
public struct EditPermission: Sendable, Equatable {
    /// Why the user may not edit; empty when they may.
    public var refusals: [APIMessage]
    public var protection: [PageProtection]
    /// The wiki saw no account (`userinfo.anon`): the edit would be made under an IP address — or, where the wiki
    /// creates temporary accounts, under a new one.
    public var anonymous: Bool
    /// The page's current revision (`lastrevid`).
    public var latestRevision: Int?
    /// The user is on a temporary account (`userinfo.temp`): edits are attributed to it, not to an IP address.
    public var temporaryAccount: Bool
    /// The wiki makes a temporary account for an anonymous edit (`siteinfo.autocreatetempuser.enabled`).
    public var createsTemporaryAccounts: Bool
    public var canEdit: Bool { refusals.isEmpty }

    /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
    package init(refusals: [APIMessage], protection: [PageProtection], anonymous: Bool, latestRevision: Int? = nil,
                 temporaryAccount: Bool = false, createsTemporaryAccounts: Bool = false) {
        self.refusals = refusals
        self.protection = protection
        self.anonymous = anonymous
        self.latestRevision = latestRevision
        self.temporaryAccount = temporaryAccount
        self.createsTemporaryAccounts = createsTemporaryAccounts
    }
}

/// A page or one of its sections, opened for editing.
public struct EditorPage: Sendable, Equatable {
    public var title: String
    public var revision: Int
    public var wikitext: String
    public var permission: EditPermission

    /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
    package init(title: String, revision: Int, wikitext: String, permission: EditPermission) {
        self.title = title
        self.revision = revision
        self.wikitext = wikitext
        self.permission = permission
    }
}

/// How MediaWiki answered `action=edit`.
public enum EditOutcome: Sendable, Equatable {
    /// `temporaryAccount`: the name of the temporary account the wiki made for this anonymous edit (`tempusercreated`).
    case saved(revision: Int, previous: Int?, temporaryAccount: String? = nil)
    case nochange
    /// A captcha to solve (ConfirmEdit): its id and the image's URL as the wiki gave it (often relative).
    case captcha(id: String, url: String)
    /// An error (or a `Failure` naming a code, as AbuseFilter answered before errorformat existed).
    case refused(APIMessage)
}

/// A save that failed after its request was sent: it may have been applied. Never sent again.
public typealias EditOutcomeUnknown = WriteOutcomeUnknown

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
    /// The reader's interface language (`uselang`): the language of the wiki's refusals, warnings and captcha.
    public var uselang: String?

    public init(title: String, section: Int?, wikitext: String, summary: String, baseRevision: Int, minor: Bool, captcha: (id: String, answer: String)? = nil) {
        self.title = title; self.section = section; self.wikitext = wikitext; self.summary = summary; self.baseRevision = baseRevision
        self.minor = minor; self.captcha = captcha
    }

    public static func == (a: EditSubmission, b: EditSubmission) -> Bool {
        a.title == b.title && a.section == b.section && a.wikitext == b.wikitext && a.summary == b.summary && a.baseRevision == b.baseRevision
            && a.minor == b.minor && a.captcha?.id == b.captcha?.id && a.captcha?.answer == b.captcha?.answer && a.uselang == b.uselang
    }
}

struct EditingAnswer: Decodable {
    var query: Query?
    var errors: [Message]?
    var error: Message?
    var edit: Edit?

    struct Query: Decodable {
        var pages: [Page]?
        var userinfo: UserInfo?
        var autocreatetempuser: TemporaryAccounts?
        enum CodingKeys: String, CodingKey { case pages, userinfo, autocreatetempuser }
        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            pages = c.lossyList(Page.self, .pages, kind: "pages", counter: decoder.skippedItems)
            userinfo = c.lenient(UserInfo.self, .userinfo)
            autocreatetempuser = c.lenient(TemporaryAccounts.self, .autocreatetempuser)
        }
    }

    struct UserInfo: Decodable {
        var anon: Bool
        /// A temporary account (MediaWiki 1.42+: `temp:true`, a name like `~2026-12345-6`).
        var temp: Bool
        enum CodingKeys: String, CodingKey { case anon, id, temp }
        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            // formatversion=2 says `anon:true`; an id of 0 says the same.
            anon = c.flag(.anon) || c.lenientInt(.id) == 0
            temp = c.flag(.temp)
        }
    }

    /// `siprop=autocreatetempuser`: whether an anonymous edit makes a temporary account.
    struct TemporaryAccounts: Decodable {
        var enabled: Bool
        enum CodingKeys: String, CodingKey { case enabled }
        init(from decoder: Decoder) throws { enabled = try decoder.container(keyedBy: CodingKeys.self).flag(.enabled) }
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
        /// The temporary account made for this anonymous edit.
        var tempusercreated: String?
        enum CodingKeys: String, CodingKey { case result, newrevid, oldrevid, nochange, captcha, code, tempusercreated }
        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            result = c.lenientString(.result)
            tempusercreated = c.lenientString(.tempusercreated).flatMap { $0.isEmpty ? nil : $0 }
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

/// A refusal of the whole query (`errors[0]` of an editor call that is not about the page): a block on reading,
/// a bad token, an unknown parameter. The routes map it with the edit's refusals.
public struct EditRefusedError: Error, Sendable, Equatable {
    public var message: APIMessage

    /// Memberwise (the synthesised one is internal): the embedded default builds these in another module.
    package init(message: APIMessage) {
        self.message = message
    }
}

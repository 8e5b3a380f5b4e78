import HTTPServer
import LedeBasics
import Wikimedia
import HTTPCore

/// `GET /article/{title}/edit` (open the editor) and `POST /article/{title}/edit` (save). The caller's Authorization,
/// when sent, goes to the wiki unchanged. Without it, nothing is saved unless the deployment sends anonymous edits
/// (`--anonymous-edits on`): Wikimedia would attribute every phone's anonymous edit to the one address Lede calls from.
/// Nothing is kept: every answer is the user's.
enum EditRoutes {
    static let noStore = "private, no-store"

    struct Settings: Sendable {
        /// The save's deadline (`--edit-timeout`): MediaWiki can take seconds to save a long page.
        var editTimeout: Double = 15
        /// Whether an edit without credentials is sent (`--anonymous-edits on`, for a deployment Wikimedia trusts as a
        /// proxy); off by default.
        var anonymousEdits = false
    }

    /// The refusal an editor opened without an account shows, when anonymous edits are off, in the reader's language.
    static func needsAccount(_ language: String?) -> APIMessage {
        APIMessage(code: "needs-account", html: HTMLText.escape(Messages.shared.text(.editorNeedsAccount, in: language)))
    }

    /// A save without credentials, when anonymous edits are off: refused here, with nothing sent to Wikimedia.
    static let needsAccountProblem = Problem(status: 401, slug: "edit-needs-account", .problemEditNeedsAccount, headers: ["WWW-Authenticate": BearerAuthorization.challenge])

    static func register(on router: Router, api: any WikimediaAPI, settings: Settings) {
        router.get("/article/{title}/edit") { ctx in
            let auth: String?, lang: LanguageCode, title: String, section: Int?
            (auth, lang, title) = try target(ctx)
            section = try EditRules.section(ctx.request.queryParameter("section"))
            let uselang = try InterfaceLanguage.resolve(ctx)
            let words = ctx.language.words   // Lede's own notices: a language of the catalogue
            return Responses.async {
                do {
                    var opened = try await api.editorPage(lang: lang, title: title, section: section, authorization: auth, uselang: uselang)
                    if auth == nil && !settings.anonymousEdits {
                        opened.permission.refusals.insert(needsAccount(words), at: 0)
                        opened.permission.anonymous = false   // no IP notice: nothing will be saved as an IP
                    }
                    let page = opened
                    // Written and compressed once, off the loops when the wikitext is large (a whole page is megabytes).
                    let headers: HTTPHeaders = ["Cache-Control": noStore, "Vary": "Authorization", "Content-Language": lang.bcp47]
                    return .prepared(try await Workers.shared.offLoop(page.wikitext.utf8.count) {
                        PreparedBody(contentType: "application/json", bytes: editorBody(page, section: section, language: words), headers: headers)
                    })
                } catch let e as EditRefusedError { return EditRules.problem(e.message).response }
            }
        }

        // Without anonymous edits, a save needs an account: refused from its head (none of its body read).
        let account = settings.anonymousEdits ? Router.Account.optional
            : .required { credentials in credentials == .none ? needsAccountProblem : BearerAuthorization.refusal(credentials) }
        router.add("POST", "/article/{title}/edit", maxBody: EditRules.maxBodyBytes, cost: Costs.edit, account: account) { ctx in
            let auth: String?, lang: LanguageCode, title: String
            (auth, lang, title) = try target(ctx)
            if auth == nil && !settings.anonymousEdits { throw needsAccountProblem }
            try Responses.requireJSON(ctx.request)
            let body = ctx.request.body
            // Wikimedia attributes an anonymous edit to the address it is made for (it believes this deployment's
            // X-Forwarded-For when the deployment is on its list of trusted proxies).
            let forwardedFor = auth == nil ? ctx.client.description : nil
            let uselang = try InterfaceLanguage.resolve(ctx)
            return Responses.async {
                // A page's wikitext is up to 2 MiB: read off the loops.
                let save = try await Workers.shared.offLoop(body.count) { try EditRules.parseSave(body) }
                var submission = save.submission(title: title)
                submission.uselang = uselang
                return try await self.save(submission, api: api, lang: lang, authorization: auth, forwardedFor: forwardedFor,
                                           settings: settings)
            }
        }
    }

    /// The caller's credentials (optional), the edition and the title.
    static func target(_ ctx: RequestContext) throws -> (String?, LanguageCode, String) {
        let auth = try BearerAuthorization.optional(ctx.credentials)
        return (auth, try LanguageCode.resolve(ctx.request), try Parameters.articleTitle(ctx.parameter("title")))
    }

    /// A token, the edit; on `badtoken` one fresh token and the edit once more (the wiki refused the token before
    /// saving anything). Nothing else is ever sent twice.
    static func save(_ submission: EditSubmission, api: any WikimediaAPI, lang: LanguageCode, authorization: String?, forwardedFor: String?,
                     settings: Settings) async throws -> HTTPResponse {
        var outcome: EditOutcome
        do {
            outcome = try await api.edit(lang: lang, submission, token: try await api.editToken(lang: lang, authorization: authorization, forwardedFor: forwardedFor),
                                         authorization: authorization, forwardedFor: forwardedFor, deadline: settings.editTimeout)
            if case .refused(let m) = outcome, m.code == "badtoken" {
                outcome = try await api.edit(lang: lang, submission, token: try await api.editToken(lang: lang, authorization: authorization, forwardedFor: forwardedFor),
                                             authorization: authorization, forwardedFor: forwardedFor, deadline: settings.editTimeout)
            }
        } catch let e as EditOutcomeUnknown {
            return EditRules.unknownOutcome(e, baseRevision: submission.baseRevision).response
        }
        switch outcome {
        case .saved(let revision, let previous, let temporaryAccount):
            var body = "{\"result\":\"saved\",\"revision\":\(revision),\"previousRevision\":\(previous.map(String.init) ?? "null")"
            if let temporaryAccount { body += ",\"temporaryAccount\":" + JSONText.quote(temporaryAccount) }
            body += "}"
            return Responses.json(bytes: Array(body.utf8), cacheControl: noStore)
        case .nochange:
            return Responses.json(bytes: Array("{\"result\":\"nochange\"}".utf8), cacheControl: noStore)
        case .captcha(let id, let url):
            return EditRules.captchaProblem(id: id, url: url, base: api.siteURL(lang: lang)).response
        case .refused(let message):
            var current: Int?
            if EditRules.kind(of: message) == .conflict {
                // The revision the editor reloads: asked once, on a conflict only.
                current = try? await api.editPermission(lang: lang, title: submission.title, authorization: authorization).latestRevision
            }
            return EditRules.problem(message, current: current).response
        }
    }

    /// `{"title","section","revision","wikitext","canEdit","reasons","protection","notices"}`.
    static func editorBody(_ page: EditorPage, section: Int?, language: String? = nil) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(page.wikitext.utf8.count + page.wikitext.utf8.count / 8 + 512)
        out.append(contentsOf: "{\"title\":".utf8); JSONText.appendQuoted(page.title, to: &out)
        out.append(contentsOf: ",\"section\":\(section.map(String.init) ?? "null"),\"revision\":\(page.revision),\"wikitext\":".utf8)
        JSONText.appendQuoted(page.wikitext, to: &out)
        out.append(contentsOf: ",\"canEdit\":\(page.permission.canEdit),\"reasons\":[".utf8)
        for (i, r) in EditRules.reasons(page.permission).enumerated() {
            if i > 0 { out.append(44) }
            out.append(contentsOf: "{\"code\":".utf8); JSONText.appendQuoted(r.code, to: &out)
            out.append(contentsOf: ",\"text\":".utf8); JSONText.appendQuoted(r.text, to: &out)
            if let b = r.block { out.append(contentsOf: ",\"block\":".utf8); out.append(contentsOf: EditRules.blockJSON(b).utf8) }
            out.append(125)
        }
        out.append(contentsOf: "],\"protection\":[".utf8)
        for (i, p) in page.permission.protection.enumerated() {
            if i > 0 { out.append(44) }
            out.append(contentsOf: "{\"type\":".utf8); JSONText.appendQuoted(p.type, to: &out)
            out.append(contentsOf: ",\"level\":".utf8); JSONText.appendQuoted(p.level, to: &out)
            out.append(contentsOf: ",\"expiry\":".utf8); JSONText.appendQuoted(p.expiry, to: &out)
            out.append(125)
        }
        out.append(contentsOf: "],\"notices\":[".utf8)
        for (i, n) in EditRules.notices(page.permission, language: language).enumerated() {
            if i > 0 { out.append(44) }
            JSONText.appendQuoted(n, to: &out)
        }
        out.append(contentsOf: "]}".utf8)
        return out
    }
}

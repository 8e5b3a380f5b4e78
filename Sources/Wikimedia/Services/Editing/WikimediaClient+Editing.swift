import LedeBasics
import Upstream

// The editor's two Action API calls, as both Wikipedia apps make them (docs/UPSTREAM.md, "editor open" and "edit"):
// the section's wikitext with the page's protection and whether this user may edit it, and the save. Both ask for
// `errorformat=html`: errors come as `errors[]{code, html, data}` (the messages the wiki shows its editors, with a
// block's details in `data.blockinfo`); `error{code, info}` (the old format) is read as well.

// MARK: - Answers as sent

// MARK: - Requests and answers

extension WikimediaClient {
    /// The editor's query: the section's wikitext (the whole page when `section` is nil), the page's protection, the
    /// user's refusals, and who the wiki takes the user for.
    static func editorRequest(_ lang: LanguageCode, _ title: String, section: Int?, _ auth: String?, uselang: String? = nil) -> UpstreamRequest {
        var q: [(String, String)] = [
            ("action", "query"), ("format", "json"), ("formatversion", "2"), ("errorformat", "html"),
            ("prop", "revisions|info"), ("rvprop", "content|ids|timestamp"), ("rvslots", "main"),
        ]
        if let section { q.append(("rvsection", "\(section)")) }
        q += [("titles", ArticleTitle.normalise(title)), ("inprop", "protection"), ("intestactions", "edit"), ("intestactionsdetail", "full"),
              ("meta", "userinfo|siteinfo"), ("siprop", "autocreatetempuser")] + lang.convertTitles
        if let uselang { q.append(("uselang", uselang)) }
        return UpstreamRequest(lang: lang, path: "/w/api.php", query: q, authorization: auth, kind: .editor)
    }

    /// The same question without the wikitext: whether the user may edit, and the page's current revision.
    static func editPermissionRequest(_ lang: LanguageCode, _ title: String, _ auth: String?) -> UpstreamRequest {
        UpstreamRequest(lang: lang, path: "/w/api.php", query: [
            ("action", "query"), ("format", "json"), ("formatversion", "2"), ("errorformat", "html"), ("prop", "info"),
            ("titles", ArticleTitle.normalise(title)), ("inprop", "protection"), ("intestactions", "edit"), ("intestactionsdetail", "full"),
            ("meta", "userinfo|siteinfo"), ("siprop", "autocreatetempuser"),
        ] + lang.convertTitles, authorization: auth, kind: .editor)
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
        if let uselang = edit.uselang { form.append(("uselang", uselang)) }
        form.append(("token", token))   // last, as the apps send it: a body cut short lacks the token and is refused
        return UpstreamRequest(method: .post, lang: lang, path: "/w/api.php", form: form, authorization: auth, kind: .edit)
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
        let user = answer.query?.userinfo
        let permission = EditPermission(refusals: (page.refusals ?? []).map(\.value), protection: page.protection,
                                        anonymous: user?.anon ?? false, latestRevision: page.lastrevid ?? page.revision?.revid,
                                        temporaryAccount: user?.temp ?? false,
                                        createsTemporaryAccounts: answer.query?.autocreatetempuser?.enabled ?? false)
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
        return .saved(revision: revision, previous: edit.oldrevid, temporaryAccount: edit.tempusercreated)
    }

    public func editorPage(lang: LanguageCode, title: String, section: Int?, authorization: String?, uselang: String?) async throws -> EditorPage {
        let req = Self.editorRequest(lang, title, section: section, authorization, uselang: uselang)
        let response = try await actionAnswer(req)
        // A long page's wikitext is megabytes: read off the loops.
        return try await Workers.shared.offLoop(response.body.count) { [self] in
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
    public func edit(lang: LanguageCode, _ submission: EditSubmission, token: String, authorization: String?, forwardedFor: String?,
                     deadline: Double) async throws -> EditOutcome {
        var req = Self.editRequest(lang, submission, token: token, authorization)
        if authorization == nil { req.forwardedFor = forwardedFor }
        if submission.wikitext.utf8.count > 64 << 10 {
            let form = req.form   // megabytes of wikitext percent-encoded off the loops
            req.encodedForm = try await Workers.shared.run { Array(UpstreamRequest.formBody(form).utf8) }
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
}


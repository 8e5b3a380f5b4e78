import HTTPServer

/// A Wikipedia language edition code, valid by construction.
public struct LanguageCode: Sendable, Hashable, CustomStringConvertible {
    public let code: String
    public var description: String { code }

    public init?(_ raw: String) {
        let c = raw.lowercased()
        guard LanguageCode.all.contains(c) else { return nil }
        code = c
    }

    public static let english = LanguageCode("en")!

    /// Every Wikipedia language edition's subdomain (the list at meta.wikimedia.org/wiki/List_of_Wikipedias),
    /// including the historic aliases that still resolve. `pt-br` is not one; `pt` is.
    public static let all: Set<String> = Set("""
    aa ab ace ady af ak als alt am ami an ang anp ar arc ary arz as ast atj av avk awa ay az azb ba ban bar bat-smg \
    bbc bcl bdr be be-tarask be-x-old bew bg bh bi bjn blk bm bn bo bpy br bs btm bug bxr ca cbk-zam cdo ce ceb ch cho \
    chr chy ckb co cr crh cs csb cu cv cy da dag de dga din diq dsb dtp dty dv dz ee el eml en eo es et eu ext fa fat \
    ff fi fiu-vro fj fo fon fr frp frr fur fy ga gag gan gcr gd gl glk gn gom gor got gpe gu guc gur guw gv ha hak haw \
    he hi hif ho hr hsb ht hu hy hyw hz ia iba id ie ig igl ii ik ilo inh io is it iu ja jam jbo jv ka kaa kab kbd kbp \
    kcg kg kge ki kj kk kl km kn knc ko koi kr krc ks ksh ku kus kv kw ky la lad lb lbe lez lfn lg li lij lld lmo ln \
    lo lrc lt ltg lv mad mai map-bms mdf mg mh mhr mi min mk ml mn mni mnw mos mr mrj ms mt mus mwl my myv mzn na nah \
    nap nds nds-nl ne new ng nia nl nn no nov nqo nr nrm nso nup nv ny oc olo om or os pa pag pam pap pcd pcm pdc pfl \
    pi pih pl pms pnb pnt ps pt pwn qu rm rmy rn ro roa-rup roa-tara rsk ru rue rw sa sah sat sc scn sco sd se sg sh \
    shi shn si simple sk skr sl sm smn sn so sq sr srn ss st stq su sv sw syl szl szy ta tay tcy tdd te tet tg th ti \
    tig tk tl tly tn to tpi tr trv ts tt tum tw ty tyv udm ug uk ur uz ve vec vep vi vls vo wa war wo wuu xal xh xmf \
    yi yo yue za zea zgh zh zh-classical zh-min-nan zh-yue zu
    """.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init))

    /// Language of a request, decided in one place: the `lang` query parameter; else the first
    /// `Accept-Language` tag (by q-value) that names a Wikipedia edition (`de-CH` → `de`); else English.
    /// An explicit `lang` that is not an edition is a 400 problem.
    public static func resolve(_ request: HTTPRequest) throws -> LanguageCode {
        try resolve(lang: request.query == nil ? nil : request.queryParameter("lang"), acceptLanguage: request.headers["Accept-Language"])
    }

    public static func resolve(lang raw: String?, acceptLanguage: String?) throws -> LanguageCode {
        if let raw {
            guard let code = LanguageCode(raw) else { throw LanguageCode.unsupportedProblem(raw) }
            return code
        }
        return fromAcceptLanguage(acceptLanguage) ?? .english
    }

    public static func fromAcceptLanguage(_ header: String?) -> LanguageCode? {
        guard let header else { return nil }
        var tags: [(String, Double, Int)] = []
        for (i, member) in header.split(separator: ",").enumerated() {
            let parts = member.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = parts.first, !tag.isEmpty, tag != "*" else { continue }
            var q = 1.0
            for p in parts.dropFirst() where p.hasPrefix("q=") { q = Double(p.dropFirst(2)) ?? 0 }
            if q > 0 { tags.append((tag.lowercased(), q, i)) }
        }
        for (tag, _, _) in tags.sorted(by: { ($0.1, -$0.2) > ($1.1, -$1.2) }) {
            if let code = LanguageCode(tag) { return code }
            if let primary = tag.split(separator: "-").first, let code = LanguageCode(String(primary)) { return code }
        }
        return nil
    }

    public static func unsupportedProblem(_ raw: String) -> Problem {
        Problem(status: 400, slug: "unsupported-language",
                detail: "'\(raw.prefix(40))' is not a Wikipedia language edition. Use a code such as en, de or it; GET /languages lists all \(all.count).",
                extensions: [("languages", "\"/languages\"")])
    }
}

import Foundation

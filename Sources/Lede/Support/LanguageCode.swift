import HTTPServer

/// A Wikipedia language edition code, valid by construction.
public struct LanguageCode: Sendable, Hashable, CustomStringConvertible {
    public let code: String
    /// Where the edition stands among all of them, sorted by code: a number that names it (keys hash it, not the text).
    let index: UInt16
    public var description: String { code }

    public init?(_ raw: String) {
        var raw = raw
        guard let found = raw.withUTF8({ LanguageCode.find(UnsafeBufferPointer(rebasing: $0[...])) }) else { return nil }
        self.init(verified: found)
    }

    private init(verified found: (code: String, index: UInt16)) { code = found.code; index = found.index }

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

    /// The codes sorted by their bytes, for a binary search that compares ASCII case-insensitively and hands
    /// back the table's own string (no hashing, no new string).
    private static let sorted: [(bytes: [UInt8], code: String)] = all.sorted().map { (bytes: Array($0.utf8), code: $0) }

    static func find(_ tag: UnsafeBufferPointer<UInt8>) -> (code: String, index: UInt16)? {
        guard tag.count <= 16 else { return nil }
        var lo = 0, hi = sorted.count
        while lo < hi {
            let mid = (lo + hi) / 2
            let order = compare(tag, sorted[mid].bytes)
            if order == 0 { return (sorted[mid].code, UInt16(mid)) }
            if order < 0 { hi = mid } else { lo = mid + 1 }
        }
        return nil
    }

    /// Byte order of `tag` lower-cased against a lower-case code: negative, zero or positive.
    private static func compare(_ tag: UnsafeBufferPointer<UInt8>, _ code: [UInt8]) -> Int {
        let n = min(tag.count, code.count)
        for i in 0..<n {
            let a = ASCII.lower(tag[i])
            if a != code[i] { return Int(a) - Int(code[i]) }
        }
        return tag.count - code.count
    }

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

    /// The best `Accept-Language` tag (highest q, then first) that names an edition, by itself or by its primary
    /// subtag. Every mobile request carries this header, so it is read over bytes: no Foundation, no sorting.
    public static func fromAcceptLanguage(_ header: String?) -> LanguageCode? {
        guard let header else { return nil }
        var best: (code: LanguageCode, q: Int)?
        WeightedList.forEach(header) { tag, weight in
            let q = weight ?? 0   // a malformed weight counts as "not acceptable"
            guard q > (best?.q ?? 0), !(tag.count == 1 && tag[0] == 42), let code = edition(tag) else { return true }
            best = (code, q)
            return q < 1000   // nothing later can beat a q=1 tag that names an edition
        }
        return best?.code
    }

    /// Every edition the header names with q > 0, most preferred first (ties in header order), each once; at most
    /// `limit` (the article screen's language picker puts these first).
    public static func preferredEditions(_ header: String?, limit: Int = 8) -> [String] {
        guard let header else { return [] }
        var found: [(code: String, q: Int, order: Int)] = []
        WeightedList.forEach(header) { tag, weight in
            let q = weight ?? 0
            guard q > 0, !(tag.count == 1 && tag[0] == 42), let code = edition(tag), !found.contains(where: { $0.code == code.code }) else { return true }
            found.append((code.code, q, found.count))
            return found.count < 32
        }
        return found.sorted { ($0.q, -$0.order) > ($1.q, -$1.order) }.prefix(limit).map(\.code)
    }

    /// An edition named by a tag (`zh-yue`) or by its primary subtag (`de-CH` → `de`).
    private static func edition(_ tag: UnsafeBufferPointer<UInt8>) -> LanguageCode? {
        if let code = find(tag) { return LanguageCode(verified: code) }
        guard let dash = tag.firstIndex(of: 45), dash > 0 else { return nil }
        return find(UnsafeBufferPointer(rebasing: tag[..<dash])).map { LanguageCode(verified: $0) }
    }

    public static func unsupportedProblem(_ raw: String) -> Problem {
        Problem(status: 400, slug: "unsupported-language",
                detail: "'\(raw.prefix(40))' is not a Wikipedia language edition. Use a code such as en, de or it; GET /languages lists all \(all.count).",
                extensions: [("languages", "\"/languages\"")])
    }
}

import Foundation


/// A Wikipedia language edition code, valid by construction, and the script variant a reader asked for where the
/// edition is written in several (`zh` read as `zh-tw`: MediaWiki converts the page).
public struct LanguageCode: Sendable, Hashable, CustomStringConvertible {
    /// The edition (its subdomain).
    public let code: String
    /// Where the edition stands among all of them, sorted by code: a number that names it (keys hash it, not the text).
    package let index: UInt16
    /// The variant asked for (`zh-tw`, `sr-el`), one of the edition's; nil: the edition's default (no conversion).
    public let variant: String?
    /// The variant's place in `LanguageCode.variantList` plus one; 0 for none.
    package let variantIndex: UInt8
    /// What names the text: the variant, else the edition. Cache keys and `Content-Language` use it.
    public var tag: String { variant ?? code }
    /// `tag` as BCP 47 (`sr-el` → `sr-Latn`, `zh-tw` → `zh-Hant-TW`): what `Content-Language` and `lang` attributes say.
    public var bcp47: String { MediaWikiLanguage.bcp47(tag) }
    /// Edition and variant in one number, for keys that hash numbers.
    package var key: UInt16 { index | UInt16(variantIndex) << 10 }
    public var description: String { tag }

    /// An edition (`zh`), or one of an edition's variants (`zh-tw`, `ZH-TW`: the edition `zh` read in `zh-tw`).
    public init?(_ raw: String) {
        var raw = raw
        if let found = raw.withUTF8({ LanguageCode.find(UnsafeBufferPointer(rebasing: $0[...])) }) { self.init(verified: found); return }
        let lower = raw.lowercased()
        guard let v = LanguageCode.variantIndexes[lower] ?? LearnedVariants.shared.index(of: lower) else { return nil }
        self.init(variantAt: v)
    }

    package init(verified found: (code: String, index: UInt16)) { code = found.code; index = found.index; variant = nil; variantIndex = 0 }

    private init(variantAt i: Int) {
        let (edition, variant) = i < LanguageCode.variantList.count ? LanguageCode.variantList[i] : LearnedVariants.shared.entry(i)
        let found = LanguageCode.find(edition)!
        code = found.code; index = found.index
        self.variant = variant; variantIndex = UInt8(i + 1)
    }

    /// The same edition read in `variant` (one of its own), or its default with nil.
    public func reading(_ variant: String?) -> LanguageCode? {
        guard let variant else { return LanguageCode(code) }
        guard let v = LanguageCode(variant), v.code == code else { return nil }
        return v
    }

    /// The edition alone, without a variant.
    public var edition: LanguageCode { variant == nil ? self : LanguageCode(code)! }

    /// The variants of every edition MediaWiki's language converter writes in more than one script or orthography
    /// (as `meta=siteinfo&siprop=languagevariants` lists them), each as (edition, variant). An edition's own code is
    /// its default (no conversion) and is not listed.
    public static let variants: [String: [String]] = [
        "zh": ["zh-hans", "zh-hant", "zh-cn", "zh-hk", "zh-mo", "zh-my", "zh-sg", "zh-tw"],
        "sr": ["sr-ec", "sr-el"],
        "kk": ["kk-cyrl", "kk-latn", "kk-arab", "kk-kz", "kk-tr", "kk-cn"],
        "ku": ["ku-arab", "ku-latn"],
        "uz": ["uz-latn", "uz-cyrl"],
        "tg": ["tg-latn"],
        "gan": ["gan-hans", "gan-hant"],
        "wuu": ["wuu-hans", "wuu-hant"],
        "iu": ["ike-cans", "ike-latn"],
        "shi": ["shi-tfng", "shi-latn"],
        "crh": ["crh-cyrl", "crh-latn"],
        "sh": ["sh-latn", "sh-cyrl"],
        "ban": ["ban-bali", "ban-x-dharma", "ban-x-palmleaf", "ban-x-pku"],
        "tly": ["tly-cyrl"],
        "mni": ["mni-beng"],
        "zgh": ["zgh-latn"],
    ]
    static let variantList: [(edition: String, variant: String)] =
        variants.keys.sorted().flatMap { e in variants[e]!.map { (edition: e, variant: $0) } }
    static let variantIndexes: [String: Int] =
        Dictionary(uniqueKeysWithValues: variantList.enumerated().map { ($0.element.variant, $0.offset) })

    private static func find(_ code: String) -> (code: String, index: UInt16)? {
        var code = code
        return code.withUTF8 { find(UnsafeBufferPointer(rebasing: $0[...])) }
    }

    /// The variant a BCP 47 tag reads in, for an edition that has variants: the tag itself (`zh-tw`), its region
    /// (`zh-Hant-TW` → `zh-tw`) or its script (`zh-Hant` → `zh-hant`, `sr-Latn` → `sr-el`, `uz-Cyrl` → `uz-cyrl`).
    package static func variant(ofTag tag: String, edition: String) -> String? {
        guard let known = variants[edition] ?? LearnedVariants.shared.variants(of: edition) else { return nil }
        let t = tag.lowercased()
        if known.contains(t) { return t }
        let subtags = t.split(separator: "-").dropFirst().map(String.init)
        for s in subtags.reversed() where s.count == 2 {
            if known.contains("\(edition)-\(s)") { return "\(edition)-\(s)" }
        }
        for s in subtags where s.count == 4 {
            let mapped = edition == "sr" ? ["latn": "el", "cyrl": "ec"][s] ?? s : s
            if known.contains("\(edition)-\(mapped)") { return "\(edition)-\(mapped)" }
        }
        return nil
    }

    public static let english = LanguageCode("en")!

    /// Whether an edition is written in variants (the table's, or ones its wiki listed).
    public static func hasVariants(_ edition: String) -> Bool { variants[edition] != nil || LearnedVariants.shared.variants(of: edition) != nil }

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

    package static func find(_ tag: UnsafeBufferPointer<UInt8>) -> (code: String, index: UInt16)? {
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
            let a = (tag[i] &- 65 < 26 ? tag[i] | 0x20 : tag[i])
            if a != code[i] { return Int(a) - Int(code[i]) }
        }
        return tag.count - code.count
    }

    /// An edition named by a tag (`zh-yue`) or by its primary subtag (`de-CH` → `de`), read in the variant the tag
    /// names where the edition has variants (`zh-TW` → `zh` in `zh-tw`; `zh` alone → its default).
    package static func edition(_ tag: UnsafeBufferPointer<UInt8>) -> LanguageCode? {
        if let code = find(tag) { return LanguageCode(verified: code) }
        guard let dash = tag.firstIndex(of: 45), dash > 0 else { return nil }
        guard let found = find(UnsafeBufferPointer(rebasing: tag[..<dash])) else {
            // A variant whose prefix is not an edition (`ike-latn` of `iu`).
            let text = String(decoding: tag, as: UTF8.self).lowercased()
            return (variantIndexes[text] ?? LearnedVariants.shared.index(of: text)).map { LanguageCode(variantAt: $0) }
        }
        let edition = LanguageCode(verified: found)
        guard variants[found.code] != nil || LearnedVariants.shared.variants(of: found.code) != nil,
              let v = variant(ofTag: String(decoding: tag, as: UTF8.self), edition: found.code) else { return edition }
        return LanguageCode(v)
    }

}

import Foundation

import Synchronization

/// The variants the wikis themselves list (`meta=siteinfo&siprop=languagevariants`, read by the app at start-up and
/// daily) beyond `LanguageCode.variants`, the table the embedded default and a wiki that has not answered yet go by: a
/// wiki that adds a converter (`en-x-piglatin`, MediaWiki's test variant) has its variant accepted without a release.
/// Bounded: a variant's number shares six bits of `LanguageCode.key` with the table's (63 in all).
public final class LearnedVariants: Sendable {
    public static let shared = LearnedVariants()

    struct State {
        var list: [(edition: String, variant: String)] = []
        var byVariant: [String: Int] = [:]
        var byEdition: [String: [String]] = [:]
    }
    private let state = Mutex(State())
    static let limit = 63

    /// Learns the variants of each edition (`edition → its variants`, the edition's own code left out): those the
    /// table lacks, of editions Lede knows, while numbers are left. Returns the variants learned.
    @discardableResult
    public func learn(_ listed: [String: [String]]) -> [String] {
        state.withLock { s in
            var learned: [String] = []
            for edition in listed.keys.sorted() where LanguageCode.all.contains(edition) {
                for variant in listed[edition]!.map({ $0.lowercased() }).sorted() where variant != edition {
                    guard LanguageCode.variantIndexes[variant] == nil, s.byVariant[variant] == nil,
                          LanguageCode.variantList.count + s.list.count < LearnedVariants.limit,
                          MediaWikiLanguage.isWellFormed(variant), variant.hasPrefix(edition + "-") else { continue }
                    s.byVariant[variant] = LanguageCode.variantList.count + s.list.count
                    s.list.append((edition, variant))
                    s.byEdition[edition, default: LanguageCode.variants[edition] ?? []].append(variant)
                    learned.append(variant)
                }
            }
            return learned
        }
    }

    /// The number of a learned variant (after the table's), nil when none.
    func index(of variant: String) -> Int? { state.withLock { $0.byVariant[variant] } }

    func entry(_ i: Int) -> (edition: String, variant: String) { state.withLock { $0.list[i - LanguageCode.variantList.count] } }

    /// An edition's variants when some were learned (the table's with them), nil otherwise.
    func variants(of edition: String) -> [String]? { state.withLock { $0.byEdition[edition] } }
}

/// MediaWiki's language codes and BCP 47, both ways, by MediaWiki's own rules (its `LanguageCode`: `bcp47()` and
/// `bcp47ToInternal()`, the deprecated and non-standard codes, and the languages it has messages for, its
/// `languages/data/Names.php`). Inward, a phone's tag becomes the code MediaWiki has messages for (`de-DE` → `de`,
/// `pt-BR` → `pt-br`, `zh-Hant-TW` → `zh-tw`, `sr-Latn` → `sr-el`, `en-US` → `en`): what `uselang` is sent as.
/// Outward, a code becomes the tag browsers and screen readers know (`sr-el` → `sr-Latn`, `zh-tw` → `zh-Hant-TW`,
/// `zh-hans` → `zh-Hans`): what `Content-Language` and `lang` attributes say.
public enum MediaWikiLanguage {
    /// MediaWiki's deprecated codes and their replacements.
    public static let deprecated: [String: String] = [
        "als": "gsw", "bat-smg": "sgs", "be-x-old": "be-tarask", "fiu-vro": "vro", "roa-rup": "rup",
        "zh-classical": "lzh", "zh-min-nan": "nan", "zh-yue": "yue",
    ]

    /// MediaWiki's codes that are not BCP 47, and the tags they are.
    static let nonStandard: [String: String] = [
        "cbk-zam": "cbk", "de-formal": "de-x-formal", "eml": "egl", "en-rtl": "en-x-rtl", "es-formal": "es-x-formal",
        "hu-formal": "hu-x-formal", "map-bms": "jv-x-bms", "mo": "ro-Cyrl-MD", "nrm": "nrf", "nl-informal": "nl-x-informal",
        "roa-tara": "nap-x-tara", "simple": "en-simple", "sr-ec": "sr-Cyrl", "sr-el": "sr-Latn",
        "crh-ro": "crh-Latn-RO", "kk-cn": "kk-Arab-CN", "kk-tr": "kk-Latn-TR",
        "zh-cn": "zh-Hans-CN", "zh-sg": "zh-Hans-SG", "zh-my": "zh-Hans-MY", "zh-tw": "zh-Hant-TW", "zh-hk": "zh-Hant-HK",
        "zh-mo": "zh-Hant-MO",
    ]

    /// `nonStandard` read backwards, lower-cased (`sr-latn` → `sr-el`).
    static let internalOf: [String: String] = Dictionary(uniqueKeysWithValues: nonStandard.map { ($0.value.lowercased(), $0.key) })

    /// The languages MediaWiki has messages for (its language names' codes; the deprecated ones are read as their
    /// replacements).
    public static let codes: Set<String> = Set(("""
        aa ab ace ady ady-cyrl aeb aeb-arab aeb-latn af ak aln am an ang anp ar arc arn arq ary arz as ase ast atj av avk
        awa ay az azb ba ban bar bbc bbc-latn bcc bcl be be-tarask bg bgn bh bho bi bjn bm bn bo bpy bqi br brh bs bto bug
        bxr ca cbk-zam cdo ce ceb ch cho chr chy ckb co cps cr crh crh-latn crh-cyrl cs csb cu cv cy da de de-at de-ch
        de-formal diq dsb dtp dty dv dz ee egl el eml en en-ca en-gb en-x-piglatin eo es es-419 es-formal et eu ext fa ff fi
        fit fj fo fr frc frp frr fur fy ga gag gan gan-hans gan-hant gd gl glk gn gom gom-deva gom-latn gor got grc gsw gu
        gv ha hak haw he hi hif hif-latn hil ho hr hrx hsb ht hu hu-formal hy hz ia id ie ig ii ik ike-cans ike-latn ilo
        inh io is it iu ja jam jbo jut jv ka kaa kab kbd kbd-cyrl kg khw ki kiu kj kk kk-arab kk-cyrl kk-latn kk-cn kk-kz
        kk-tr kl km kn ko ko-kp koi kr krc kri krj krl ks ks-arab ks-deva ksh ku ku-latn ku-arab kv kw ky la lad lb lbe lez
        lfn lg li lij liv lki lmo ln lo lrc loz lt ltg lus luz lv lzh lzz mai map-bms mdf mg mh mhr mi min mk ml mn mni mo
        mr mrj ms mt mus mwl my myv mzn na nah nan nap nb nds nds-nl ne new ng niu nl nl-informal nn no nov nrm nso nv ny oc
        olo om or os pa pag pam pap pcd pdc pdt pfl pi pih pl pms pnb pnt prg ps pt pt-br qu qug rgn rif rm rmy rn ro
        roa-tara ru rue rup ruq ruq-cyrl ruq-latn rw sa sah sat sc scn sco sd sdc sdh se sei ses sg sgs sh shi shi-tfng
        shi-latn shn si simple sk skr sl sli sm sma sn so sq sr sr-ec sr-el srn ss st stq su sv sw szl ta tcy te tet tg
        tg-cyrl tg-latn th ti tk tl tly tn to tokipona tpi tr tru ts tt tt-cyrl tt-latn tum tw ty tyv tzm udm ug ug-arab
        ug-latn uk ur uz uz-cyrl uz-latn ve vec vep vi vls vmf vo vot vro wa war wo wuu xal xh xmf yi yo yue za zea zgh zh
        zh-cn zh-hans zh-hant zh-hk zh-mo zh-my zh-sg zh-tw zu
        """).split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init))

    /// The code MediaWiki has messages for that a language tag (BCP 47, or a MediaWiki code) names: the tag
    /// lower-cased, a BCP 47 form of a non-standard code read back (`sr-latn` → `sr-el`, `zh-hant-tw` → `zh-tw`), a
    /// deprecated code replaced, then subtags trimmed from the end until MediaWiki has the code (`de-de` → `de`,
    /// `zh-hant-us` → `zh-hant`). Nil when none (`x-klingon`, `qq`, a malformed tag).
    public static func code(forTag raw: String) -> String? {
        var tag = raw.lowercased()
        guard tag.utf8.count <= 35, isWellFormed(tag) else { return nil }
        while true {
            if let mapped = internalOf[tag] { tag = mapped }
            if let replaced = deprecated[tag] { tag = replaced }
            if codes.contains(tag) { return tag }
            guard let dash = tag.lastIndex(of: "-") else { return nil }
            tag = String(tag[..<dash])
            // A dangling singleton (`de-x` of `de-x-formal1`) is no code of its own.
            if let last = tag.split(separator: "-").last, last.count == 1, let cut = tag.lastIndex(of: "-") { tag = String(tag[..<cut]) }
        }
    }

    /// Letters, digits and hyphens; a primary subtag of 2-8 letters; subtags of 1-8 (lower-case already). One walk
    /// over the bytes (a problem's words read it on every request that names a language).
    static func isWellFormed(_ tag: String) -> Bool {
        var length = 0, first = true
        for b in tag.utf8 {
            if b == 45 {
                guard first ? length >= 2 : length >= 1 else { return false }
                first = false; length = 0
                continue
            }
            let letter = b >= 97 && b <= 122
            guard letter || (!first && b >= 48 && b <= 57) else { return false }
            length += 1
            guard length <= 8 else { return false }
        }
        return first ? length >= 2 : length >= 1
    }

    /// The BCP 47 tag of a MediaWiki code, as MediaWiki's `LanguageCode::bcp47` writes it: a deprecated code replaced,
    /// a non-standard one mapped, then a two-letter subtag after the first upper-cased (a region), a four-letter one
    /// title-cased (a script), the rest lower-cased (and the subtag after an `x` lower-cased). A code of one subtag
    /// that needs none of it is returned as it is (no copy).
    public static func bcp47(_ code: String) -> String {
        if !code.utf8.contains(45), code.utf8.allSatisfy({ $0 >= 97 && $0 <= 122 }), deprecated[code] == nil, nonStandard[code] == nil { return code }
        var c = code.lowercased()
        if let replaced = deprecated[c] { c = replaced }
        if let mapped = nonStandard[c] { c = mapped }
        let segments = c.split(separator: "-", omittingEmptySubsequences: false).map { $0.lowercased() }
        var out: [String] = []
        for (i, s) in segments.enumerated() {
            if i > 0 && segments[i - 1] == "x" { out.append(s) }
            else if i > 0 && s.count == 2 { out.append(s.uppercased()) }
            else if i > 0 && s.count == 4 { out.append(s.prefix(1).uppercased() + s.dropFirst()) }
            else { out.append(s) }
        }
        return out.joined(separator: "-")
    }
}

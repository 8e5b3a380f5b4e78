
/// A Wikipedia language edition code, valid by construction.
public struct LanguageCode: Sendable, Hashable, CustomStringConvertible {
    public let code: String
    /// Where the edition stands among all of them, sorted by code: a number that names it (keys hash it, not the text).
    package let index: UInt16
    public var description: String { code }

    public init?(_ raw: String) {
        var raw = raw
        guard let found = raw.withUTF8({ LanguageCode.find(UnsafeBufferPointer(rebasing: $0[...])) }) else { return nil }
        self.init(verified: found)
    }

    package init(verified found: (code: String, index: UInt16)) { code = found.code; index = found.index }

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

    /// An edition named by a tag (`zh-yue`) or by its primary subtag (`de-CH` → `de`).
    package static func edition(_ tag: UnsafeBufferPointer<UInt8>) -> LanguageCode? {
        if let code = find(tag) { return LanguageCode(verified: code) }
        guard let dash = tag.firstIndex(of: 45), dash > 0 else { return nil }
        return find(UnsafeBufferPointer(rebasing: tag[..<dash])).map { LanguageCode(verified: $0) }
    }

}

import Foundation

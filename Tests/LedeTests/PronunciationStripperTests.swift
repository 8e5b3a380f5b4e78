import Foundation
import XCTest
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded

/// Seed scenario (000, Link Previews): "Given the article summary has an IPA … Then the IPA and enclosing
/// parentheses should be removed". Cases are leads of real articles (shortened), in several languages.
final class PronunciationStripperTests: XCTestCase {
    static let stripped: [(String, String, String)] = [
        // English
        ("en IPA and respelling", "Amsterdam (/ˈæmstərdæm/ AM-stər-dam, US also /ˌæmstərˈdæm/ AM-stər-DAM; Dutch: [ˌɑmstərˈdɑm] ⓘ) is the capital of the Netherlands.",
         "Amsterdam is the capital of the Netherlands."),
        ("en IPA with dates goes whole", "Albert Einstein (/ˈaɪnstaɪn/ EYEN-styne; German: [ˈalbɛɐt ˈʔaɪnʃtaɪn] ⓘ; 14 March 1879 – 18 April 1955) was a German-born theoretical physicist.",
         "Albert Einstein was a German-born theoretical physicist."),
        ("en Marathi IPA", "Mumbai (/mʊmˈbaɪ/ muum-BY; Marathi: [ˈmumbəi], ISO: Mumbaī), also known as Bombay, is the capital of Maharashtra.",
         "Mumbai, also known as Bombay, is the capital of Maharashtra."),
        ("en Danish with listen mark", "Copenhagen (/ˌkoʊpənˈheɪɡən, -ˈhɑː-/ KOH-pən-HAY-gən, -⁠HAH-; Danish: København [kʰøpm̩ˈhɑwˀn] ⓘ) is the capital of Denmark.",
         "Copenhagen is the capital of Denmark."),
        ("en old style (listen)", "Paris (/ˈpærɪs/ (listen) PARR-iss) is the capital of France.", "Paris is the capital of France."),
        ("en nested listen group goes with its parent", "Angela Merkel (German: [aŋˈɡeːla ˈmɛʁkl̩] (listen); née Kasner; born 17 July 1954) is a German retired politician.",
         "Angela Merkel is a German retired politician."),
        ("en pronounced word", "Nguyễn (pronounced win) is the most common Vietnamese surname.", "Nguyễn is the most common Vietnamese surname."),
        ("en pronunciation word with transliteration", "The Suez Canal (Arabic: قَنَاةُ ٱلسُّوَيْسِ, romanized: Qanāt as-Suways, Egyptian Arabic pronunciation: [ʔɑˈnæːt esˈsweːs]) is a waterway in Egypt.",
         "The Suez Canal is a waterway in Egypt."),
        ("en group before comma", "Marie Curie (/ˈkjʊəri/ KURE-ee), was a physicist.", "Marie Curie, was a physicist."),
        ("en group at end of sentence", "The city is called Reykjavík (Icelandic: [ˈreiːcaˌviːk]).", "The city is called Reykjavík."),
        ("en only IPA in brackets", "Rijksmuseum (Dutch pronunciation: [ˈrɛiksmyˌzeːjʏm] ⓘ) is a museum.", "Rijksmuseum is a museum."),
        ("en empty group after markup removal", "Tokyo ( ) is the capital of Japan.", "Tokyo is the capital of Japan."),
        ("en comma-only group", "Kyiv (, ) is the capital of Ukraine.", "Kyiv is the capital of Ukraine."),
        ("en semicolon-only group", "Lagos (; ) is a city in Nigeria.", "Lagos is a city in Nigeria."),
        ("en two groups", "Beijing (/beɪˈdʒɪŋ/ bay-JING; Chinese: 北京; pinyin: Běijīng) (also Peking) is the capital of China.",
         "Beijing (also Peking) is the capital of China."),
        ("en IPA group at start of text", "(/ˈlʌndən/) London is the capital.", "London is the capital."),
        ("en keeps other groups in the same sentence", "Gone with the Wind (film) (/ɡɒn/) is a 1939 film.", "Gone with the Wind (film) is a 1939 film."),
        // German
        ("de IPA", "Amsterdam [amstɐˈdam] (niederländisch [ɑmstərˈdɑm] ⓘ) ist die Hauptstadt der Niederlande.",
         "Amsterdam [amstɐˈdam] ist die Hauptstadt der Niederlande."),
        ("de Aussprache", "München (Aussprache: [ˈmʏnçn̩] ⓘ; bairisch Minga) ist die Landeshauptstadt Bayerns.",
         "München ist die Landeshauptstadt Bayerns."),
        ("de anhören", "Köln (kölsch Kölle, anhören) ist mit über einer Million Einwohnern die größte Stadt Nordrhein-Westfalens.",
         "Köln ist mit über einer Million Einwohnern die größte Stadt Nordrhein-Westfalens."),
        ("de dänisch", "Kopenhagen (dänisch København [kʰøb̥m̩ˈhɑʊ̯ˀn] ⓘ) ist die Hauptstadt des Königreichs Dänemark.",
         "Kopenhagen ist die Hauptstadt des Königreichs Dänemark."),
        // Italian
        ("it AFI", "Amsterdam (AFI: /amsterˈdam/; in olandese [ˌɑmstərˈdɑm] ⓘ) è la capitale dei Paesi Bassi.", "Amsterdam è la capitale dei Paesi Bassi."),
        ("it pronuncia", "Madrid (pronuncia spagnola [maˈðɾið]) è la capitale della Spagna.", "Madrid è la capitale della Spagna."),
        ("it ascolta", "Firenze (AFI: /fiˈrɛnʦe/ ascolta) è un comune italiano.", "Firenze è un comune italiano."),
        // French
        ("fr API prononciation", "Paris (prononcé [paʁi] ) est la capitale de la France.", "Paris est la capitale de la France."),
        ("fr écouter", "Bruxelles (en néerlandais Brussel, écouter) est la capitale de la Belgique.", "Bruxelles est la capitale de la Belgique."),
        ("fr prononciation", "Reims (prononciation : [ʁɛ̃s]) est une commune française.", "Reims est une commune française."),
        // Spanish
        ("es pronunciación", "Madrid (pronunciación: [maˈðɾið] ⓘ) es la capital de España.", "Madrid es la capital de España."),
        ("es AFI", "Sevilla (AFI: [seˈβiʎa]) es una ciudad española.", "Sevilla es una ciudad española."),
        // Dutch
        ("nl uitspraak", "Amsterdam (uitspraak: [ˌɑmstərˈdɑm] ⓘ) is de hoofdstad van Nederland.", "Amsterdam is de hoofdstad van Nederland."),
        ("nl luister", "Utrecht (luister) is een stad in Nederland.", "Utrecht is een stad in Nederland."),
        // Chinese and Japanese (full-width brackets, no spaces)
        ("zh full-width with pinyin IPA", "北京市（汉语拼音：Běijīng Shì，国际音标：[pèɪtɕíŋ ʂɻ̩̂]）是中华人民共和国的首都。", "北京市是中华人民共和国的首都。"),
        ("zh 发音", "上海（发音：ⓘ）是中国的直辖市。", "上海是中国的直辖市。"),
        ("ja IPA in full-width", "東京都（とうきょうと、英: Tokyo Metropolis [ˈtoʊkioʊ]）は、日本の首都である。", "東京都は、日本の首都である。"),
        ("ja 発音", "大阪（おおさか、発音）は日本の都市。", "大阪は日本の都市。"),
    ]

    static let untouched: [(String, String)] = [
        ("acronym", "The Hollywood Walk of Fame (HW) is a sidewalk."),
        ("film disambiguator", "Titanic (film) is a 1997 epic romance."),
        ("born year", "John Smith (born 1950) is a British actor."),
        ("life dates", "Maria Skłodowska-Curie (7 November 1867 – 4 July 1934) was a physicist."),
        ("clause", "He studied in Paris (later moving to London) and taught chemistry."),
        ("maths", "Let f(x) = (x + 1) for every real x."),
        ("unbalanced open", "Amsterdam (/ˈæmstərdæm/ is the capital."),
        ("unbalanced close", "Amsterdam /ˈæmstərdæm/) is the capital."),
        ("square brackets outside a group", "Amsterdam [amstɐˈdam] ist die Hauptstadt."),
        ("slash without IPA", "The ratio (1/2 or 50/50) is common."),
        ("lowercase api is not a pronunciation word", "The service exposes an interface (api v2) for clients."),
        ("citation brackets", "Python (programming language) [citation needed] is popular."),
        ("no groups at all", "Mercury is the first planet from the Sun."),
        ("zh without pronunciation", "北京（Peking）是中国的首都。"),
    ]

    func testPronunciationGroupsAreRemoved() {
        for (name, input, expected) in Self.stripped {
            XCTAssertEqual(PronunciationStripper.clean(input), expected, name)
        }
    }

    func testEverythingElseStays() {
        for (name, input) in Self.untouched {
            XCTAssertEqual(PronunciationStripper.clean(input), input, name)
        }
    }

    func testThereAreAtLeastFortyCases() {
        XCTAssertGreaterThanOrEqual(Self.stripped.count + Self.untouched.count + Self.html.count, 40)
    }

    static let html: [(String, String, String)] = [
        ("html IPA spans", "<p><b>Amsterdam</b> (<span class=\"rt-commentedText\"><span class=\"IPA\">/ˈæmstərdæm/</span></span>; Dutch: <span class=\"IPA\">[ˌɑmstərˈdɑm]</span> ⓘ) is the capital.</p>",
         "<p><b>Amsterdam</b> is the capital.</p>"),
        ("html brackets in attributes never count", "<p><a href=\"/wiki/F_(x)\" title=\"f(x\">f</a> (born 1950) is a symbol.</p>",
         "<p><a href=\"/wiki/F_(x)\" title=\"f(x\">f</a> (born 1950) is a symbol.</p>"),
        ("html group crossing a tag boundary keeps tags balanced", "<p><b>Köln (kölsch</b> Kölle, anhören) ist eine Stadt.</p>",
         "<p><b>Köln</b> ist eine Stadt.</p>"),
        ("html listen link", "<p><b>Paris</b> (<span>/ˈpærɪs/</span> <a href=\"//upload.wikimedia.org/x.ogg\">listen</a>) is a city.</p>",
         "<p><b>Paris</b> is a city.</p>"),
        ("html untouched", "<p><b>Titanic</b> (<i>film</i>) is a 1997 film.</p>", "<p><b>Titanic</b> (<i>film</i>) is a 1997 film."+"</p>"),
        ("html void element inside", "<p>X (<img src=\"a.png\"/> /ˈeks/) marks it.</p>", "<p>X marks it.</p>"),
    ]

    func testHTMLExtractsAreCleanedAndStayWellFormed() {
        for (name, input, expected) in Self.html {
            let out = PronunciationStripper.cleanHTML(input)
            XCTAssertEqual(out, expected, name)
            XCTAssertTrue(Self.balanced(out), "\(name): tags stay balanced")
        }
    }

    static func balanced(_ html: String) -> Bool {
        guard let units = PronunciationStripper.tokenizeHTML(html) else { return false }
        var stack: [String] = []
        for u in units {
            guard case .tag(let t) = u else { continue }
            let name = PronunciationStripper.tagName(t)
            if t.hasPrefix("</") { guard stack.popLast() == name else { return false } }
            else if !t.hasSuffix("/>") && !PronunciationStripper.voidElements.contains(name) { stack.append(name) }
        }
        return stack.isEmpty
    }

    func testNoDoubleSpacesOrSpaceBeforePunctuationWhereAGroupWent() {
        for (_, input, _) in Self.stripped {
            let out = PronunciationStripper.clean(input)
            XCTAssertFalse(out.contains("  "), out)
            for p in [",", ".", ";", ":", "!", "?", "，", "。"] { XCTAssertFalse(out.contains(" " + p), out) }
        }
    }

    func testCleaningIsIdempotent() {
        for (_, input, _) in Self.stripped + Self.html {
            let once = PronunciationStripper.cleanHTML(input)
            XCTAssertEqual(PronunciationStripper.cleanHTML(once), once)
        }
    }

    /// Odd upstream text is judged group by group from counts made once: nesting thousands deep reads in one pass.
    /// An unclosed `[` holds no IPA span; a closed one does, and takes its whole outermost group with it.
    func testDeeplyNestedGroupsAreJudgedInOnePass() {
        let unclosed = String(repeating: "[ˈɑ (", count: 4_000) + String(repeating: ")", count: 4_000)
        let innermostGone = String(repeating: "[ˈɑ (", count: 3_999) + "[ˈɑ" + String(repeating: ")", count: 3_999)
        XCTAssertEqual(PronunciationStripper.clean(unclosed), innermostGone, "no group carries pronunciation; only the empty innermost one goes")
        let closed = "Word " + String(repeating: "([ˈɑ] ", count: 4_000) + String(repeating: ")", count: 4_000) + " rest."
        XCTAssertEqual(PronunciationStripper.clean(closed), "Word rest.")
        let html = "<b>Word</b> " + String(repeating: "(<i>/ˈɑ/</i> ", count: 2_000) + String(repeating: ")", count: 2_000) + " rest."
        XCTAssertEqual(PronunciationStripper.cleanHTML(html), "<b>Word</b> rest.")
    }

    /// Slashes pair in order from a group's first one, as before: `/x/ɪ/` has the pair `/x/` (no IPA) and a lone `/`.
    func testSlashesPairFromTheGroupsFirstSlash() {
        XCTAssertEqual(PronunciationStripper.clean("A (/x/ɪ/) b"), "A (/x/ɪ/) b")
        XCTAssertEqual(PronunciationStripper.clean("A (/x/ /ɪ/) b"), "A b")
    }

    /// The fast ways in are the rules: the ASCII tables hold exactly the scalars the Unicode properties name, and the
    /// first-letter gate lets every pronunciation word through, however it is cased or encoded (precomposed or
    /// decomposed), so no word the lookup would find is skipped.
    func testTheFastPathsAgreeWithTheRules() {
        for v in 0..<UInt32(0x80) {
            let scalar = Unicode.Scalar(UInt8(v))
            XCTAssertEqual(PronunciationStripper.isPunctuationOrSpace(scalar), PronunciationStripper.punctuationOrSpaceByProperties(scalar), "\(v)")
            XCTAssertEqual(PronunciationStripper.isWordScalar(scalar), PronunciationStripper.wordScalarByProperties(scalar), "\(v)")
        }
        let words = PronunciationStripper.pronunciationWords.flatMap { [$0, $0.uppercased(), $0.capitalized] } + Array(PronunciationStripper.caseSensitiveWords)
        for word in words {
            for form in [word, word.decomposedStringWithCanonicalMapping, word.precomposedStringWithCanonicalMapping] {
                let scalars = Array(form.unicodeScalars)
                XCTAssertTrue(PronunciationStripper.couldBeWord(first: scalars[0], count: scalars.count), form)
                XCTAssertEqual(PronunciationStripper.clean("A (\(form) x) b"), "A b", form)
            }
        }
        XCTAssertFalse(PronunciationStripper.couldBeWord(first: "t", count: 3), "the")
        XCTAssertEqual(PronunciationStripper.clean("No group here: ˈɑ /x/"), "No group here: ˈɑ /x/")
    }
}

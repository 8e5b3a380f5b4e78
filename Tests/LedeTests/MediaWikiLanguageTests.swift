import XCTest
@testable import LedeBasics

/// MediaWiki's codes inward, BCP 47 outward, by MediaWiki's rules (`LanguageCode::bcp47`, `bcp47ToInternal`, its
/// language list): pure, no server.
final class MediaWikiLanguageTests: XCTestCase {
    func testPhonesTagsBecomeTheCodesMediaWikiHasMessagesFor() {
        let cases: [(String, String?)] = [
            ("de-DE", "de"), ("pt-BR", "pt-br"), ("zh-Hant-TW", "zh-tw"), ("sr-Latn", "sr-el"), ("sr-Latn-RS", "sr-el"),
            ("sr-Cyrl", "sr-ec"), ("en-US", "en"), ("en-GB", "en-gb"), ("de-CH", "de-ch"), ("fr-CA", "fr"), ("es-MX", "es"),
            ("es-419", "es-419"), ("zh-Hans", "zh-hans"), ("zh-Hans-CN", "zh-cn"), ("zh-Hant-US", "zh-hant"), ("zh-TW", "zh-tw"),
            ("nb", "nb"), ("no", "no"), ("zh-min-nan", "nan"), ("be-x-old", "be-tarask"), ("de-x-formal", "de-formal"),
            ("en-simple", "simple"), ("ja-JP", "ja"), ("x-klingon", nil), ("tlh", nil), ("*", nil), ("en_US", nil), ("", nil),
        ]
        for (tag, code) in cases { XCTAssertEqual(MediaWikiLanguage.code(forTag: tag), code, tag) }
    }

    func testCodesGoOutAsBCP47() {
        let cases = [
            ("sr-el", "sr-Latn"), ("sr-ec", "sr-Cyrl"), ("zh-tw", "zh-Hant-TW"), ("zh-cn", "zh-Hans-CN"), ("zh-hans", "zh-Hans"),
            ("zh-hant", "zh-Hant"), ("kk-cyrl", "kk-Cyrl"), ("de-formal", "de-x-formal"), ("simple", "en-simple"), ("en", "en"),
            ("en-gb", "en-GB"), ("pt-br", "pt-BR"), ("be-x-old", "be-tarask"), ("zh-min-nan", "nan"), ("en-x-piglatin", "en-x-piglatin"),
            ("ike-cans", "ike-Cans"), ("es-419", "es-419"),
        ]
        for (code, tag) in cases { XCTAssertEqual(MediaWikiLanguage.bcp47(code), tag, code) }
        XCTAssertEqual(LanguageCode("sr-el")?.bcp47, "sr-Latn")
        XCTAssertEqual(LanguageCode("de")?.bcp47, "de")
    }
}

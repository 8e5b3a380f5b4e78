import Foundation
import HTTPServer
import TestSupport
import XCTest
@testable import Lede
@testable import LedeBasics

/// `{{PLURAL:$N|…}}` with CLDR's categories and `{{formatnum:$N}}` as MediaWiki writes numbers, in the catalogue's
/// messages (issue 69): pure, then over HTTP.
final class PluralTests: XCTestCase {
    func text(_ key: MessageKey, _ language: String, _ parameters: String...) -> String {
        Messages.shared.text(key, in: language, parameters: parameters)
    }

    func testEachLanguageTakesItsOwnFormFor1_2_5And21() {
        let forms: [(String, [String])] = [
            ("en", ["1 character", "2 characters", "5 characters", "21 characters"]),
            ("ru", ["1 символа", "2 символов", "5 символов", "21 символа"]),
            ("pl", ["1 znak.", "2 znaki", "5 znaków", "21 znaków"]),
            ("fr", ["1 caractère.", "2 caractères", "5 caractères", "21 caractères"]),
            ("ar", ["محرف واحد", "محرفين", "٥ محارف", "٢١ محرفًا"]),
            ("ja", ["1", "2", "5", "21"]),
        ]
        for (language, expected) in forms {
            for (n, want) in zip([1, 2, 5, 21], expected) {
                let said = text(.problemQueryTooLong, language, String(n))
                XCTAssertTrue(said.contains(want), "\(language) \(n): \(said)")
            }
        }
        // A verb that agrees with one count and a noun with another.
        XCTAssertEqual(text(.problemSavedPartlyRemoved, "en", "1", "3").prefix(34), "1 of 3 saved articles was removed;")
        XCTAssertTrue(text(.problemSavedPartlyRemoved, "fr", "1", "3").hasPrefix("1 article enregistré sur 3 a été retiré"))
        XCTAssertTrue(text(.problemSavedPartlyRemoved, "fr", "2", "3").hasPrefix("2 articles enregistrés sur 3 ont été retirés"))
        XCTAssertTrue(text(.problemAccountStreamsFull, "ru", "2").contains("уже открыто 2 потока"))
        XCTAssertTrue(text(.problemAccountStreamsFull, "ru", "1").contains("уже открыт 1 поток "))
        XCTAssertTrue(text(.problemRateLimited, "ru", "3", "1", "20").contains("Лимит — 1 единица за раз"))
    }

    func testTheCategoriesFollowCLDR() {
        let cases: [(String, Int, PluralRules.Category)] = [
            ("en", 0, .other), ("en", 1, .one), ("fr", 0, .one), ("fr", 1, .one), ("fr", 2, .other), ("fr", 1_000_000, .many),
            ("ru", 1, .one), ("ru", 11, .many), ("ru", 21, .one), ("ru", 22, .few), ("ru", 12, .many), ("ru", 105, .many),
            ("uk", 3, .few), ("pl", 1, .one), ("pl", 21, .many), ("pl", 24, .few), ("cs", 3, .few), ("cs", 5, .other),
            ("ar", 0, .zero), ("ar", 2, .two), ("ar", 3, .few), ("ar", 11, .many), ("ar", 100, .other), ("ar", 103, .few),
            ("he", 2, .two), ("he", 3, .other), ("ja", 1, .other), ("pt-br", 0, .one), ("pt", 0, .other), ("hi", 0, .one),
        ]
        for (language, n, category) in cases { XCTAssertEqual(PluralRules.category(n, language), category, "\(language) \(n)") }
        XCTAssertEqual(PluralRules.form(0, ["0=none", "one", "many"], "en"), "none", "an explicit form first")
        XCTAssertEqual(PluralRules.form(7, ["one"], "ru"), "one", "fewer forms than categories: the last")
    }

    func testNumbersAreWrittenAsTheLanguageWritesThem() {
        let cases: [(String, String, String)] = [
            ("en", "4000", "4,000"), ("de", "4000", "4.000"), ("fr", "4000", "4\u{202F}000"), ("ru", "1234567", "1\u{00A0}234\u{00A0}567"),
            ("pl", "4000", "4000"), ("pl", "40000", "40\u{00A0}000"), ("es", "4000", "4000"), ("ar", "4000", "٤٬٠٠٠"),
            ("fa", "1500", "۱٬۵۰۰"), ("hi", "1234567", "12,34,567"), ("ja", "4000", "4,000"), ("en", "339", "339"), ("en", "-4000", "-4,000"),
        ]
        for (language, digits, written) in cases { XCTAssertEqual(NumberFormat.format(digits, language), written, "\(language) \(digits)") }
        XCTAssertEqual(text(.problemServerStreamsFull, "de", "10000").contains("(10.000)"), true)
    }

    /// The protection's expiry as a date in the reader's language, not a raw timestamp (issue 69).
    func testAProtectionsExpiryIsADateInTheReadersLanguage() {
        let cases = [("en", "January 1, 2027"), ("de", "1. Januar 2027"), ("fr", "1 janvier 2027"), ("ja", "2027年1月1日"), ("ru", "1 января 2027")]
        for (language, written) in cases {
            let said = EditRules.written(date: "2027-01-01T00:00:00Z", language: language)
            XCTAssertTrue(said.contains(written) && said.hasSuffix("(UTC)"), "\(language): \(said)")
        }
        XCTAssertEqual(EditRules.written(date: "soon", language: "de"), "soon", "no timestamp: as sent")
        let notice = Messages.shared.text(.editorProtectedUntil, in: "de", "Administratoren", EditRules.written(date: "2027-01-01T00:00:00Z", language: "de"))
        XCTAssertTrue(notice.contains("1. Januar 2027"), notice)
    }

    func testAParametersBracesAreNeverRead() {
        let said = text(.problemNoRoute, "en", "/{{PLURAL:1|x|y}}$2")
        XCTAssertEqual(said, "No route for /{{PLURAL:1|x|y}}$2.")
    }

    /// The 429's budget over HTTP: "The limit is 1 unit" in English, Russian's three forms, the count as the
    /// language writes it.
    func testTheRateLimitsWordsAgreeWithItsBudget() throws {
        for (burst, english, russian) in [(1, "The limit is 1 unit at once", "Лимит — 1 единица за раз"), (2, "The limit is 2 units", "Лимит — 2 единицы"),
                                          (5, "The limit is 5 units", "Лимит — 5 единиц"), (21, "The limit is 21 units", "Лимит — 21 единица"),
                                          (4000, "The limit is 4,000 units", "Лимит — 4\u{00A0}000 единиц")] {
            let server = try startLede { $0.server.clients.rate = 0.2; $0.addressRate = 0.2; $0.addressBurst = Double(burst) }
            defer { server.shutdown(); server.waitUntilStopped() }
            var refusal: TestResponse?
            for _ in 0...(burst + 1) where refusal == nil {
                let r = try get(server, "/languages", ["Accept-Language": "ru"])
                if r.status == 429 { refusal = r }
            }
            let r = try XCTUnwrap(refusal, "burst \(burst)")
            XCTAssertTrue((r.json["detail"] as? String ?? "").contains(russian), "\(r.json)")
            let plain = try get(server, "/languages")
            XCTAssertTrue((plain.json["detail"] as? String ?? "").contains(english), "\(plain.json)")
        }
    }
}

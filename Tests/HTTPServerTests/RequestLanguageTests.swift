import Synchronization
import TestSupport
import XCTest
@testable import HTTPServer
import HTTPCore

/// A request's languages are read once, when it is dispatched, by the app's localizer, and every stage after reads
/// that: the handler (`RequestContext.language`) and the problem stage (its words, `Content-Language`, `Vary`).
final class RequestLanguageTests: XCTestCase {
    /// Reads `Accept-Language`'s first tag as both languages, counting how often it is asked.
    final class CountingLocalizer: ProblemLocalizer {
        let reads = Atomic(0)
        func language(of request: HTTPRequest) -> RequestLanguage {
            reads.add(1, ordering: .relaxed)
            guard let tag = request.headers["Accept-Language"]?.split(separator: ",").first.map(String.init) else { return .unnamed }
            return RequestLanguage(asked: .header(tag), words: tag, wordsByHeader: true)
        }
        func words(for problem: Problem, language: RequestLanguage) -> ProblemWordsInLanguage? {
            guard let words = language.words, words == "xx" else { return nil }
            return ProblemWordsInLanguage(title: "Xx title", detail: "Xx detail", language: words, byHeader: language.wordsByHeader)
        }
    }

    func testTheHandlerAndTheProblemStageReadTheLanguageTheIntakeReadOnce() throws {
        let router = Router()
        router.get("/words") { ctx in .response(.text(ctx.language.words ?? "none")) }
        router.get("/refused") { _ in throw Problem(status: 400, detail: "Refused in English.") }
        router.get("/later") { ctx in
            .async {
                // The task, off the dispatch, still has the language read at the dispatch.
                throw Problem(status: 409, detail: "Refused later: \(ctx.language.words ?? "none").")
            }
        }
        let localizer = CountingLocalizer()
        let server = try startServer(router, localizer: localizer)
        defer { server.shutdown() }

        XCTAssertEqual(try get(server, "/words", ["Accept-Language": "xx, yy;q=0.5"]).text, "xx")
        XCTAssertEqual(localizer.reads.load(ordering: .relaxed), 1)

        let refused = try get(server, "/refused", ["Accept-Language": "xx"])
        XCTAssertEqual(refused.status, 400)
        XCTAssertEqual(refused.json["detail"] as? String, "Xx detail")
        XCTAssertEqual(refused.header("Content-Language"), "xx")
        XCTAssertEqual(refused.header("Vary"), "Accept-Language")
        XCTAssertEqual(localizer.reads.load(ordering: .relaxed), 2, "the problem stage did not read the request again")

        let later = try get(server, "/later", ["Accept-Language": "xx"])
        XCTAssertEqual(later.status, 409)
        XCTAssertEqual(later.header("Content-Language"), "xx")
        XCTAssertEqual(localizer.reads.load(ordering: .relaxed), 3)

        // A 404 goes through the same intake: one read, and its words.
        let missing = try get(server, "/nowhere", ["Accept-Language": "xx"])
        XCTAssertEqual(missing.status, 404)
        XCTAssertEqual(missing.json["title"] as? String, "Xx title")
        XCTAssertEqual(localizer.reads.load(ordering: .relaxed), 4)

        // No field: the handler sees `.unnamed`, the problem stays as written.
        XCTAssertEqual(try get(server, "/words").text, "none")
        let english = try get(server, "/refused")
        XCTAssertEqual(english.json["detail"] as? String, "Refused in English.")
        XCTAssertNil(english.header("Content-Language"))
    }
}

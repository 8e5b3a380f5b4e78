import Foundation
import Synchronization
import HTTPServer
import TestSupport
import XCTest
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded
@testable import HTTPCore
@testable import Upstream

/// Seed 001, Automation Animals — user journeys.
final class AutomationAnimalsJourneyTests: XCTestCase {
    /// First Launch: favourites off, no filters → all 12 animals, each selectable with its details.
    func testFirstLaunchShowsAllTwelveAnimals() throws {
        let all = Animals.filter(tags: [], favorites: [], favoritesOnly: false)
        XCTAssertEqual(all.count, 12)
        XCTAssertEqual(Set(all.map(\.id)).count, 12)
    }

    /// First Launch: tapping the favourites star with no favourites → nothing, and "No animals found".
    func testFirstLaunchFavoritesOnlyWithNoneShowsNoAnimalsFound() {
        XCTAssertTrue(Animals.filter(tags: [], favorites: [], favoritesOnly: true).isEmpty)
        XCTAssertEqual(Animals.noAnimalsMessage, "No animals found")
    }

    /// Favoriting: with favourites, the favourites filter shows only those (and combines with tags).
    func testFavoritingShowsOnlyFavoritedAnimals() {
        XCTAssertEqual(Animals.filter(tags: [], favorites: [2, 9], favoritesOnly: true).map(\.name), ["Elephant", "Cat"])
        XCTAssertEqual(Animals.filter(tags: ["pet"], favorites: [2, 9], favoritesOnly: true).map(\.name), ["Cat"])
    }

    /// Filtering: tags are applied with OR.
    func testFilteringUsesOR() {
        let birdsOrAfrica = Animals.filter(tags: ["bird", "africa"], favorites: [], favoritesOnly: false).map(\.name)
        XCTAssertEqual(birdsOrAfrica, ["Lion", "Elephant", "Giraffe", "Zebra", "Parrot", "Penguin", "Owl"])
        XCTAssertTrue(Animals.filter(tags: ["unicorn"], favorites: [], favoritesOnly: false).isEmpty, "unknown tags match nothing")
        XCTAssertEqual(Animals.tags, Animals.tags.sorted())
        XCTAssertEqual(Set(Animals.tags).count, Animals.tags.count)
    }

    func testListValidation() {
        XCTAssertThrowsError(try Animals.list("bird,,pet", name: "tags"))
        XCTAssertThrowsError(try Animals.list(Array(repeating: "a", count: 101).joined(separator: ","), name: "tags"))
        XCTAssertThrowsError(try Animals.favorites("1,x"))
        XCTAssertThrowsError(try Animals.flag("yes", name: "favoritesOnly"))
        XCTAssertEqual(try Animals.favorites("3, 7"), [3, 7])
    }
}

/// Seed 003, rgallery.
final class RGalleryRulesTests: XCTestCase {
    func listing(_ text: String) -> RedditListing { try! JSONDecoder().decode(RedditListing.self, from: Data(text.utf8)) }

    func testOnlyImagePostsNeverNSFWAndAmpUnescaped() {
        let l = listing("""
        {"kind":"Listing","data":{"children":[
          {"kind":"t3","data":{"id":"a1","title":"img","post_hint":"image","url":"https://i.redd.it/a1.jpg","over_18":false,
            "preview":{"images":[{"source":{"url":"https://preview.redd.it/a1.jpg?auto=webp&amp;s=x","width":1000,"height":800},
                                  "resolutions":[{"url":"https://preview.redd.it/a1.jpg?width=108&amp;s=y","width":108,"height":86},
                                                 {"url":"https://preview.redd.it/a1.jpg?width=320&amp;s=z","width":320,"height":256}]}]}}},
          {"kind":"t3","data":{"id":"a2","title":"nsfw","post_hint":"image","url":"https://i.redd.it/a2.jpg","over_18":true,
            "preview":{"images":[{"source":{"url":"https://preview.redd.it/a2.jpg","width":10,"height":10}}]}}},
          {"kind":"t3","data":{"id":"a3","title":"text","is_self":true,"url":"https://www.reddit.com/r/x/a3"}},
          {"kind":"t3","data":{"id":"a4","title":"video","is_video":true,"url":"https://v.redd.it/a4",
            "preview":{"images":[{"source":{"url":"https://external-preview.redd.it/a4.png","width":10,"height":10}}]}}},
          {"kind":"t3","data":{"id":"a5","title":"link with preview","url":"https://example.org/article",
            "preview":{"images":[{"source":{"url":"https://external-preview.redd.it/a5.png","width":10,"height":10}}]}}},
          {"kind":"t3","data":{"id":"a6","title":"png without hint","url":"https://i.imgur.com/a6.PNG",
            "preview":{"images":[{"source":{"url":"https://preview.redd.it/a6.png?a=1&amp;b=2","width":50,"height":50}}]}}}
        ]}}
        """)
        let images = RedditRules.images(l)
        XCTAssertEqual(images.map(\.id), ["a1", "a6"])
        XCTAssertEqual(images[0].image.url, "https://preview.redd.it/a1.jpg?auto=webp&s=x")
        XCTAssertEqual(images[0].thumbnail.url, "https://preview.redd.it/a1.jpg?width=320&s=z")
        XCTAssertEqual(images[1].thumbnail.url, "https://preview.redd.it/a6.png?a=1&b=2")
    }

    /// DETAILS page on a RELATED GRID VIEW ITEM: the grid never contains THUMB1, nor THUMB2 once it is selected.
    func testRelatedGridExcludesTheSelectedAndPreviouslyViewedImages() {
        let imgs = ["t1", "t2", "t3", "t4"].map { GalleryImage(id: $0, title: $0, thumbnail: .init(url: $0), image: .init(url: $0), author: nil, permalink: nil) }
        XCTAssertEqual(RedditRules.related(imgs, selected: "t1", exclude: []).map(\.id), ["t2", "t3", "t4"])
        XCTAssertEqual(RedditRules.related(imgs, selected: "t2", exclude: ["t1"]).map(\.id), ["t3", "t4"])
    }

    func testKeywordsAndMessages() {
        for ok in ["cats", "EarthPorn", "a_1", String(repeating: "x", count: 21)] { XCTAssertTrue(RedditRules.isValidKeyword(ok), ok) }
        for bad in ["a", String(repeating: "x", count: 22), "cats dogs", "c-a-t", "../x", "ça", ""] { XCTAssertFalse(RedditRules.isValidKeyword(bad), bad) }
        XCTAssertEqual(RedditRules.noResultsMessage(words: InterfaceLanguage.wordsFromAcceptLanguage("it-IT,it;q=0.9")), "Nessun risultato")
        XCTAssertEqual(RedditRules.noResultsMessage(words: InterfaceLanguage.wordsFromAcceptLanguage("en-US")), "No results")
        XCTAssertEqual(RedditRules.noResultsMessage(words: nil), "No results")
    }
}

/// A fake Reddit on loopback, answering with the embedded listings unless told to fail.
final class FakeReddit: @unchecked Sendable {
    let server: HTTPServer
    let calls = Locked<Int>(0)
    let behaviour = Locked<FakeUpstream.Behaviour>(.embedded)
    var base: String { "http://127.0.0.1:\(server.port)" }

    init() throws {
        let router = Router()
        server = makeServer(router) { $0.timeouts.drain = 1 }
        let embedded = EmbeddedRedditTransport()
        router.get("/r/{sub}/top.json") { [calls, behaviour] ctx in
            .async {
                calls.mutate { $0 += 1 }
                switch behaviour.value {
                case .status(let code, let body): return HTTPResponse(status: code, contentType: "application/json", bytes: Array(body.utf8))
                case .delay(let s): try? await Task.sleep(nanoseconds: UInt64(s * 1e9))
                default: break
                }
                let r = try! await embedded.send(UpstreamRequest(lang: "reddit", path: "/r/\(ctx.parameter("sub")!)/top.json", kind: .reddit), deadline: 5)
                return HTTPResponse(status: r.status, contentType: "application/json", bytes: r.body)
            }
        }
        try server.start()
    }
    func stop() { server.shutdown(); server.waitUntilStopped() }
}

final class RGalleryLiveTests: XCTestCase {
    var reddit: FakeReddit!
    var server: HTTPServer!

    override func setUpWithError() throws {
        reddit = try FakeReddit()
        server = try startLede { [reddit] in
            $0.redditUpstream = reddit!.base
            $0.upstreamTimeout = 0.4
        }
    }
    override func tearDown() { server.shutdown(); server.waitUntilStopped(); reddit.stop() }

    func json(_ r: TestHTTPResponse) -> [String: Any] { (try? JSONSerialization.jsonObject(with: Data(r.body))) as? [String: Any] ?? [:] }

    /// Seed 003, "Verify the CACHING SYSTEM": the second search is answered from the cache.
    func testCachingSystemMissThenHitWithOneUpstreamCall() throws {
        let first = try get(server, "/images?q=cats")
        XCTAssertEqual(first.headers["x-cache"], "MISS"); XCTAssertEqual(json(first)["source"] as? String, "api")
        let second = try get(server, "/images?q=cats")
        XCTAssertEqual(second.headers["x-cache"], "HIT"); XCTAssertEqual(json(second)["source"] as? String, "cache")
        XCTAssertEqual(reddit.calls.value, 1)
        XCTAssertEqual((json(second)["items"] as? [Any])?.count, 5)
        // Warm: the prepared grid, the same bytes each time, gzip too, and 304 on its ETag; still one upstream call.
        let third = try get(server, "/images?q=CATS")
        XCTAssertEqual(third.body, second.body)
        XCTAssertEqual(third.headers["x-cache"], "HIT")
        XCTAssertEqual(third.headers["vary"], "Accept-Encoding, Accept-Language")
        let etag = try XCTUnwrap(third.headers["etag"])
        XCTAssertEqual(try get(server, "/images?q=cats", ["If-None-Match": "\(etag)"]).status, 304)
        XCTAssertEqual(try get(server, "/images?q=cats", ["Accept-Encoding": "gzip"]).headers["content-encoding"], "gzip")
        XCTAssertEqual(reddit.calls.value, 1)
    }

    /// Seed 003, "search bar … show the error screen": no image posts, or no such subreddit → NO_RESULT.
    func testNoResultsInTheUsersLanguage() throws {
        let it = json(try get(server, "/images?q=AskReddit", ["Accept-Language": "it"]))
        XCTAssertEqual(it["message"] as? String, "Nessun risultato"); XCTAssertEqual((it["items"] as? [Any])?.count, 0)
        XCTAssertEqual(json(try get(server, "/images?q=AskReddit"))["message"] as? String, "No results", "each message language its own prepared grid")
        XCTAssertEqual(json(try get(server, "/images?q=AskReddit", ["Accept-Language": "it"]))["message"] as? String, "Nessun risultato")
        XCTAssertEqual(json(try get(server, "/images?q=nsfw_pics"))["message"] as? String, "No results")
        let missing = try get(server, "/images?q=no_such_subreddit_x")
        XCTAssertEqual(missing.status, 200); XCTAssertEqual(json(missing)["message"] as? String, "No results")
    }

    /// Seed 003, "Verify the DETAILS page contents": the selected image in full, related without it.
    func testDetailsPageWithRelatedExcludingSelectedAndExcluded() throws {
        let d = json(try get(server, "/images/1gq2c04?q=cats&exclude=1gq2c01"))
        XCTAssertEqual((d["image"] as? [String: Any])?["id"] as? String, "1gq2c04")
        let related = (d["related"] as! [[String: Any]]).map { $0["id"] as! String }
        XCTAssertFalse(related.contains("1gq2c04")); XCTAssertFalse(related.contains("1gq2c01"))
        XCTAssertEqual(try get(server, "/images/zzz999?q=cats").status, 404)
        XCTAssertEqual(try get(server, "/images/1gq2c04?q=cats&exclude=a,,b").status, 400)
    }

    /// A details answer is prepared once per keyword, image and exclusion set: the same bytes from the loop, 304 on
    /// its ETag, gzip offered, and one listing call behind them all.
    func testDetailsArePreparedPerKeywordImageAndExclusions() throws {
        let first = try get(server, "/images/1gq2c04?q=cats&exclude=1gq2c02,1gq2c01")
        let second = try get(server, "/images/1gq2c04?q=Cats&exclude=1gq2c01,1gq2c02")
        XCTAssertEqual(first.body, second.body, "keyword case and exclusion order do not make another answer")
        XCTAssertEqual(second.headers["x-cache"], "HIT")
        let etag = try XCTUnwrap(second.headers["etag"])
        XCTAssertEqual(try get(server, "/images/1gq2c04?q=cats&exclude=1gq2c01,1gq2c02", ["If-None-Match": "\(etag)"]).status, 304)
        XCTAssertEqual(try get(server, "/images/1gq2c04?q=cats&exclude=1gq2c01,1gq2c02", ["Accept-Encoding": "gzip"]).headers["content-encoding"], "gzip")
        XCTAssertNotEqual(try get(server, "/images/1gq2c04?q=cats").body, first.body, "another exclusion set, another answer")
        XCTAssertEqual(reddit.calls.value, 1)
    }

    func testUpstreamFailuresAreClearProblems() throws {
        reddit.behaviour.mutate { $0 = .status(500, "{}") }
        let r500 = try get(server, "/images?q=EarthPorn")
        XCTAssertEqual(r500.status, 502); XCTAssertEqual(r500.headers["content-type"], "application/problem+json")
        reddit.behaviour.mutate { $0 = .delay(2) }
        let slow = try get(server, "/images?q=pics")
        XCTAssertEqual(slow.status, 504)
    }

    func testInvalidKeywordsAreRejectedWithoutAnUpstreamCall() throws {
        for q in ["a", "cats%20dogs", "..%2Fetc", String(repeating: "x", count: 22), "c-a-t"] {
            XCTAssertEqual(try get(server, "/images?q=\(q)").status, 400, q)
        }
        XCTAssertEqual(try get(server, "/images").status, 400)
        XCTAssertEqual(reddit.calls.value, 0)
    }

    func testAnimalsOverHTTP() throws {
        let list = json(try get(server, "/animals?tags=bird,pet&favorites=6"))
        XCTAssertEqual(list["count"] as? Int, 5)
        XCTAssertEqual((list["items"] as! [[String: Any]]).first { $0["id"] as? Int == 6 }?["isFavorite"] as? Bool, true)
        XCTAssertEqual(json(try get(server, "/animals?favoritesOnly=true"))["message"] as? String, "No animals found")
        XCTAssertEqual(try get(server, "/animals/13").status, 404)
        XCTAssertEqual(try get(server, "/animals/x").status, 400)
        XCTAssertEqual(try get(server, "/animals?tags=a,,b").status, 400)
        let svg = try get(server, "/animals/1/image.svg?size=160")
        XCTAssertEqual(svg.headers["content-type"], "image/svg+xml; charset=utf-8")
        XCTAssertTrue(String(decoding: svg.body, as: UTF8.self).hasPrefix("<svg"))
        XCTAssertEqual((json(try get(server, "/animals/tags"))["tags"] as? [String])?.first, "africa")
    }

    /// Each distinct query is encoded (and compressed) once: the same query in another order is the same
    /// prepared answer, gzip and identity alike, and a conditional request is a 304.
    func testAnimalsAnswersArePreparedPerDistinctQuery() throws {
        let a = try get(server, "/animals?tags=pet,bird&favorites=6,2")
        let b = try get(server, "/animals?favorites=2,6&tags=bird,pet")
        XCTAssertEqual(a.status, 200)
        XCTAssertEqual(a.body, b.body)
        let etag = try XCTUnwrap(a.headers["etag"])
        XCTAssertEqual(b.headers["etag"], etag)
        XCTAssertEqual(a.headers["cache-control"], "public, max-age=300")
        let all = try get(server, "/animals"), gz = try get(server, "/animals", ["Accept-Encoding": "gzip"])
        XCTAssertEqual(gz.headers["content-encoding"], "gzip", "the whole list is large enough to compress")
        XCTAssertNotEqual(gz.headers["etag"], all.headers["etag"], "each representation has its own strong ETag")
        XCTAssertEqual(try get(server, "/animals", ["Accept-Encoding": "gzip"]).body, gz.body)
        XCTAssertEqual(try get(server, "/animals?tags=bird,pet&favorites=2,6", ["If-None-Match": "\(etag)"]).status, 304)
        XCTAssertNotEqual(try get(server, "/animals?tags=bird&favorites=6,2").body, a.body, "another query, another answer")
    }
}

/// Reddit's listings come through the same guard and redirect rules as every Wikimedia call: a redirect is followed
/// within Reddit's origin only — never to another host, never from https down to http.
final class RedditRedirectTests: XCTestCase {
    /// Answers `/r/cats/top.json` with a redirect to `location`, anything else with the embedded listing; counts calls.
    final class Redirecting: UpstreamTransport, Sendable {
        let location: String
        let calls = Mutex<[String]>([])
        let listings = EmbeddedRedditTransport()
        init(location: String) { self.location = location }
        func baseURL(lang: String) -> String { "https://www.reddit.com" }
        func send(_ request: UpstreamRequest, deadline: Double) async throws -> UpstreamResponse {
            calls.withLock { $0.append(request.path) }
            if request.path == "/r/cats/top.json" { return UpstreamResponse(status: 301, body: [], headers: ["location": location]) }
            return try await listings.send(request, deadline: deadline)
        }
    }

    func reddit(_ transport: Redirecting) -> RedditClient {
        RedditClient(upstream: UpstreamClient(transport: transport, deadline: 2))
    }

    func testARedirectToAnotherHostOrDownToHTTPIsRefusedAfterOneCall() async throws {
        for location in ["https://evil.example/r/cats/top.json", "http://www.reddit.com/r/Cats/top.json", "//evil.example/x"] {
            let transport = Redirecting(location: location)
            do {
                _ = try await reddit(transport).images("cats")
                XCTFail("\(location) was followed")
            } catch let e as UpstreamError {
                XCTAssertEqual(e, .unavailable(status: 301), location)
            }
            XCTAssertEqual(transport.calls.withLock { $0 }, ["/r/cats/top.json"], "nothing sent to \(location)")
        }
    }

    func testARedirectWithinRedditIsFollowed() async throws {
        let transport = Redirecting(location: "/r/Cats/top.json")
        let (images, _) = try await reddit(transport).images("cats")
        XCTAssertFalse(images.isEmpty)
        XCTAssertEqual(transport.calls.withLock { $0 }, ["/r/cats/top.json", "/r/Cats/top.json"])
    }
}

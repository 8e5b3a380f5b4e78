import Foundation
import HTTPServer
import TestSupport
import XCTest
@testable import Lede

/// Universal links and Android app links for the deployment's domain: the association files, written from the
/// configured apps, covering the paths an app opens.
final class AppLinksTests: XCTestCase {
    static let fingerprint = "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5"

    func testAppleFileIsExactlyItsFormatForTheConfiguredApps() throws {
        let server = try startLede {
            $0.appLinks.iosAppIDs = try! AppLinks.iosApps("ABCDE12345.org.wikimedia.wikipedia, ABCDE12345.org.wikimedia.wikipedia.beta")
        }
        defer { server.shutdown(); server.waitUntilStopped() }
        let r = try get(server, "/.well-known/apple-app-site-association")
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.headers["content-type"], "application/json")
        XCTAssertEqual(r.headers["cache-control"], "public, max-age=3600")
        XCTAssertNil(r.headers["location"], "no redirect: Apple's CDN does not follow one")
        XCTAssertEqual(String(decoding: r.body, as: UTF8.self),
                       #"{"applinks":{"details":[{"appIDs":["ABCDE12345.org.wikimedia.wikipedia","ABCDE12345.org.wikimedia.wikipedia.beta"],"components":[{"/":"/share/*"},{"/":"/article/*"}]}]}}"#)
        XCTAssertEqual(try get(server, "/.well-known/assetlinks.json").status, 404, "no Android app configured")
    }

    func testAndroidFileIsExactlyItsFormatForTheConfiguredApps() throws {
        let lower = Self.fingerprint.lowercased()
        let server = try startLede {
            $0.appLinks.androidApps = try! AppLinks.androidApps("org.wikipedia@\(lower), org.wikipedia@\(Self.fingerprint), org.wikipedia.beta@\(Self.fingerprint)")
        }
        defer { server.shutdown(); server.waitUntilStopped() }
        let r = try get(server, "/.well-known/assetlinks.json")
        XCTAssertEqual(r.status, 200)
        XCTAssertEqual(r.headers["content-type"], "application/json")
        let statement = { (package: String) in
            #"{"relation":["delegate_permission/common.handle_all_urls"],"target":{"namespace":"android_app","package_name":""# + package
                + #"","sha256_cert_fingerprints":[""# + Self.fingerprint + #""]}}"#
        }
        XCTAssertEqual(String(decoding: r.body, as: UTF8.self), "[" + statement("org.wikipedia") + "," + statement("org.wikipedia.beta") + "]",
                       "one statement a package, its fingerprint once, upper-cased")
        XCTAssertEqual(try get(server, "/.well-known/apple-app-site-association").status, 404)
    }

    func testWithoutAppsBothAre404() throws {
        let server = try startLede()
        defer { server.shutdown(); server.waitUntilStopped() }
        for path in ["/.well-known/apple-app-site-association", "/.well-known/assetlinks.json"] {
            let r = try get(server, path)
            XCTAssertEqual(r.status, 404); XCTAssertEqual(r.headers["content-type"], "application/problem+json")
        }
    }

    func testTheFlagsAreCheckedAtStart() throws {
        let o = try Options.parse(["--ios-app-ids", "ABCDE12345.org.wikimedia.wikipedia", "--android-apps", "org.wikipedia@\(Self.fingerprint)"], environment: [:])
        XCTAssertEqual(o.appLinks.iosAppIDs, ["ABCDE12345.org.wikimedia.wikipedia"])
        XCTAssertEqual(o.appLinks.androidApps.first?.package, "org.wikipedia")
        for bad in ["abcde12345.org.x", "ABCDE1234.org.x", "ABCDE12345.", "ABCDE12345.org/x"] {
            XCTAssertThrowsError(try Options.parse(["--ios-app-ids", bad], environment: [:]), bad)
        }
        for bad in ["org.wikipedia", "wikipedia@\(Self.fingerprint)", "org.wikipedia@14:6D", "org.1wiki@\(Self.fingerprint)", "org.wikipedia@" + String(repeating: "ZZ:", count: 31) + "ZZ"] {
            XCTAssertThrowsError(try Options.parse(["--android-apps", bad], environment: [:]), bad) { e in
                XCTAssertTrue("\(e)".contains("--android-apps"), "\(e)")
            }
        }
    }
}

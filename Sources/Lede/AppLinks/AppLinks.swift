import HTTPServer
import LedeBasics
import HTTPCore

/// The association files that let a phone open the deployment's links in the app: Apple's universal links
/// (`/.well-known/apple-app-site-association`) and Android's app links (`/.well-known/assetlinks.json`). Both name
/// the paths an app opens — a shared link (`/share/*`) and an article (`/article/*`) — for the apps the operator
/// configures (`--ios-app-ids`, `--android-apps`). Pure: the files are written once, at start.
struct AppLinks: Sendable, Equatable {
    /// `TEAMID.BUNDLE`, as Apple's `appIDs` names an app.
    var iosAppIDs: [String] = []
    /// An Android package and the SHA-256 fingerprints of its signing certificates, as `keytool -list` prints them.
    var androidApps: [(package: String, fingerprints: [String])] = []

    /// The paths an app opens.
    static let paths = ["/share/*", "/article/*"]

    static func == (a: AppLinks, b: AppLinks) -> Bool {
        a.iosAppIDs == b.iosAppIDs && a.androidApps.elementsEqual(b.androidApps) { $0.package == $1.package && $0.fingerprints == $1.fingerprints }
    }

    struct ParseError: Error, Equatable { let message: String }

    /// `TEAMID.BUNDLE[,…]`: a ten-character team ID (upper-case letters and digits), a dot, a bundle ID.
    static func iosApps(_ text: String) throws -> [String] {
        try text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.map { id in
            let parts = id.split(separator: ".", maxSplits: 1)
            guard parts.count == 2, parts[0].utf8.count == 10,
                  parts[0].utf8.allSatisfy({ ($0 >= 65 && $0 <= 90) || ($0 >= 48 && $0 <= 57) }),
                  isBundleID(parts[1]) else {
                throw ParseError(message: "'\(id.prefix(80))' is not TEAMID.BUNDLE (a ten-character team ID such as ABCDE12345, then the bundle ID)")
            }
            return id
        }
    }

    /// `PACKAGE@SHA256[,…]`: an Android package name, `@`, the certificate's SHA-256 fingerprint (32 bytes in hex,
    /// colon-separated, as keytool prints it). A package named twice has each fingerprint.
    static func androidApps(_ text: String) throws -> [(package: String, fingerprints: [String])] {
        var apps: [(package: String, fingerprints: [String])] = []
        for item in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !item.isEmpty {
            let parts = item.split(separator: "@", maxSplits: 1)
            guard parts.count == 2, isPackage(parts[0]), let fingerprint = fingerprint(parts[1]) else {
                throw ParseError(message: "'\(item.prefix(120))' is not PACKAGE@SHA256 (a package such as org.wikipedia, then the signing certificate's SHA-256 fingerprint, 32 colon-separated hex bytes)")
            }
            if let i = apps.firstIndex(where: { $0.package == parts[0] }) {
                if !apps[i].fingerprints.contains(fingerprint) { apps[i].fingerprints.append(fingerprint) }
            } else {
                apps.append((String(parts[0]), [fingerprint]))
            }
        }
        return apps
    }

    static func isBundleID<S: StringProtocol>(_ s: S) -> Bool {
        !s.isEmpty && s.utf8.count <= 155 && !s.hasPrefix(".") && !s.hasSuffix(".")
            && s.utf8.allSatisfy { ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 46 || $0 == 45 }
    }

    /// A Java package name with at least two segments, each starting with a letter.
    static func isPackage<S: StringProtocol>(_ s: S) -> Bool {
        let segments = s.split(separator: ".", omittingEmptySubsequences: false)
        return segments.count >= 2 && s.utf8.count <= 255 && segments.allSatisfy { seg in
            guard let first = seg.utf8.first, (first >= 65 && first <= 90) || (first >= 97 && first <= 122) else { return false }
            return seg.utf8.allSatisfy { ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 95 }
        }
    }

    /// The fingerprint upper-cased, or nil unless it is 32 colon-separated hex bytes.
    static func fingerprint<S: StringProtocol>(_ s: S) -> String? {
        let bytes = s.split(separator: ":", omittingEmptySubsequences: false)
        guard bytes.count == 32, bytes.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isHexDigit) }) else { return nil }
        return s.uppercased()
    }

    /// Apple's file (`applinks.details[].appIDs` with `components`), or nil with no iOS app.
    var appleFile: String? {
        guard !iosAppIDs.isEmpty else { return nil }
        let ids = iosAppIDs.map { JSONText.quote($0) }.joined(separator: ",")
        let components = AppLinks.paths.map { "{\"/\":\(JSONText.quote($0))}" }.joined(separator: ",")
        return "{\"applinks\":{\"details\":[{\"appIDs\":[\(ids)],\"components\":[\(components)]}]}}"
    }

    /// Google's Digital Asset Links statement list, or nil with no Android app.
    var androidFile: String? {
        guard !androidApps.isEmpty else { return nil }
        let statements = androidApps.map { app in
            "{\"relation\":[\"delegate_permission/common.handle_all_urls\"],\"target\":{\"namespace\":\"android_app\",\"package_name\":\(JSONText.quote(app.package)),"
                + "\"sha256_cert_fingerprints\":[\(app.fingerprints.map { JSONText.quote($0) }.joined(separator: ","))]}}"
        }
        return "[" + statements.joined(separator: ",") + "]"
    }

    static func register(on router: Router, links: AppLinks) {
        for (path, file) in [("/.well-known/apple-app-site-association", links.appleFile), ("/.well-known/assetlinks.json", links.androidFile)] {
            if let file {
                // Apple's CDN and Google's verifier fetch these: JSON, no redirect, cacheable for an hour.
                let body = PreparedBody(contentType: "application/json", bytes: Array(file.utf8), headers: ["Cache-Control": "public, max-age=3600"])
                router.get(path) { _ in .response(.prepared(body)) }
            } else {
                let detail = path.hasSuffix("assetlinks.json") ? "No Android app is configured (--android-apps)." : "No iOS app is configured (--ios-app-ids)."
                router.get(path) { _ in .response(Problem(status: 404, detail: detail).response) }
            }
        }
    }
}

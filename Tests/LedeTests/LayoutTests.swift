import Foundation
import XCTest
@testable import Lede
@testable import Upstream

/// The repository's shape, held by tests: the arrows between modules point down only, a screen knows the Wikimedia
/// client by its protocol, no two paths differ only by case (macOS's default file system would merge them), every
/// link in the README and the docs resolves, and docs/CONFIGURATION.md lists exactly the flags `lede --help` does.
final class LayoutTests: XCTestCase {
    /// The repository's root, two folders above this file.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Every Swift file under `folder` (relative to the root), with its text.
    static func swiftFiles(_ folder: String) throws -> [(path: String, text: String)] {
        let base = root.appendingPathComponent(folder)
        guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else { return [] }
        var files: [(String, String)] = []
        for case let url as URL in walker where url.pathExtension == "swift" {
            files.append((String(url.path.dropFirst(root.path.count + 1)), try String(contentsOf: url, encoding: .utf8)))
        }
        return files.sorted { $0.0 < $1.0 }
    }

    /// The modules a file imports (`import X`, `@testable import X`).
    static func imports(_ text: String) -> Set<String> {
        var found = Set<String>()
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ")
            if words.count >= 2, words[words.count - 2] == "import", words.first == "import" || words.first == "@testable" {
                found.insert(String(words[words.count - 1]))
            }
        }
        return found
    }

    func testModulesImportOnlyWhatIsBelowThem() throws {
        // What each module may import besides the toolchain's (Foundation, Glibc, Dispatch, Synchronization).
        let allowed: [String: Set<String>] = [
            "Sources/LedeBasics": [],
            "Sources/HTTPCore": ["CLinux"],
            "Sources/EventLoops": ["CLinux"],
            "Sources/HTTPServer": ["CLinux", "CZlib", "EventLoops", "HTTPCore"],
            "Sources/HTTPClient": ["CLinux", "COpenSSL", "CZlib", "EventLoops", "HTTPCore"],
            "Sources/Imaging": ["CFreeType", "CHarfBuzz", "CImageCodecs", "CZlib"],
            "Sources/Upstream": ["LedeBasics", "EventLoops", "HTTPCore", "HTTPClient"],
            "Sources/Wikimedia": ["LedeBasics", "EventLoops", "HTTPCore", "Upstream"],
            "Sources/WikimediaEmbedded": ["LedeBasics", "Upstream", "Wikimedia", "HTTPCore", "Imaging"],
            "Sources/Lede": ["LedeBasics", "Upstream", "Wikimedia", "WikimediaEmbedded", "HTTPCore", "HTTPServer", "HTTPClient", "Imaging"],
            "Sources/LedeCommand": ["Lede", "HTTPCore", "HTTPServer"],
        ]
        // Strictly downward: no module may reach one that (directly or through another) reaches it.
        func below(_ module: String) -> Set<String> {
            var seen = Set<String>(), stack = Array(allowed["Sources/\(module)"] ?? [])
            while let m = stack.popLast() { if seen.insert(m).inserted { stack += allowed["Sources/\(m)"] ?? [] } }
            return seen
        }
        for folder in allowed.keys {
            let module = String(folder.dropFirst("Sources/".count))
            XCTAssertFalse(below(module).contains(module), "\(module) reaches itself: an arrow points up or sideways")
        }
        // The server and the client never import each other; the Wikimedia layer imports no server.
        XCTAssertFalse(below("HTTPServer").contains("HTTPClient")); XCTAssertFalse(below("HTTPClient").contains("HTTPServer"))
        XCTAssertFalse(below("WikimediaEmbedded").contains("HTTPServer"))
        // Wikimedia's calls go through the upstream layer, which knows no service: no Reddit in either (Reddit's
        // listings are the app's, on the upstream layer directly), and no Wikimedia service in the layer.
        for folder in ["Sources/Wikimedia", "Sources/Upstream"] {
            for (path, text) in try Self.swiftFiles(folder) {
                let code = text.split(separator: "\n").map { $0.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).first ?? "" }.joined(separator: "\n")
                XCTAssertNil(code.range(of: "reddit", options: .caseInsensitive), "\(path) knows Reddit")
            }
        }
        for (path, text) in try Self.swiftFiles("Sources/Upstream") {
            XCTAssertNil(text.range(of: "\\bWikimediaClient\\b|\\bWikimediaAPI\\b|CallKind\\(\"(feed|summary|notifications)", options: .regularExpression),
                         "\(path) names a Wikimedia service")
        }
        let toolchain: Set<String> = ["Foundation", "FoundationNetworking", "Glibc", "Dispatch", "Synchronization"]
        for (folder, modules) in allowed {
            let files = try Self.swiftFiles(folder)
            XCTAssertFalse(files.isEmpty, folder)
            for (path, text) in files {
                let extra = Self.imports(text).subtracting(modules).subtracting(toolchain)
                XCTAssertTrue(extra.isEmpty, "\(path) imports \(extra.sorted()), above or beside its module")
            }
        }
    }

    func testScreensKnowWikimediaByItsProtocolOnly() throws {
        // Only the wiring (App/) chooses transports and makes the concrete client; a screen holds `any WikimediaAPI`
        // (and `any GuardedUpstream` for images and Reddit), so every call goes through the client's guard.
        let concrete = ["LiveTransport", "EmbeddedTransport", "EmbeddedMediaTransport", "UpstreamTransport", "WikimediaClient", "EmbeddedReadingLists"]
        let files = try Self.swiftFiles("Sources/Lede")
        XCTAssertGreaterThan(files.count, 30)
        for (path, text) in files where !path.hasPrefix("Sources/Lede/App/") {
            for name in concrete {
                XCTAssertNil(text.range(of: "\\b\(name)\\b", options: .regularExpression), "\(path) names \(name)")
            }
            XCTAssertFalse(Self.imports(text).contains("WikimediaEmbedded"), "\(path) imports the embedded default")
        }
    }

    /// The tests share one request helper and one way to start a server (docs/TESTING.md): no `func get` but
    /// TestSupport's, no URLSession, no server configured by hand.
    func testTheTestsAskAndStartServersThroughTheOneHelper() throws {
        var files: [(path: String, text: String)] = []
        for folder in ["Tests/LedeTests", "Tests/HTTPServerTests", "Tests/HTTPClientTests", "Tests/TestSupport"] { files += try Self.swiftFiles(folder) }
        XCTAssertGreaterThan(files.count, 40)
        for (path, text) in files {
            if path != "Tests/TestSupport/Requests.swift" {
                XCTAssertNil(text.range(of: "func get\\s*\\(", options: .regularExpression), "\(path) defines its own get helper")
            }
            if path != "Tests/LedeTests/LayoutTests.swift" {
                XCTAssertFalse(text.contains("URLSession."), "\(path) asks through URLSession")
            }
            if path != "Tests/TestSupport/Servers.swift" && path != "Tests/LedeTests/LayoutTests.swift" {
                XCTAssertFalse(text.contains("HTTPServer(configuration:"), "\(path) builds a server by hand")
            }
        }
    }

    /// One header type in both directions (`HTTPCore.HTTPHeaders`): the server's requests and answers, the client's
    /// calls and the answers it reads, the upstream layer's responses. No module keeps header fields as a tuple list or
    /// a dictionary of its own.
    func testOneHeaderTypeServesBothDirections() throws {
        var files: [(path: String, text: String)] = []
        for folder in ["Sources/HTTPServer", "Sources/HTTPClient", "Sources/Upstream", "Sources/Wikimedia", "Sources/WikimediaEmbedded", "Sources/Lede"] {
            files += try Self.swiftFiles(folder)
        }
        for (path, text) in files {
            XCTAssertNil(text.range(of: "(headers|Headers|HeaderFields): \\[(\\(String, String\\)|String: String)\\]", options: .regularExpression),
                         "\(path) keeps header fields in a type of its own")
            XCTAssertNil(text.range(of: "struct \\w*Headers\\b", options: .regularExpression), "\(path) declares a header type")
        }
    }

    func testNoTwoPathsDifferOnlyByCase() throws {
        var seen: [String: String] = [:]
        let skipped: Set<String> = [".build", ".git", ".swiftpm", "out", "corpus-work"]
        let walker = FileManager.default.enumerator(at: Self.root, includingPropertiesForKeys: [.isDirectoryKey])
        var count = 0
        while let url = walker?.nextObject() as? URL {
            let name = url.lastPathComponent
            if skipped.contains(name) || name.hasPrefix(".build") { walker?.skipDescendants(); continue }
            let path = String(url.path.dropFirst(Self.root.path.count + 1))
            count += 1
            if let other = seen[path.lowercased()] { XCTFail("\(path) and \(other) differ only by case") }
            seen[path.lowercased()] = path
        }
        XCTAssertGreaterThan(count, 100)
    }

    func testEveryLinkInTheDocsResolvesToAFile() throws {
        let pages = ["README.md", "docs/ARCHITECTURE.md", "docs/TOUR.md", "docs/CONFIGURATION.md", "docs/HTTP.md", "docs/UPSTREAM.md",
                     "docs/TESTING.md", "deploy/README.md", "Fuzz/README.md"]
        let link = try NSRegularExpression(pattern: "\\]\\(([^)#\\s]+)(#[^)]*)?\\)")
        var checked = 0
        for page in pages {
            let url = Self.root.appendingPathComponent(page)
            let text = try String(contentsOf: url, encoding: .utf8)
            for match in link.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let target = String(text[Range(match.range(at: 1), in: text)!])
                if target.hasPrefix("http://") || target.hasPrefix("https://") || target.hasPrefix("mailto:") { continue }
                let resolved = url.deletingLastPathComponent().appendingPathComponent(target).standardizedFileURL
                XCTAssertTrue(FileManager.default.fileExists(atPath: resolved.path), "\(page) links to \(target), which is not in the repository")
                checked += 1
            }
        }
        XCTAssertGreaterThan(checked, 10)
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        XCTAssertLessThanOrEqual(readme.split(separator: "\n", omittingEmptySubsequences: false).count, 200, "the README is a newcomer's ten minutes")
    }

    /// Each flag is declared once (`Options.flags`): its parser, its line in `--help` with its default, and its row in
    /// docs/CONFIGURATION.md with its variable and the same default all come from that declaration.
    func testTheConfigurationPageListsExactlyTheFlagsOfHelpWithTheirDefaults() throws {
        let page = try String(contentsOf: Self.root.appendingPathComponent("docs/CONFIGURATION.md"), encoding: .utf8)
        // Table rows: | `--flag` | `LEDE_FLAG` | default | meaning |
        var documented: [String: (variable: String, defaultCell: String)] = [:]
        for line in page.split(separator: "\n") where line.hasPrefix("| `--") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 3 else { continue }
            documented[String(cells[0].dropFirst(3).dropLast())] = (String(cells[1].dropFirst().dropLast()), cells[2])
        }
        let flags = Options.flags
        XCTAssertGreaterThan(flags.count, 40)
        XCTAssertEqual(Set(flags.map(\.name)).count, flags.count, "a flag is declared twice")
        let help = Options.helpText
        for flag in flags {
            XCTAssertEqual(documented[flag.name]?.variable, flag.environment, "--\(flag.name) in docs/CONFIGURATION.md, with its variable")
            switch flag.defaultValue {
            case .value(let v):
                XCTAssertEqual(documented[flag.name]?.defaultCell, "`\(v)`", "--\(flag.name)'s default in docs/CONFIGURATION.md")
                XCTAssertTrue(help.contains("--\(flag.name) ") && help.contains(". Default \(v).\n"), "--\(flag.name) in --help with its default")
                // The default is a value the parser takes, and parsing it changes nothing `--help` shows.
                let parsed = try Options.parse(["--\(flag.name)", v], environment: [:])
                XCTAssertEqual(flag.shown(parsed), flag.defaultValue, "--\(flag.name) \(v) reads back as its default")
            case .described(let d):
                XCTAssertEqual(documented[flag.name]?.defaultCell, d, "--\(flag.name)'s default in docs/CONFIGURATION.md")
                XCTAssertTrue(help.contains("--\(flag.name) ") && help.contains(". Default: \(d).\n"), "--\(flag.name) in --help with its default")
            }
            // A help text never restates a default (it is read from `Options()`).
            XCTAssertNil(flag.help.range(of: "(default", options: .caseInsensitive), "--\(flag.name)'s help restates its default")
        }
        XCTAssertEqual(Set(documented.keys), Set(flags.map(\.name)), "docs/CONFIGURATION.md lists a flag lede does not have, or misses one")
    }
}

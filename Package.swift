// swift-tools-version:6.0
// Lede: a Wikipedia backend-for-frontend. No package dependencies: Glibc, Dispatch and Foundation only, plus system C
// libraries through system-library targets: zlib, OpenSSL's libssl, and for the share card FreeType, HarfBuzz and
// libjpeg-turbo (each with the Debian package that provides it).
import Foundation
import PackageDescription

// A nonisolated async function runs where its caller runs (SE-0461) instead of hopping to the generic executor: a
// handler's calls stay on its event loop without a runtime executor switch at every call and return (callgrind: the
// task's executor preference, read under the task's status lock, 18 times a badge request before, 8 after).
let callerIsolated: [SwiftSetting] = [.enableUpcomingFeature("NonisolatedNonsendingByDefault")]

// The loop, the server and the client keep their state in final classes owned by one loop thread each. Release builds
// skip the run-time exclusivity checks on it (about a sixth of the server's per-request instructions; about 1k of a
// badge call's, in the loop and the client's pools); debug builds, which the tests run, keep them, and the
// compile-time checks stay on everywhere. Lede's own target keeps them in every build.
let loopConfined: [SwiftSetting] = [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

// The module split put a boundary between the app and what it calls on every request (the keyed cache, titles,
// language codes, the Wikimedia client). Release builds of the modules below the app make their bodies available to
// it (cross-module optimisation), so a generic cache is specialised and small calls are inlined as they were within
// one module (callgrind: BENCHMARKS.md, "The module split"). The loop, the server and the client have it too: alone it
// changed nothing measurable, with the release build's profile (Benchmarks/lede.profdata) it let the profile's inlining
// cross into the app (BENCHMARKS.md, "Profile-guided optimisation, unblocked").
let crossModule: [SwiftSetting] = [.unsafeFlags(["-cross-module-optimization"], .when(configuration: .release))]

// The release build's profile (Benchmarks/lede.profdata, made by Benchmarks/pgo.sh from the benchmarks' hot paths):
// every release build of these modules uses it when the file is there — `swift run -c release lede`, the Dockerfile,
// CI — so the fast build is the one everyone gets. IR-level (LLVM's) profile use: Swift 6.3's SIL-level -profile-use
// crashes the compiler (swiftlang/swift#84432). `LEDE_PGO=off` builds without it (pgo.sh's instrumented build does).
// Which profile a build uses is printed as the manifest is read (a warning: the only way a manifest speaks). SwiftPM
// does not know the flag names a file: Benchmarks/pgo.sh touches the profiled modules' sources so they are recompiled.
let profile = Context.packageDirectory + "/Benchmarks/lede.profdata"
let profileUsed = Context.environment["LEDE_PGO"] != "off" && FileManager.default.fileExists(atPath: profile)
let profiled: [SwiftSetting] = profileUsed ? [.unsafeFlags(["-Xfrontend", "-ir-profile-use=" + profile], .when(configuration: .release))] : []
print(profileUsed ? "release builds are optimised with Benchmarks/lede.profdata (LEDE_PGO=off builds without it)"
      : "release builds use no profile (LEDE_PGO=off, or no Benchmarks/lede.profdata)")

let package = Package(
    name: "Lede",
    products: [
        .executable(name: "lede", targets: ["LedeCommand"]),
        .library(name: "EventLoops", targets: ["EventLoops"]),
        .library(name: "HTTPCore", targets: ["HTTPCore"]),
        .library(name: "HTTPServer", targets: ["HTTPServer"]),
        .library(name: "HTTPClient", targets: ["HTTPClient"]),
        .library(name: "Imaging", targets: ["Imaging"]),
        .library(name: "LedeBasics", targets: ["LedeBasics"]),
        .library(name: "Upstream", targets: ["Upstream"]),
        .library(name: "Wikimedia", targets: ["Wikimedia"]),
        .library(name: "WikimediaEmbedded", targets: ["WikimediaEmbedded"]),
        .library(name: "Lede", targets: ["Lede"]),
    ],
    targets: [
        // epoll, eventfd and accept4 are not exported by Swift's Glibc module; this header includes them.
        .target(name: "CLinux"),
        .systemLibrary(name: "CZlib", pkgConfig: nil, providers: [.apt(["zlib1g-dev"])]),
        // The event loop: epoll, wake-ups, timers, the task executor, errno-safe system calls. Knows no protocol;
        // the server and the client each depend on it and never on each other.
        .target(name: "EventLoops", dependencies: ["CLinux"], swiftSettings: callerIsolated + loopConfined + crossModule + profiled),
        // What every layer above uses and no layer owns (as NIOHTTP1, swift-log and swift-metrics sit under
        // AsyncHTTPClient and Hummingbird): logging and timestamps, HTTP dates, W3C trace context, Prometheus and JSON
        // text, ASCII, percent-decoding, weighted lists, URI references, byte scanning. Knows no socket, no server, no
        // client and no app.
        .target(name: "HTTPCore", dependencies: ["CLinux"], swiftSettings: callerIsolated + loopConfined + crossModule + profiled),
        .target(name: "HTTPServer", dependencies: ["CLinux", "CZlib", "EventLoops", "HTTPCore"], swiftSettings: callerIsolated + loopConfined + crossModule + profiled),
        // OpenSSL's libssl for the client's TLS (libssl-dev on every machine here; libssl3 at run time).
        .systemLibrary(name: "COpenSSL", pkgConfig: nil, providers: [.apt(["libssl-dev"])]),
        // The upstream client: HTTP/1.1 + TLS on its own epoll loops.
        .target(name: "HTTPClient", dependencies: ["CLinux", "COpenSSL", "CZlib", "EventLoops", "HTTPCore"], swiftSettings: callerIsolated + loopConfined + crossModule + profiled),
        // The share card's drawing: FreeType for glyphs, HarfBuzz for shaping, libjpeg-turbo for the lead image and the
        // JPEG card, zlib for the PNG. Knows no Wikipedia. libjpeg's errors are caught in C (CImageCodecs: setjmp).
        .systemLibrary(name: "CFreeType", pkgConfig: "freetype2", providers: [.apt(["libfreetype-dev"])]),
        .systemLibrary(name: "CHarfBuzz", pkgConfig: "harfbuzz", providers: [.apt(["libharfbuzz-dev"])]),
        .systemLibrary(name: "CJPEG", pkgConfig: nil, providers: [.apt(["libjpeg62-turbo-dev"])]),
        .target(name: "CImageCodecs", dependencies: ["CJPEG"], linkerSettings: [.linkedLibrary("jpeg")]),
        .target(name: "Imaging", dependencies: ["CFreeType", "CHarfBuzz", "CImageCodecs", "CZlib"]),
        // Values and tools both the Wikimedia client and the app use: language codes, titles, the keyed cache, the
        // worker pool, one-shot flags, JSON numbers, HTML to text. Knows no HTTP and no Wikimedia service.
        .target(name: "LedeBasics", swiftSettings: callerIsolated + crossModule + profiled),
        // Talking to any upstream origin: the request and its transports (live over HTTPClient, or embedded), the
        // guard (Retry-After, breaker, concurrency), deadlines, redirects within the origin, metrics, call kinds. Knows
        // no service: Wikimedia's client is built on it, Reddit and the image origin use it directly.
        .target(name: "Upstream", dependencies: ["LedeBasics", "EventLoops", "HTTPCore", "HTTPClient"], swiftSettings: callerIsolated + crossModule + profiled),
        // Everything about talking to Wikimedia: the `WikimediaAPI` protocol, the client (per service) on `Upstream`,
        // its JSON readers, its call kinds. Knows no feature of the app (docs/ARCHITECTURE.md).
        .target(name: "Wikimedia", dependencies: ["LedeBasics", "EventLoops", "HTTPCore", "Upstream"], swiftSettings: callerIsolated + crossModule + profiled),
        // The embedded default: a demo Wikimedia answering from data in the binary, through the same decoders.
        .target(name: "WikimediaEmbedded", dependencies: ["LedeBasics", "Upstream", "Wikimedia", "HTTPCore", "Imaging"], swiftSettings: callerIsolated + profiled),
        // The app: one folder per screen, over `any WikimediaAPI`.
        // Lede's own words: i18n/ is a MediaWiki-format message catalogue (en.json, qqq.json, one file a language),
        // compiled into the binary (the image ships no resource files).
        .target(name: "Lede", dependencies: ["LedeBasics", "Upstream", "Wikimedia", "WikimediaEmbedded", "HTTPCore", "HTTPServer", "HTTPClient", "Imaging"],
                resources: [.embedInCode("i18n")], swiftSettings: callerIsolated + profiled, plugins: ["MessageKeys"]),
        // `MessageKey` generated from the catalogue's English at build time: adding a message is editing en.json and
        // qqq.json only. The plugin runs a POSIX sh and awk command whenever en.json changes (no tool of the package to
        // build: a build with other flags, Fuzz/run.sh's, builds nothing more); it lives in Sources/ (the repository has
        // no Plugins/ folder).
        .plugin(name: "MessageKeys", capability: .buildTool(), path: "Sources/MessageKeysPlugin"),
        // The `lede` command: flags and environment → options → run.
        .executableTarget(name: "LedeCommand", dependencies: ["Lede", "HTTPCore", "HTTPServer"], swiftSettings: profiled),
        // Every fuzz target in one executable (Fuzz/README.md): libFuzzer through Fuzz/run.sh, corpus replay and the
        // readers' cost benchmark otherwise. It reads internals (@testable), so only debug builds and Fuzz/'s own
        // builds (release with -enable-testing and -D LEDE_FUZZ_TESTABLE) compile the targets.
        .executableTarget(name: "lede-fuzz", dependencies: ["Lede", "LedeBasics", "Upstream", "Wikimedia", "WikimediaEmbedded", "HTTPCore", "HTTPServer", "HTTPClient", "Imaging"], path: "Fuzz/Targets",
                          swiftSettings: [.define("LEDE_FUZZ_TESTABLE", .when(configuration: .debug))]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPCore", "HTTPServer", "HTTPClient", "EventLoops", "TestSupport", "AllocationCounter"]),
        // Counts one thread's heap allocations (malloc interposed in the test executable) for allocation ceilings.
        .target(name: "AllocationCounter", path: "Tests/AllocationCounter"),
        // Fixtures more than one test target uses (certificates and a TLS server for upstream TLS tests).
        .target(name: "TestSupport", dependencies: ["AllocationCounter", "HTTPServer"], path: "Tests/TestSupport"),
        .testTarget(name: "HTTPClientTests", dependencies: ["HTTPCore", "HTTPClient", "HTTPServer", "EventLoops", "TestSupport"]),
        .testTarget(name: "LedeTests", dependencies: ["Lede", "LedeBasics", "Upstream", "Wikimedia", "WikimediaEmbedded", "HTTPCore", "HTTPServer", "HTTPClient", "EventLoops", "TestSupport", "AllocationCounter"]),
    ],
    // Swift 6 language mode everywhere: complete concurrency checking, data-race safety proved by the compiler.
    swiftLanguageModes: [.v6]
)

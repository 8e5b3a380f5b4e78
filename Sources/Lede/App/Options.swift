import HTTPServer
import LedeBasics
import Wikimedia

/// Command-line flags, each with an environment fallback (`--max-body` ↔ `LEDE_MAX_BODY`).
/// Precedence: flag, then environment, then default.
public struct Options: Sendable {
    public var server = ServerConfiguration()
    public var logLevel: Logger.Level = .info
    /// Serve `/_bench/plaintext` and `/_bench/json` (benchmark fixtures; off by default).
    var benchRoutes = false
    public var showHelp = false
    /// `embedded`, or a base URL template with `{lang}` (`https://{lang}.wikipedia.org`).
    public var upstream = "embedded"
    /// `embedded`, or Reddit's base URL (`https://www.reddit.com`) for the rgallery endpoints.
    var redditUpstream = "embedded"
    /// Where the share card's lead images come from: `embedded`, or an origin whose paths are upload.wikimedia.org's.
    /// Nil: `embedded` with the embedded default, `https://upload.wikimedia.org` otherwise.
    var mediaUpstream: String?
    /// The URL clients reach this server at, for the share page's `og:image` (nil: from each request's Host).
    var publicURL: String?
    /// Contact for the User-Agent (Wikimedia's policy asks for a way to reach the operator).
    var contact = Options.placeholderContact
    /// The default `--contact`: says where Lede comes from, but reaches no operator.
    static let placeholderContact = "https://github.com/lede-bff/lede; lede@example.org"
    public var upstreamTimeout: Double = 2
    /// Deadline for each feed section; a slower section becomes a placeholder.
    var sectionTimeout: Double = 0.8
    /// Lifetime of today's shared feed sections; they are refreshed in the background when it runs out.
    var feedMaxAge: Double = 300
    /// Seconds between Echo polls of one user while that user has live bells open.
    var notificationsPoll: Double = 30
    /// How long a new user's first Echo poll may wait for its turn in a reconnect storm before the stream gets a 503.
    var firstPollWait: Double = 10
    /// The edition whose reading-lists interface holds the Saved tab (lists are per central user: any edition serves them).
    var readingListsEdition = LanguageCode.english
    /// Seconds this server reuses a user's Saved tab it read (0: never); a write through it drops the copy at once.
    var savedCacheTTL: Double = 5
    /// Whether an edit without credentials is sent to Wikimedia (`--anonymous-edits on`): off by default, since Wikimedia
    /// attributes every anonymous edit made through Lede to the one address Lede calls from.
    var anonymousEdits = false
    /// The apps whose association files this deployment publishes (`--ios-app-ids`, `--android-apps`).
    var appLinks = AppLinks()
    /// Deadline of a save (`action=edit`), in seconds: its own, longer than an ordinary call's.
    var editTimeout: Double = 15
    var cacheLimits = UpstreamCache.Limits()
    /// `--upstream-ca FILE`: a PEM file of CA certificates trusted besides the system trust store.
    var upstreamCA: String?
    /// Kept-alive upstream connections per origin per event loop, at most.
    var upstreamConnections = 8
    /// Per-origin concurrency bound and circuit breaker.
    var upstreamGuard = UpstreamGuard.Settings()
    /// `--locations FILE`; nil means the embedded list.
    var locationsFile: String?
    /// The places of `/places/locations` (loaded from `locationsFile` by `loadFiles()`).
    var places: [Place] = LocationsLoader.embedded

    /// Reads the files the flags name. Throws a message naming the file and the problem.
    /// What an operator should hear at start-up about these options: a live Wikimedia upstream called with the
    /// placeholder contact breaks Wikimedia's User-Agent policy (it asks for a way to reach whoever runs the client, and
    /// may block clients that give none).
    public var warnings: [(message: String, fields: [(String, String)])] {
        var out: [(String, [(String, String)])] = []
        if upstream != "embedded", contact == Options.placeholderContact {
            out.append(("--contact is the placeholder: Wikimedia's User-Agent policy asks for a contact that reaches this deployment's operator (--contact URL-or-e-mail, LEDE_CONTACT)",
                        [("policy", "https://foundation.wikimedia.org/wiki/Policy:User-Agent_policy"), ("upstream", upstream)]))
        }
        return out
    }

    public mutating func loadFiles() throws {
        if let path = locationsFile { places = try LocationsLoader.load(path: path) }
    }

    struct Flag: Sendable {
        let name: String
        let placeholder: String
        let help: String
        var environment: String { "LEDE_" + name.uppercased().replacingOccurrences(of: "-", with: "_") }
    }

    static let flags: [Flag] = [
        Flag(name: "host", placeholder: "ADDRESS", help: "Address to bind (default 0.0.0.0; :: for IPv6)."),
        Flag(name: "port", placeholder: "N", help: "Port to listen on, 0 for an ephemeral port (default 8080)."),
        Flag(name: "loops", placeholder: "N", help: "Event loops, each a thread with its own epoll instance (default: number of cores)."),
        Flag(name: "header-timeout", placeholder: "SECONDS", help: "Time to receive a complete header section; slower clients get 408 and are closed (default 10)."),
        Flag(name: "idle-timeout", placeholder: "SECONDS", help: "Keep-alive connections idle this long are closed (default 60)."),
        Flag(name: "drain-timeout", placeholder: "SECONDS", help: "On SIGTERM/SIGINT, time in-flight requests get to finish (default 10)."),
        Flag(name: "max-connections", placeholder: "N", help: "Open connections; past it new ones get 503 and are closed (default 10000)."),
        Flag(name: "max-body", placeholder: "BYTES", help: "Largest request body; larger declared bodies get 413 before any is read (default 1048576)."),
        Flag(name: "max-streams", placeholder: "N", help: "Streamed answers (server-sent events, streamed screens) open at once; past it a stream request gets 503 with Retry-After (default 10000)."),
        Flag(name: "stream-heartbeat", placeholder: "SECONDS", help: "Quiet time after which an event stream gets a comment heartbeat, keeping proxies and mobile radios from dropping it (default 25)."),
        Flag(name: "stream-stall-timeout", placeholder: "SECONDS", help: "A stream whose client takes no bytes for this long while some wait is closed and its producer cancelled (default 30)."),
        Flag(name: "stream-buffer", placeholder: "BYTES", help: "Outbound bytes a stream's connection holds before its producer waits (high-water mark; it resumes at a quarter of it) (default 65536)."),
        Flag(name: "client-rate", placeholder: "N", help: "Units a client's budget refills a second (a request answered from memory costs 1, one that reaches Wikimedia or renders more; see docs/CONFIGURATION.md); past its budget a client gets 429 rate-limited. A client is its Authorization, else its address. 0 turns limiting off (default 20)."),
        Flag(name: "client-burst", placeholder: "N", help: "Units a client may spend at once before the rate applies (default 400)."),
        Flag(name: "trusted-proxies", placeholder: "CIDR[,CIDR...]", help: "Proxies whose X-Forwarded-For and X-Forwarded-Proto are believed: a request from one is the client's at the rightmost forwarded address outside this list (default none: every peer is the client)."),
        Flag(name: "max-bodies-in-flight", placeholder: "BYTES", help: "Bytes of request bodies received at once over all connections; a request whose body would not fit gets 503 with Retry-After before any of it is read (default 67108864)."),
        Flag(name: "body-min-rate", placeholder: "BYTES", help: "Bytes a second a request body must average once it has taken 5 s, or the request is a 408 (default 1024)."),
        Flag(name: "log-level", placeholder: "LEVEL", help: "debug, info, warning, error or off (default info). Logs are JSON lines on stderr."),
        Flag(name: "access-log", placeholder: "stdout|off", help: "One JSON line per request on stdout, or off (default stdout)."),
        Flag(name: "bench-routes", placeholder: "on|off", help: "Serve the benchmark fixtures /_bench/plaintext, /_bench/json and the event streams /_bench/events and POST /_bench/broadcast (default off)."),
        Flag(name: "upstream", placeholder: "embedded|URL", help: "Where Wikimedia data comes from: 'embedded' (bundled data, no network; default) or a base URL template with {lang}, e.g. https://{lang}.wikipedia.org or http://127.0.0.1:9000/{lang}."),
        Flag(name: "media-upstream", placeholder: "embedded|URL", help: "Where the share card's lead images come from: 'embedded', or an origin with upload.wikimedia.org's paths (default https://upload.wikimedia.org; embedded with the embedded --upstream)."),
        Flag(name: "public-url", placeholder: "URL", help: "The URL clients reach this server at, for the share page's og:image (default: http://<Host> of each request, https behind X-Forwarded-Proto: https)."),
        Flag(name: "reddit-upstream", placeholder: "embedded|URL", help: "Where /images gets Reddit listings: 'embedded' (default) or a base URL such as https://www.reddit.com."),
        Flag(name: "contact", placeholder: "TEXT", help: "Contact (URL or e-mail) put in the upstream User-Agent, as Wikimedia's User-Agent policy asks."),
        Flag(name: "upstream-timeout", placeholder: "SECONDS", help: "Deadline for each upstream call (default 2)."),
        Flag(name: "upstream-connections", placeholder: "N", help: "Kept-alive upstream connections per origin on each upstream event loop; a request finding all busy waits within its deadline (default 8)."),
        Flag(name: "upstream-ca", placeholder: "FILE", help: "PEM file of CA certificates trusted for upstream TLS besides the system trust store (a private CA). Certificates are always verified."),
        Flag(name: "upstream-concurrency", placeholder: "N", help: "Upstream calls in flight per origin at most; more wait their turn within their deadline (default 16)."),
        Flag(name: "breaker-failures", placeholder: "N", help: "Consecutive failed calls (timeouts, unreachable, 5xx) to one origin that open its circuit breaker (default 5)."),
        Flag(name: "breaker-cooldown", placeholder: "SECONDS", help: "How long an open breaker fails calls fast before one probe call may close it (default 10)."),
        Flag(name: "section-timeout", placeholder: "SECONDS", help: "Deadline for each /feed section; a slower section is sent as a placeholder (default 0.8)."),
        Flag(name: "feed-max-age", placeholder: "SECONDS", help: "Lifetime of today's shared /feed sections; past it they are served while one background refresh runs, for up to as long again (default 300)."),
        Flag(name: "notifications-poll", placeholder: "SECONDS", help: "How often Lede asks Echo for a user's notifications while that user has /notifications/stream open: one poll per user however many streams, spread ±10% (default 30)."),
        Flag(name: "first-poll-wait", placeholder: "SECONDS", help: "How long a user's first Echo poll (a bell opening) may wait for its turn when many open at once; past it the stream is refused with 503 and a Retry-After spread over 2-12 s (default 10)."),
        Flag(name: "reading-lists-edition", placeholder: "LANG", help: "The edition whose reading lists back the Saved tab (default en; lists are per account, so any edition serves the same ones)."),
        Flag(name: "edit-timeout", placeholder: "SECONDS", help: "Deadline of a save (action=edit; default 15): MediaWiki can take seconds to save a long page. A save that times out is never sent again."),
        Flag(name: "anonymous-edits", placeholder: "on|off", help: "Send edits made without an account (default off: refused with 401 edit-needs-account, nothing sent). Wikimedia attributes them to the address Lede calls from: turn on only where Wikimedia trusts this deployment as a proxy."),
        Flag(name: "ios-app-ids", placeholder: "TEAMID.BUNDLE[,...]", help: "iOS apps that open this deployment's /share/* and /article/* links (universal links): served in /.well-known/apple-app-site-association (404 when none)."),
        Flag(name: "android-apps", placeholder: "PACKAGE@SHA256[,...]", help: "Android apps that open the same links (app links), each with its signing certificate's SHA-256 fingerprint as keytool prints it: served in /.well-known/assetlinks.json (404 when none)."),
        Flag(name: "saved-cache-ttl", placeholder: "SECONDS", help: "How long this server reuses a user's Saved tab it read from Wikimedia (default 5; 0: every read asks). A save or removal through this server drops it at once; a change made elsewhere shows within this time."),
        Flag(name: "locations", placeholder: "FILE", help: "JSON list for /places/locations: an array (or {\"locations\": [...]}) of {\"name\"?, \"lat\", \"long\"|\"lon\"}. Default: the embedded list (Amsterdam, Mumbai, Copenhagen, one unnamed place)."),
        Flag(name: "cache-max-entries", placeholder: "N", help: "Entries the upstream cache holds before evicting the least recently used (default 10000)."),
        Flag(name: "cache-max-bytes", placeholder: "BYTES", help: "Bytes of upstream answers the cache holds (default 67108864)."),
        Flag(name: "stale-if-error", placeholder: "SECONDS", help: "How long past expiry a cached answer is still served when the upstream fails (default 600; 0 turns it off)."),
    ]

    struct ParseError: Error, CustomStringConvertible, Equatable {
        var description: String
    }

    init() {
        // A phone opening the app, scrolling the feed, opening articles and saving twenty in a row stays well inside
        // these (docs/CONFIGURATION.md has the arithmetic); a loop of requests does not.
        server.clients.rate = 20
        server.clients.burst = 400
    }

    /// Reads `arguments` (without the program name) and `environment`.
    public static func parse(_ arguments: [String], environment: [String: String]) throws -> Options {
        var given: [String: String] = [:]
        var i = 0
        var options = Options()
        while i < arguments.count {
            let arg = arguments[i]
            if arg == "-h" || arg == "--help" { options.showHelp = true; i += 1; continue }
            guard arg.hasPrefix("--") else { throw ParseError(description: "unexpected argument '\(arg)'; see --help") }
            var name = String(arg.dropFirst(2))
            var value: String
            if let eq = name.firstIndex(of: "=") {
                value = String(name[name.index(after: eq)...]); name = String(name[..<eq])
            } else {
                guard i + 1 < arguments.count else { throw ParseError(description: "--\(name) needs a value; see --help") }
                value = arguments[i + 1]; i += 1
            }
            guard flags.contains(where: { $0.name == name }) else { throw ParseError(description: "unknown flag --\(name); see --help") }
            given[name] = value
            i += 1
        }
        for flag in flags {
            guard let value = given[flag.name] ?? environment[flag.environment] else { continue }
            let source = given[flag.name] != nil ? "--\(flag.name)" : flag.environment
            try options.apply(flag.name, value, source: source)
        }
        return options
    }

    private mutating func apply(_ name: String, _ value: String, source: String) throws {
        func int(_ range: ClosedRange<Int>) throws -> Int {
            guard let n = Int(value), range.contains(n) else {
                throw ParseError(description: "\(source) must be a whole number in \(range.lowerBound)...\(range.upperBound), not '\(value)'")
            }
            return n
        }
        func seconds() throws -> Double {
            guard let d = Double(value), d.isFinite, d > 0, d <= 86_400 else {
                throw ParseError(description: "\(source) must be a number of seconds above 0, not '\(value)'")
            }
            return d
        }
        switch name {
        case "host":
            guard !value.isEmpty else { throw ParseError(description: "\(source) must not be empty") }
            server.host = value
        case "port": server.port = try int(0...65535)
        case "loops": server.loops = try int(1...256)
        case "header-timeout": server.timeouts.header = try seconds()
        case "idle-timeout": server.timeouts.idle = try seconds()
        case "drain-timeout": server.timeouts.drain = try seconds()
        case "max-connections": server.limits.maxConnections = try int(1...1_000_000)
        case "max-body": server.limits.maxBody = try int(0...(1 << 30))
        case "max-streams": server.streams.maxStreams = try int(0...1_000_000)
        case "stream-heartbeat": server.streams.heartbeat = try seconds()
        case "stream-stall-timeout": server.streams.stallTimeout = try seconds()
        case "stream-buffer":
            server.streams.highWater = try int(1024...(64 << 20))
            server.streams.lowWater = server.streams.highWater / 4
        case "client-rate":
            guard let d = Double(value), d.isFinite, d >= 0, d <= 1_000_000 else { throw ParseError(description: "\(source) must be a number of units a second from 0 (off) to 1000000, not '\(value)'") }
            server.clients.rate = d
        case "client-burst": server.clients.burst = Double(try int(1...10_000_000))
        case "trusted-proxies":
            switch AddressBlock.list(value) {
            case .success(let blocks): server.clients.trustedProxies = blocks
            case .failure(let e): throw ParseError(description: "\(source) must be addresses or CIDR blocks separated by commas; '\(e.entry)' is neither")
            }
        case "max-bodies-in-flight": server.bodies.maxInFlight = try int((64 << 10)...(1 << 40))
        case "body-min-rate": server.bodies.minRate = try int(0...(1 << 30))
        case "log-level":
            guard let l = Logger.Level(name: value) else { throw ParseError(description: "\(source) must be debug, info, warning, error or off, not '\(value)'") }
            logLevel = l
        case "access-log":
            switch value {
            case "stdout": server.accessLog = true
            case "off": server.accessLog = false
            default: throw ParseError(description: "\(source) must be stdout or off, not '\(value)'")
            }
        case "upstream":
            if value != "embedded" {
                guard value.contains("{lang}"), value.hasPrefix("http://") || value.hasPrefix("https://"),
                      URL(string: value.replacingOccurrences(of: "{lang}", with: "en")) != nil else {
                    throw ParseError(description: "\(source) must be 'embedded' or an http(s) URL template containing {lang}, not '\(value)'")
                }
            }
            upstream = value
        case "media-upstream", "public-url":
            if value != "embedded" || name == "public-url" {
                guard value.hasPrefix("http://") || value.hasPrefix("https://"), !value.hasSuffix("/"), URL(string: value) != nil else {
                    throw ParseError(description: "\(source) must be \(name == "public-url" ? "" : "'embedded' or ")an http(s) base URL without a trailing slash, not '\(value)'")
                }
            }
            if name == "media-upstream" { mediaUpstream = value } else { publicURL = value }
        case "reddit-upstream":
            if value != "embedded" {
                guard value.hasPrefix("http://") || value.hasPrefix("https://"), !value.hasSuffix("/"), URL(string: value) != nil else {
                    throw ParseError(description: "\(source) must be 'embedded' or an http(s) base URL without a trailing slash, not '\(value)'")
                }
            }
            redditUpstream = value
        case "contact":
            guard !value.isEmpty, value.utf8.allSatisfy({ $0 >= 32 && $0 < 127 }) else {
                throw ParseError(description: "\(source) must be printable ASCII (a URL or an e-mail address)")
            }
            contact = value
        case "upstream-timeout": upstreamTimeout = try seconds()
        case "edit-timeout": editTimeout = try seconds()
        case "section-timeout": sectionTimeout = try seconds()
        case "feed-max-age": feedMaxAge = try seconds()
        case "notifications-poll": notificationsPoll = try seconds()
        case "first-poll-wait": firstPollWait = try seconds()
        case "reading-lists-edition":
            guard let code = LanguageCode(value) else { throw ParseError(description: "\(source) must be a Wikipedia edition's code (en, de, …), not '\(value)'") }
            readingListsEdition = code
        case "saved-cache-ttl":
            guard let d = Double(value), d.isFinite, d >= 0, d <= 300 else {
                throw ParseError(description: "\(source) must be a number of seconds from 0 to 300, not '\(value)'")
            }
            savedCacheTTL = d
        case "upstream-connections": upstreamConnections = try int(1...1_024)
        case "upstream-ca":
            guard !value.isEmpty else { throw ParseError(description: "\(source) must name a file") }
            upstreamCA = value
        case "upstream-concurrency": upstreamGuard.maxConcurrent = try int(1...1_024)
        case "breaker-failures": upstreamGuard.failureThreshold = try int(1...1_000)
        case "breaker-cooldown": upstreamGuard.coolDown = try seconds()
        case "locations":
            guard !value.isEmpty else { throw ParseError(description: "\(source) must name a file") }
            locationsFile = value
        case "cache-max-entries": cacheLimits.maxEntries = try int(1...10_000_000)
        case "cache-max-bytes": cacheLimits.maxBytes = try int(1024...(1 << 40))
        case "stale-if-error":
            guard let d = Double(value), d.isFinite, d >= 0, d <= 86_400 else {
                throw ParseError(description: "\(source) must be a number of seconds from 0 to 86400, not '\(value)'")
            }
            cacheLimits.staleIfError = d
        case "bench-routes":
            switch value {
            case "on", "true", "1": benchRoutes = true
            case "off", "false", "0": benchRoutes = false
            default: throw ParseError(description: "\(source) must be on or off, not '\(value)'")
            }
        case "ios-app-ids", "android-apps":
            do {
                if name == "ios-app-ids" { appLinks.iosAppIDs = try AppLinks.iosApps(value) }
                else { appLinks.androidApps = try AppLinks.androidApps(value) }
            } catch let e as AppLinks.ParseError { throw ParseError(description: "\(source): \(e.message)") }
        case "anonymous-edits":
            switch value {
            case "on", "true", "1": anonymousEdits = true
            case "off", "false", "0": anonymousEdits = false
            default: throw ParseError(description: "\(source) must be on or off, not '\(value)'")
            }
        default: break
        }
    }

    public static var helpText: String {
        var s = """
        lede — a backend-for-frontend for Wikipedia-style mobile apps.

        Usage: lede [flags]
               lede healthcheck [--port N]   exit 0 if the server on this port answers /healthz with 200

        Every flag can also be set through the environment variable shown; a flag wins over its variable.

        Flags:

        """
        for f in flags {
            let left = "  --\(f.name) \(f.placeholder)"
            s += left.padding(toLength: max(left.count + 2, 34), withPad: " ", startingAt: 0) + f.help + "\n"
            s += String(repeating: " ", count: 34) + "env: \(f.environment)\n"
        }
        s += "  -h, --help                      Show this help.\n"
        return s
    }
}

import Foundation
import HTTPCore

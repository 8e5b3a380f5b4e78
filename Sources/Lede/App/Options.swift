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
    /// Whether the variants the wikis list are read at start-up and daily (a live upstream only).
    var wikiVariants = true
    public var showHelp = false
    /// `embedded`, or a base URL template with `{lang}` (`https://{lang}.wikipedia.org`).
    public var upstream = "embedded"
    /// `embedded`, or Reddit's base URL (`https://www.reddit.com`) for the rgallery endpoints.
    var redditUpstream = "embedded"
    /// `redditUpstream` as `--reddit-upstream` sets it (an origin flag's value).
    private var redditUpstreamSetting: String? {
        get { redditUpstream }
        set { redditUpstream = newValue ?? "embedded" }
    }
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

    /// A flag, declared once: its name (and so its variable), what it does, its default as read from `Options()`, and
    /// how its value is read. Parsing, `--help` and the test that holds docs/CONFIGURATION.md to them all read this.
    struct Flag: Sendable {
        /// The default, as `--help` and docs/CONFIGURATION.md show it.
        enum Default: Equatable, Sendable {
            /// A value the flag takes (`10`, `embedded`): shown in code style in the docs.
            case value(String)
            /// Words for a default that is no single value (`none`, `the number of cores`).
            case described(String)
        }
        let name: String
        let placeholder: String
        /// What it does; its default is never written here (it is read from `Options()`).
        let help: String
        let shown: @Sendable (Options) -> Default
        /// Reads `value` (from `source`: `--name` or the variable) into the options, or throws saying what it must be.
        let apply: @Sendable (inout Options, _ value: String, _ source: String) throws -> Void

        var environment: String { "LEDE_" + name.uppercased().replacingOccurrences(of: "-", with: "_") }
        /// The default of a fresh `Options`.
        var defaultValue: Default { shown(Options()) }

        init(_ name: String, _ placeholder: String, _ help: String, shown: @escaping @Sendable (Options) -> Default,
             apply: @escaping @Sendable (inout Options, String, String) throws -> Void) {
            self.name = name; self.placeholder = placeholder; self.help = help; self.shown = shown; self.apply = apply
        }

        /// A whole number in `range`.
        static func int(_ name: String, _ placeholder: String, _ range: ClosedRange<Int>, _ path: WritableKeyPath<Options, Int> & Sendable,
                        _ help: String) -> Flag {
            Flag(name, placeholder, help, shown: { .value(String($0[keyPath: path])) }) { o, value, source in
                o[keyPath: path] = try parseInt(value, range, source)
            }
        }

        /// A number of seconds above 0, at most a day.
        static func seconds(_ name: String, _ path: WritableKeyPath<Options, Double> & Sendable, _ help: String) -> Flag {
            Flag(name, "SECONDS", help, shown: { .value(Flag.number($0[keyPath: path])) }) { o, value, source in
                guard let d = Double(value), d.isFinite, d > 0, d <= 86_400 else {
                    throw ParseError(description: "\(source) must be a number of seconds above 0, not '\(value)'")
                }
                o[keyPath: path] = d
            }
        }

        /// A number in `range` (0 allowed where the range starts there).
        static func decimal(_ name: String, _ placeholder: String, _ range: ClosedRange<Double>, _ path: WritableKeyPath<Options, Double> & Sendable,
                            _ what: String, _ help: String) -> Flag {
            Flag(name, placeholder, help, shown: { .value(Flag.number($0[keyPath: path])) }) { o, value, source in
                guard let d = Double(value), d.isFinite, range.contains(d) else {
                    throw ParseError(description: "\(source) must be \(what) from \(Flag.number(range.lowerBound)) to \(Flag.number(range.upperBound)), not '\(value)'")
                }
                o[keyPath: path] = d
            }
        }

        /// `on` or `off` (also `true`/`false`, `1`/`0`).
        static func onOff(_ name: String, _ path: WritableKeyPath<Options, Bool> & Sendable, _ help: String) -> Flag {
            Flag(name, "on|off", help, shown: { .value($0[keyPath: path] ? "on" : "off") }) { o, value, source in
                switch value {
                case "on", "true", "1": o[keyPath: path] = true
                case "off", "false", "0": o[keyPath: path] = false
                default: throw ParseError(description: "\(source) must be on or off, not '\(value)'")
                }
            }
        }

        /// An http(s) base URL without a trailing slash, or (`embedded: true`) the word `embedded`.
        static func origin(_ name: String, _ path: WritableKeyPath<Options, String?> & Sendable, embedded: Bool, shown: @escaping @Sendable (Options) -> Default,
                           _ help: String) -> Flag {
            Flag(name, embedded ? "embedded|URL" : "URL", help, shown: shown) { o, value, source in
                if value != "embedded" || !embedded {
                    guard value.hasPrefix("http://") || value.hasPrefix("https://"), !value.hasSuffix("/"), URL(string: value) != nil else {
                        throw ParseError(description: "\(source) must be \(embedded ? "'embedded' or " : "")an http(s) base URL without a trailing slash, not '\(value)'")
                    }
                }
                o[keyPath: path] = value
            }
        }

        /// A file's path (not empty).
        static func file(_ name: String, _ path: WritableKeyPath<Options, String?> & Sendable, shown: Default, _ help: String) -> Flag {
            Flag(name, "FILE", help, shown: { _ in shown }) { o, value, source in
                guard !value.isEmpty else { throw ParseError(description: "\(source) must name a file") }
                o[keyPath: path] = value
            }
        }

        static func parseInt(_ value: String, _ range: ClosedRange<Int>, _ source: String) throws -> Int {
            guard let n = Int(value), range.contains(n) else {
                throw ParseError(description: "\(source) must be a whole number in \(range.lowerBound)...\(range.upperBound), not '\(value)'")
            }
            return n
        }

        /// `10` for a whole number, `0.8` otherwise.
        static func number(_ d: Double) -> String { d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d) }
    }

    static let flags: [Flag] = [
        Flag("host", "ADDRESS", "Address to bind (:: for IPv6).", shown: { .value($0.server.host) }) { o, value, source in
            guard !value.isEmpty else { throw ParseError(description: "\(source) must not be empty") }
            o.server.host = value
        },
        .int("port", "N", 0...65535, \.server.port, "Port to listen on, 0 for an ephemeral port."),
        Flag("admin-port", "N", "A port of its own for the operators: /metrics is served there only (404 on --port); the probes on both.",
             shown: { o in o.server.adminPort.map { .value(String($0)) } ?? .described("none: /metrics on --port") }) { o, value, source in
            o.server.adminPort = try Flag.parseInt(value, 0...65535, source)
        },
        Flag("loops", "N", "Event loops, each a thread with its own epoll instance.", shown: { _ in .described("the number of cores") }) { o, value, source in
            o.server.loops = try Flag.parseInt(value, 1...256, source)
        },
        .seconds("header-timeout", \.server.timeouts.header, "Time to receive a complete header section; slower clients get 408 and are closed."),
        .seconds("idle-timeout", \.server.timeouts.idle, "Keep-alive connections idle this long are closed."),
        .seconds("drain-timeout", \.server.timeouts.drain, "On SIGTERM/SIGINT, time in-flight requests get to finish."),
        .int("max-connections", "N", 1...1_000_000, \.server.limits.maxConnections, "Open connections; at it the one idle longest makes room for a new one, and with none idle new ones get 503 and are closed."),
        Flag("max-connections-per-address", "N", "Open connections one address (IPv6: one /64) may hold, trusted proxies exempt; past it its new ones get 503 and are closed.",
             shown: { o in o.server.limits.maxConnectionsPerAddress.map { .value(String($0)) } ?? .described("a tenth of --max-connections, at least 8") }) { o, value, source in
            o.server.limits.maxConnectionsPerAddress = try Flag.parseInt(value, 1...1_000_000, source)
        },
        .int("max-body", "BYTES", 0...(1 << 30), \.server.limits.maxBody, "Largest request body; larger declared bodies get 413 before any is read."),
        .int("max-streams", "N", 0...1_000_000, \.server.streams.maxStreams, "Streamed answers (server-sent events, streamed screens) open at once; past it a stream request gets 503 with Retry-After."),
        .seconds("stream-heartbeat", \.server.streams.heartbeat, "Quiet time after which an event stream gets a comment heartbeat, keeping proxies and mobile radios from dropping it."),
        .seconds("stream-stall-timeout", \.server.streams.stallTimeout, "A stream whose client takes no bytes for this long while some wait is closed and its producer cancelled."),
        Flag("stream-buffer", "BYTES", "Outbound bytes a stream's connection holds before its producer waits (high-water mark; it resumes at a quarter of it).",
             shown: { .value(String($0.server.streams.highWater)) }) { o, value, source in
            o.server.streams.highWater = try Flag.parseInt(value, 1024...(64 << 20), source)
            o.server.streams.lowWater = o.server.streams.highWater / 4
        },
        .decimal("client-rate", "N", 0...1_000_000, \.server.clients.rate, "a number of units a second",
                 "Units a signed-in reader's budget refills a second (a request answered from memory costs 1, one that reaches Wikimedia or renders more; see docs/CONFIGURATION.md); past its budget a client gets 429 rate-limited. A reader is a bearer token Wikimedia has accepted; every other request is its address's. 0 turns all limiting off."),
        Flag("client-burst", "N", "Units a signed-in reader may spend at once before the rate applies.", shown: { .value(Flag.number($0.server.clients.burst)) }) { o, value, source in
            o.server.clients.burst = Double(try Flag.parseInt(value, 1...10_000_000, source))
        },
        .decimal("address-rate", "N", 0.001...1_000_000, \.addressRate, "a number of units a second",
                 "Units an address's budget refills a second (IPv6: a /64's): every request without a token Wikimedia has accepted is charged to it, so it is sized for many people behind one address."),
        Flag("address-burst", "N", "Units an address may spend at once before the rate applies.", shown: { .value(Flag.number($0.addressBurst)) }) { o, value, source in
            o.addressBurst = Double(try Flag.parseInt(value, 1...10_000_000, source))
        },
        .seconds("remember-tokens", \.server.clients.remember, "How long a bearer token Wikimedia accepted stays a client of its own before it is checked again."),
        Flag("trusted-proxies", "CIDR[,CIDR...]", "Proxies whose X-Forwarded-For and X-Forwarded-Proto are believed: a request from one is the client's at the rightmost forwarded address outside this list (none: every peer is the client).",
             shown: { o in o.server.clients.trustedProxies.isEmpty ? .described("none") : .value(o.server.clients.trustedProxies.map(\.description).joined(separator: ",")) }) { o, value, source in
            switch AddressBlock.list(value) {
            case .success(let blocks): o.server.clients.trustedProxies = blocks
            case .failure(let e): throw ParseError(description: "\(source) must be addresses or CIDR blocks separated by commas; '\(e.entry)' is neither")
            }
        },
        .int("max-bodies-in-flight", "BYTES", (64 << 10)...(1 << 40), \.server.bodies.maxInFlight, "Bytes of request bodies received at once over all connections (a body holds what has arrived of it and 64 KiB more); a request whose body would not fit gets 503 with Retry-After."),
        Flag("max-bodies-per-address", "BYTES", "Of --max-bodies-in-flight, the bytes one address (IPv6: one /64) may hold.",
             shown: { o in o.server.bodies.maxPerAddress.map { .value(String($0)) } ?? .described("an eighth of --max-bodies-in-flight") }) { o, value, source in
            o.server.bodies.maxPerAddress = try Flag.parseInt(value, (64 << 10)...(1 << 40), source)
        },
        .int("body-min-rate", "BYTES", 0...(1 << 30), \.server.bodies.minRate, "Bytes a second a request body must average once its grace time has passed, or the request is a 408."),
        Flag("log-level", "LEVEL", "debug, info, warning, error or off. Logs are JSON lines on stderr.", shown: { .value($0.logLevel.name) }) { o, value, source in
            guard let l = Logger.Level(name: value) else { throw ParseError(description: "\(source) must be debug, info, warning, error or off, not '\(value)'") }
            o.logLevel = l
        },
        Flag("access-log", "stdout|off", "One JSON line per request on stdout, or off.", shown: { .value($0.server.accessLog ? "stdout" : "off") }) { o, value, source in
            switch value {
            case "stdout": o.server.accessLog = true
            case "off": o.server.accessLog = false
            default: throw ParseError(description: "\(source) must be stdout or off, not '\(value)'")
            }
        },
        .onOff("wiki-variants", \.wikiVariants, "Read the language variants the wikis list (meta=siteinfo&siprop=languagevariants) at start-up and daily, beside the built-in table, so a converter a wiki adds is accepted as lang= (a live --upstream only)."),
        .onOff("bench-routes", \.benchRoutes, "Serve the benchmark fixtures /_bench/plaintext, /_bench/json and the event streams /_bench/events and POST /_bench/broadcast."),
        Flag("upstream", "embedded|URL", "Where Wikimedia data comes from: 'embedded' (bundled data, no network) or a base URL template with {lang}, e.g. https://{lang}.wikipedia.org or http://127.0.0.1:9000/{lang}.",
             shown: { .value($0.upstream) }) { o, value, source in
            if value != "embedded" {
                guard value.contains("{lang}"), value.hasPrefix("http://") || value.hasPrefix("https://"),
                      URL(string: value.replacingOccurrences(of: "{lang}", with: "en")) != nil else {
                    throw ParseError(description: "\(source) must be 'embedded' or an http(s) URL template containing {lang}, not '\(value)'")
                }
            }
            o.upstream = value
        },
        .origin("media-upstream", \.mediaUpstream, embedded: true, shown: { _ in .described("https://upload.wikimedia.org; embedded with the embedded --upstream") },
                "Where the share card's lead images come from: 'embedded', or an origin with upload.wikimedia.org's paths."),
        .origin("public-url", \.publicURL, embedded: false, shown: { _ in .described("from each request's Host") },
                "The URL clients reach this server at, for the share page's og:image (without it: http://<Host> of each request, https behind X-Forwarded-Proto: https)."),
        .origin("reddit-upstream", \.redditUpstreamSetting, embedded: true, shown: { .value($0.redditUpstream) },
                "Where /images gets Reddit listings: 'embedded' or a base URL such as https://www.reddit.com."),
        Flag("contact", "TEXT", "Contact (URL or e-mail) put in the upstream User-Agent, as Wikimedia's User-Agent policy asks.",
             shown: { _ in .described("a placeholder naming the project") }) { o, value, source in
            guard !value.isEmpty, value.utf8.allSatisfy({ $0 >= 32 && $0 < 127 }) else {
                throw ParseError(description: "\(source) must be printable ASCII (a URL or an e-mail address)")
            }
            o.contact = value
        },
        .seconds("upstream-timeout", \.upstreamTimeout, "Deadline for each upstream call."),
        .int("upstream-connections", "N", 1...1_024, \.upstreamConnections, "Kept-alive upstream connections per origin on each upstream event loop; a request finding all busy waits within its deadline."),
        .file("upstream-ca", \.upstreamCA, shown: .described("none"), "PEM file of CA certificates trusted for upstream TLS besides the system trust store (a private CA). Certificates are always verified."),
        .int("upstream-concurrency", "N", 1...1_024, \.upstreamGuard.maxConcurrent, "Upstream calls in flight per origin at most; more wait their turn within their deadline."),
        .int("breaker-failures", "N", 1...1_000, \.upstreamGuard.failureThreshold, "Consecutive failed calls (timeouts, unreachable, 5xx) to one origin that open its circuit breaker."),
        .seconds("breaker-cooldown", \.upstreamGuard.coolDown, "How long an open breaker fails calls fast before one probe call may close it."),
        .seconds("section-timeout", \.sectionTimeout, "Deadline for each /feed section; a slower section is sent as a placeholder."),
        .seconds("feed-max-age", \.feedMaxAge, "Lifetime of today's shared /feed sections; past it they are served while one background refresh runs, for up to as long again."),
        .seconds("notifications-poll", \.notificationsPoll, "How often Lede asks Echo for a user's notifications while that user has /notifications/stream open: one poll per user however many streams, spread ±10%."),
        .seconds("first-poll-wait", \.firstPollWait, "How long a user's first Echo poll (a bell opening) may wait for its turn when many open at once; past it the stream is refused with 503 and a Retry-After spread over 2-12 s."),
        Flag("reading-lists-edition", "LANG", "The edition whose reading lists back the Saved tab (lists are per account, so any edition serves the same ones).",
             shown: { .value($0.readingListsEdition.code) }) { o, value, source in
            guard let code = LanguageCode(value) else { throw ParseError(description: "\(source) must be a Wikipedia edition's code (en, de, …), not '\(value)'") }
            o.readingListsEdition = code
        },
        .seconds("edit-timeout", \.editTimeout, "Deadline of a save (action=edit): MediaWiki can take seconds to save a long page. A save that times out is never sent again."),
        .onOff("anonymous-edits", \.anonymousEdits, "Send edits made without an account (off: refused with 401 edit-needs-account, nothing sent). Wikimedia attributes them to the address Lede calls from: turn on only where Wikimedia trusts this deployment as a proxy."),
        Flag("ios-app-ids", "TEAMID.BUNDLE[,...]", "iOS apps that open this deployment's /share/* and /article/* links (universal links): served in /.well-known/apple-app-site-association (404 when none).",
             shown: { _ in .described("none") }) { o, value, source in
            do { o.appLinks.iosAppIDs = try AppLinks.iosApps(value) } catch let e as AppLinks.ParseError { throw ParseError(description: "\(source): \(e.message)") }
        },
        Flag("android-apps", "PACKAGE@SHA256[,...]", "Android apps that open the same links (app links), each with its signing certificate's SHA-256 fingerprint as keytool prints it: served in /.well-known/assetlinks.json (404 when none).",
             shown: { _ in .described("none") }) { o, value, source in
            do { o.appLinks.androidApps = try AppLinks.androidApps(value) } catch let e as AppLinks.ParseError { throw ParseError(description: "\(source): \(e.message)") }
        },
        .decimal("saved-cache-ttl", "SECONDS", 0...300, \.savedCacheTTL, "a number of seconds",
                 "How long this server reuses a user's Saved tab it read from Wikimedia (0: every read asks). A save or removal through this server drops it at once; a change made elsewhere shows within this time."),
        .file("locations", \.locationsFile, shown: .described("the embedded list"), "JSON list for /places/locations: an array (or {\"locations\": [...]}) of {\"name\"?, \"lat\", \"long\"|\"lon\"}. The embedded list: Amsterdam, Mumbai, Copenhagen, one unnamed place."),
        .int("cache-max-entries", "N", 1...10_000_000, \.cacheLimits.maxEntries, "Entries the upstream cache holds before evicting the least recently used."),
        .int("cache-max-bytes", "BYTES", 1024...(1 << 40), \.cacheLimits.maxBytes, "Bytes of upstream answers the cache holds."),
        .decimal("stale-if-error", "SECONDS", 0...86_400, \.cacheLimits.staleIfError, "a number of seconds",
                 "How long past expiry a cached answer is still served when the upstream fails (0 turns it off)."),
    ]

    struct ParseError: Error, CustomStringConvertible, Equatable {
        var description: String
    }

    init() {
        // A phone opening the app, scrolling the feed, opening articles and saving twenty in a row stays well inside
        // these (docs/CONFIGURATION.md has the arithmetic); a loop of requests does not.
        server.clients.rate = 20
        server.clients.burst = 400
        // An address is many people more often than one: a carrier's NAT, a school's Wi-Fi (docs/CONFIGURATION.md,
        // "Running it in public").
        server.clients.addressRate = 200
        server.clients.addressBurst = 4000
    }

    /// The address budget's flags read and write these (the server's own defaults follow the client budget's).
    var addressRate: Double {
        get { server.clients.addressRate ?? server.clients.rate }
        set { server.clients.addressRate = newValue }
    }
    var addressBurst: Double {
        get { server.clients.addressBurst ?? server.clients.burst }
        set { server.clients.addressBurst = newValue }
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
            try flag.apply(&options, value, source)
        }
        return options
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
            let shown: String
            switch f.defaultValue { case .value(let v): shown = "Default \(v)."; case .described(let d): shown = "Default: \(d)." }
            s += left.padding(toLength: max(left.count + 2, 34), withPad: " ", startingAt: 0) + f.help + " " + shown + "\n"
            s += String(repeating: " ", count: 34) + "env: \(f.environment)\n"
        }
        s += "  -h, --help                      Show this help.\n"
        return s
    }
}

import Foundation
import HTTPCore
import Upstream

import HTTPClient
import HTTPServer
import Imaging
import LedeBasics
import Wikimedia
import WikimediaEmbedded
import HTTPCore
import Upstream

/// Wires Lede's features into a router and a server. The HTTP core adds `/healthz`, `/readyz` and `/metrics`.
public final class LedeApp: Sendable {
    let options: Options
    let api: WikimediaClient
    let router: Router
    let feed: FeedService
    /// Random articles per language, shared by `/random` and the feed.
    let random: RandomPool
    let reddit: RedditClient
    /// One Echo poll per user for the live bells (`/notifications/stream`).
    let notifications: NotificationHub
    /// The Saved tab over the user's reading lists.
    let saved: SavedService
    /// The share card: its lead images, its renders.
    let share: ShareService
    /// Encoded answers of the content routes (compressed once, not per request).
    let responses = UpstreamCache(limits: .init(maxEntries: 5_000, maxBytes: 32 << 20, staleIfError: 0))

    /// The upstream HTTP client of the live transports (nil when everything is embedded or injected).
    let client: HTTPClient?
    /// Reads the wikis' variants at start-up and daily (`--wiki-variants`); cancelled with the app.
    private let variantsTask: Task<Void, Never>?
    deinit { variantsTask?.cancel() }

    /// The HTTP client for these options: `--upstream-connections`, `--upstream-ca`. Handlers' calls use pools
    /// on the server's own loops; one loop thread of the client's own serves the rare calls made elsewhere.
    /// Throws when the CA file cannot be loaded.
    static func makeClient(_ options: Options) throws(HTTPClientError) -> HTTPClient {
        try HTTPClient(configuration: .init(loops: 1, connectionsPerOrigin: options.upstreamConnections,
                                            caFile: options.upstreamCA))
    }

    /// `client`: the upstream client to use; made from the options when a live upstream needs one and none is given.
    public init(options: Options, transport: UpstreamTransport? = nil, redditTransport injected: UpstreamTransport? = nil, mediaTransport media: UpstreamTransport? = nil,
                client given: HTTPClient? = nil) throws {
        self.options = options
        let mediaUpstream = options.mediaUpstream ?? (options.upstream == "embedded" ? "embedded" : "https://upload.wikimedia.org")
        let needsClient = (transport == nil && options.upstream != "embedded") || (injected == nil && options.redditUpstream != "embedded")
            || (media == nil && mediaUpstream != "embedded")
        let client = needsClient ? try given ?? Self.makeClient(options) : given
        self.client = client
        let chosen: UpstreamTransport = transport ?? (options.upstream == "embedded"
            ? EmbeddedTransport()
            : LiveTransport(template: options.upstream, contact: options.contact, client: client!))
        var ttls = WikimediaClient.TTLs()
        ttls.feedToday = options.feedMaxAge   // today's featured feed lives as long as the shared sections made of it
        api = WikimediaClient(transport: chosen, cache: UpstreamCache(limits: options.cacheLimits), guards: UpstreamGuard(settings: options.upstreamGuard),
                              deadline: options.upstreamTimeout, ttls: ttls, logger: Logger(level: options.logLevel))
        router = Router()
        let redditTransport: UpstreamTransport = injected ?? (options.redditUpstream == "embedded"
            ? EmbeddedRedditTransport() : LiveTransport(template: options.redditUpstream, contact: options.contact, client: client!))
        reddit = RedditClient(upstream: api.upstream.sharing(transport: redditTransport, deadline: options.upstreamTimeout), cache: api.cache)
        random = RandomPool(api: api)
        feed = FeedService(api: api, sectionTimeout: options.sectionTimeout, upstreamTimeout: options.upstreamTimeout, feedMaxAge: options.feedMaxAge, random: random)
        var hubSettings = NotificationHub.Settings()
        hubSettings.interval = options.notificationsPoll
        hubSettings.firstPolls = options.upstreamGuard.maxConcurrent
        hubSettings.firstPollWait = options.firstPollWait
        notifications = NotificationHub(api: api, settings: hubSettings)
        var savedSettings = SavedService.Settings()
        savedSettings.edition = options.readingListsEdition
        savedSettings.tabTTL = options.savedCacheTTL
        saved = SavedService(api: api, responses: responses, settings: savedSettings, logger: Logger(level: options.logLevel))
        let mediaTransport: UpstreamTransport = media ?? (mediaUpstream == "embedded"
            ? EmbeddedMediaTransport() : LiveTransport(template: mediaUpstream, contact: options.contact, client: client!))
        share = ShareService(api: api, media: api.upstream.sharing(transport: mediaTransport, deadline: ShareService.Settings().imageTimeout))
        if share.typesetters == nil {
            Logger(level: options.logLevel).warning("share cards are off: no Noto Sans in the font directories", [("directories", FontCatalog.directories.joined(separator: " "))])
        }
        // The wikis' own variants, from a live upstream (the embedded default goes by the table).
        variantsTask = options.wikiVariants && !(chosen is EmbeddedTransport)
            ? Self.learnVariants(api: api, lang: options.readingListsEdition, logger: Logger(level: options.logLevel)) : nil
        register()
    }

    /// The wikis' own list of variants, learned at start-up (a variant a wiki adds is accepted without a release) and
    /// again daily; until it answers, and when it cannot, the built-in table (`LanguageCode.variants`) stands.
    static func learnVariants(api: WikimediaClient, lang: LanguageCode, logger: Logger) -> Task<Void, Never> {
        Task.detached {
            while !Task.isCancelled {
                var wait: UInt64 = 600
                if let listed = try? await api.languageVariants(lang: lang) {
                    let learned = LearnedVariants.shared.learn(listed)
                    if !learned.isEmpty { logger.info("language variants learned from the wikis", [("variants", learned.joined(separator: ","))]) }
                    wait = 86_400
                }
                try? await Task.sleep(nanoseconds: wait * 1_000_000_000)
            }
        }
    }

    /// An article's share card as a PNG at scale 2 (`lede share-card`).
    public func shareCard(lang: String, title: String, text: String? = nil) async throws -> [UInt8] {
        guard let code = LanguageCode(lang) else { throw LanguageCode.unsupportedProblem(lang) }
        return try await share.card(lang: code, title: title, selection: text, scale: 2, format: .png).identity
    }

    /// What Lede calls its problems and the server's metrics (the server knows no app): `urn:lede:problem:<slug>`,
    /// `lede_http_*`.
    public static let naming = ServerConfiguration.Naming(problemTypeBase: "urn:lede:problem:", metricPrefix: "lede_http_")

    /// The server for these options, with upstream and cache counters in `/metrics`.
    public func makeServer(logger: Logger) -> HTTPServer {
        var configuration = options.server
        configuration.naming = LedeApp.naming
        configuration.clients.verifier = WikimediaCredentialCheck(api: api, lang: options.readingListsEdition)
        let server = HTTPServer(configuration: configuration, router: router, logger: logger, localizer: ProblemWords())
        let api = self.api
        let client = self.client
        server.metrics.addCollector { api.metrics.render(cache: api.cache.snapshot) + api.guards.render() + (client?.metrics.render(prefix: "lede_upstream_") ?? "") }
        return server
    }

    private func register() {
        router.get("/") { _ in .response(.prepared(LedeApp.banner)) }
        router.get("/languages") { _ in .response(.prepared(LedeApp.languages)) }
        ContentRoutes.register(on: router, api: api, random: random, responses: responses)
        FeedRoutes.register(on: router, service: feed)
        ReferencesRoutes.register(on: router, api: api, responses: responses)
        ArticleRoutes.register(on: router, api: api, responses: responses, timeout: options.sectionTimeout, upstreamTimeout: options.upstreamTimeout,
                               anonymousEdits: options.anonymousEdits)
        NotificationRoutes.register(on: router, api: api, hub: notifications)
        SavedRoutes.register(on: router, service: saved)
        OfflineRoutes.register(on: router, service: OfflineService(api: api, responses: responses, saved: saved))
        EditRoutes.register(on: router, api: api, settings: EditRoutes.Settings(editTimeout: options.editTimeout, anonymousEdits: options.anonymousEdits))
        ShareRoutes.register(on: router, service: share, publicURL: options.publicURL)
        PlacesRoutes.register(on: router, places: options.places)
        AppLinks.register(on: router, links: options.appLinks)
        AnimalRoutes.register(on: router, responses: responses)
        GalleryRoutes.register(on: router, reddit: reddit, responses: responses)
        if options.benchRoutes { BenchRoutes.register(on: router) }
    }

    static let banner = PreparedBody(contentType: "application/json", bytes: Array("""
    {"service":"lede","description":"Backend-for-frontend for Wikipedia-style mobile apps","health":"/healthz","readiness":"/readyz","metrics":"/metrics","languages":"/languages"}
    """.utf8))

    static let languages: PreparedBody = {
        let codes = LanguageCode.all.sorted().map { "\"\($0)\"" }.joined(separator: ",")
        let embedded = EmbeddedTransport.languages.map { "\"\($0)\"" }.joined(separator: ",")
        // Each edition written in more than one script, and the variants a reader may pick (`lang=zh-tw`).
        let variants = LanguageCode.variants.keys.sorted().map { edition in
            "\"\(edition)\":[" + LanguageCode.variants[edition]!.map { "\"\($0)\"" }.joined(separator: ",") + "]"
        }.joined(separator: ",")
        return PreparedBody(contentType: "application/json",
                            bytes: Array("{\"count\":\(LanguageCode.all.count),\"languages\":[\(codes)],\"variants\":{\(variants)},\"embedded\":[\(embedded)]}".utf8),
                            headers: ["Cache-Control": "public, max-age=86400"])
    }()
}

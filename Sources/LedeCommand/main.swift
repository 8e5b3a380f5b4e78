import Foundation
import HTTPServer
import Lede
import HTTPCore

// Before anything else, while this is the only thread: SIGTERM/SIGINT stay pending until the server reads them.
HTTPServer.blockTerminationSignals()
var arguments = Array(CommandLine.arguments.dropFirst())
// `lede healthcheck [flags]`: probe a running server's /healthz on loopback (the container HEALTHCHECK).
let healthcheck = arguments.first == "healthcheck"
if healthcheck { arguments.removeFirst() }
// `lede share-card TITLE FILE [LANG] [flags]`: draw an article's share card (PNG, scale 2) into FILE, from the upstream
// the flags name (the embedded default without them) — the README's card is made so.
var shareCard: (title: String, file: String, lang: String)?
if arguments.first == "share-card" {
    guard arguments.count >= 3 else {
        FileHandle.standardError.write(Data("usage: lede share-card TITLE FILE [LANG] [flags]\n".utf8))
        exit(2)
    }
    let lang = arguments.count > 3 && !arguments[3].hasPrefix("-") ? arguments[3] : "en"
    shareCard = (arguments[1], arguments[2], lang)
    arguments.removeFirst(lang == "en" && !(arguments.count > 3 && arguments[3] == "en") ? 3 : 4)
}

var options: Options
do {
    options = try Options.parse(arguments, environment: ProcessInfo.processInfo.environment)
    if !healthcheck && !options.showHelp { try options.loadFiles() }
} catch {
    FileHandle.standardError.write(Data("lede: \(error is LocationsFileError ? "--locations " : "")\(error)\n".utf8))
    exit(2)
}
if options.showHelp {
    print(Options.helpText, terminator: "")
    exit(0)
}
if healthcheck {
    exit(HealthCheck.run(port: options.server.port))
}
StandardOutput.useFullBuffering(size: 1 << 16)
let logger = Logger(level: options.logLevel)
let app: LedeApp
do {
    app = try LedeApp(options: options)
} catch {
    FileHandle.standardError.write(Data("lede: upstream client: \(error)\n".utf8))
    exit(2)
}
if let shareCard {
    do {
        let bytes = try await app.shareCard(lang: shareCard.lang, title: shareCard.title)
        try Data(bytes).write(to: URL(fileURLWithPath: shareCard.file))
        print("lede: \(shareCard.file): \(bytes.count) bytes")
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("lede share-card: \(error)\n".utf8))
        exit(1)
    }
}
let server = app.makeServer(logger: logger)
logger.info("upstream", [("upstream", options.upstream), ("timeout", "\(options.upstreamTimeout)")])
for warning in options.warnings { logger.warning(warning.message, warning.fields) }
do {
    try server.start()
} catch {
    logger.error("cannot start", [("error", "\(error)")])
    exit(1)
}
// After start: a signal that came earlier has waited, pending, and begins the drain now.
server.installSignalHandlers()
server.waitUntilStopped()
exit(0)

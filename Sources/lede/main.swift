import Foundation
import HTTPServer
import Lede

// Before anything else, while this is the only thread: SIGTERM/SIGINT stay pending until the server reads them.
HTTPServer.blockTerminationSignals()
var arguments = Array(CommandLine.arguments.dropFirst())
// `lede healthcheck [flags]`: probe a running server's /healthz on loopback (the container HEALTHCHECK).
let healthcheck = arguments.first == "healthcheck"
if healthcheck { arguments.removeFirst() }

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
let server = app.makeServer(logger: logger)
logger.info("upstream", [("upstream", options.upstream), ("timeout", "\(options.upstreamTimeout)")])
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

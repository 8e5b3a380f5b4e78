import Foundation
import HTTPServer
import Lede

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
setvbuf(stdout, nil, _IOFBF, 1 << 16)
let logger = Logger(level: options.logLevel)
let app = LedeApp(options: options)
let server = app.makeServer(logger: logger)
logger.info("upstream", [("upstream", options.upstream), ("timeout", "\(options.upstreamTimeout)")])
server.installSignalHandlers()
do {
    try server.start()
} catch {
    logger.error("cannot start", [("error", "\(error)")])
    exit(1)
}
server.waitUntilStopped()
exit(0)

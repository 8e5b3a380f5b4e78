import XCTest
import HTTPServer
@testable import Lede
@testable import LedeBasics
@testable import Wikimedia
@testable import WikimediaEmbedded
@testable import HTTPCore

final class OptionsTests: XCTestCase {
    func testDefaults() throws {
        let o = try Options.parse([], environment: [:])
        XCTAssertEqual(o.server.host, "0.0.0.0")
        XCTAssertEqual(o.server.port, 8080)
        XCTAssertEqual(o.server.loops, ServerConfiguration.coreCount)
        XCTAssertEqual(o.server.timeouts.header, 10)
        XCTAssertEqual(o.server.timeouts.idle, 60)
        XCTAssertEqual(o.server.timeouts.drain, 10)
        XCTAssertEqual(o.server.limits.maxConnections, 10_000)
        XCTAssertEqual(o.server.limits.maxBody, 1 << 20)
        XCTAssertEqual(o.logLevel, .info)
        XCTAssertTrue(o.server.accessLog)
        XCTAssertFalse(o.benchRoutes)
    }

    func testFlagsWinOverEnvironment() throws {
        let o = try Options.parse(["--port", "9000", "--idle-timeout=5", "--access-log", "off"],
                                  environment: ["LEDE_PORT": "7000", "LEDE_MAX_BODY": "1024", "LEDE_LOG_LEVEL": "debug"])
        XCTAssertEqual(o.server.port, 9000)
        XCTAssertEqual(o.server.timeouts.idle, 5)
        XCTAssertEqual(o.server.limits.maxBody, 1024)
        XCTAssertEqual(o.logLevel, .debug)
        XCTAssertFalse(o.server.accessLog)
    }

    func testStreamFlags() throws {
        let d = try Options.parse([], environment: [:]).server.streams
        XCTAssertEqual(d.maxStreams, 10_000)
        XCTAssertEqual(d.heartbeat, 25)
        XCTAssertEqual(d.stallTimeout, 30)
        XCTAssertEqual(d.highWater, 65_536)
        let o = try Options.parse(["--max-streams", "5", "--stream-heartbeat", "2.5", "--stream-stall-timeout=4", "--stream-buffer", "8192"], environment: [:])
        XCTAssertEqual(o.server.streams.maxStreams, 5)
        XCTAssertEqual(o.server.streams.heartbeat, 2.5)
        XCTAssertEqual(o.server.streams.stallTimeout, 4)
        XCTAssertEqual(o.server.streams.highWater, 8192)
        XCTAssertEqual(o.server.streams.lowWater, 2048)
        XCTAssertThrowsError(try Options.parse(["--stream-buffer", "10"], environment: [:]))
        XCTAssertThrowsError(try Options.parse(["--stream-heartbeat", "0"], environment: [:]))
    }

    func testEveryFlagHasAnEnvironmentFallbackAndHelp() throws {
        for f in Options.flags {
            XCTAssertTrue(f.environment.hasPrefix("LEDE_"))
            XCTAssertTrue(Options.helpText.contains("--\(f.name)"))
            XCTAssertTrue(Options.helpText.contains(f.environment))
        }
        for name in ["host", "port", "loops", "header-timeout", "idle-timeout", "drain-timeout", "max-connections", "max-body", "log-level", "access-log"] {
            XCTAssertTrue(Options.flags.contains { $0.name == name }, name)
        }
    }

    func testBadValuesAreRefusedWithAClearMessage() {
        let bad: [[String]] = [["--port", "70000"], ["--port", "x"], ["--loops", "0"], ["--idle-timeout", "-1"],
                               ["--access-log", "file"], ["--log-level", "loud"], ["--nope", "1"], ["--port"], ["stray"]]
        for args in bad {
            XCTAssertThrowsError(try Options.parse(args, environment: [:]), "\(args)") { error in
                XCTAssertFalse("\(error)".isEmpty)
            }
        }
        XCTAssertThrowsError(try Options.parse([], environment: ["LEDE_PORT": "abc"])) { error in
            XCTAssertTrue("\(error)".contains("LEDE_PORT"))
        }
    }
}

final class HealthCheckTests: XCTestCase {
    func testHealthCheckSucceedsAgainstARunningServerAndFailsWithout() throws {
        var config = ServerConfiguration()
        config.host = "127.0.0.1"; config.port = 0; config.loops = 1; config.accessLog = false
        var options = Options(); options.server = config
        let server = try LedeApp(options: options).makeServer(logger: Logger(level: .off))
        try server.start()
        XCTAssertEqual(HealthCheck.run(port: server.port), 0)
        let port = server.port
        server.shutdown(); server.waitUntilStopped()
        XCTAssertEqual(HealthCheck.run(port: port), 1)
    }
}

final class UpstreamOptionsTests: XCTestCase {
    func testUpstreamFlags() throws {
        let d = try Options.parse([], environment: [:])
        XCTAssertEqual(d.upstream, "embedded")
        XCTAssertEqual(d.upstreamTimeout, 2)
        let o = try Options.parse(["--upstream", "https://{lang}.wikipedia.org", "--contact", "ops@example.org", "--upstream-timeout", "0.5",
                                   "--cache-max-entries", "50", "--stale-if-error", "0"], environment: ["LEDE_CACHE_MAX_BYTES": "2048"])
        XCTAssertEqual(o.upstream, "https://{lang}.wikipedia.org")
        XCTAssertEqual(o.contact, "ops@example.org")
        XCTAssertEqual(o.upstreamTimeout, 0.5)
        XCTAssertEqual(o.cacheLimits.maxEntries, 50)
        XCTAssertEqual(o.cacheLimits.maxBytes, 2048)
        XCTAssertEqual(o.cacheLimits.staleIfError, 0)
        XCTAssertThrowsError(try Options.parse(["--upstream", "https://en.wikipedia.org"], environment: [:]), "needs {lang}")
        XCTAssertThrowsError(try Options.parse(["--upstream", "ftp://{lang}.x"], environment: [:]))
    }

    func testALiveUpstreamWithThePlaceholderContactIsWarnedAbout() throws {
        XCTAssertTrue(try Options.parse([], environment: [:]).warnings.isEmpty, "the embedded default calls no one")
        let live = try Options.parse(["--upstream", "https://{lang}.wikipedia.org"], environment: [:])
        XCTAssertEqual(live.warnings.count, 1)
        XCTAssertTrue(live.warnings[0].message.contains("--contact"))
        XCTAssertTrue(live.warnings[0].fields.contains { $0.1.contains("User-Agent_policy") })
        let named = try Options.parse(["--upstream", "https://{lang}.wikipedia.org"], environment: ["LEDE_CONTACT": "ops@example.org"])
        XCTAssertTrue(named.warnings.isEmpty)
    }
}

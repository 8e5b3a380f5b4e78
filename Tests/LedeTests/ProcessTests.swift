import Foundation
import Glibc
import TestSupport
import XCTest

/// The real `lede` binary as a child process: signals, exit status, stdout/stderr, resource limits.
final class ProcessTests: XCTestCase {
    struct Child {
        let process: Process
        let stdout: Pipe
        let stderr: Pipe
        let port: Int
    }

    static var binary: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("lede")
    }

    /// Starts `lede` on an ephemeral loopback port (optionally under `ulimit -n`), returns once it listens.
    func launch(_ args: [String], fileLimit: Int? = nil) throws -> Child {
        let p = Process()
        let out = Pipe(), err = Pipe()
        p.standardOutput = out; p.standardError = err
        let all = ["--host", "127.0.0.1", "--port", "0", "--log-level", "info"] + args
        if let fileLimit {
            p.executableURL = URL(fileURLWithPath: "/bin/sh")
            p.arguments = ["-c", "ulimit -n \(fileLimit) && exec \"$0\" \"$@\"", Self.binary.path] + all
        } else {
            p.executableURL = Self.binary
            p.arguments = all
        }
        try p.run()
        // The first stderr line is the JSON "listening" log with the bound port.
        var buffer = Data()
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            guard let chunk = Self.read(err, timeout: deadline.timeIntervalSinceNow) else { break }
            buffer.append(chunk)
            if let line = String(data: buffer, encoding: .utf8)?.split(separator: "\n").first(where: { $0.contains("listening") }),
               let obj = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
               let port = Int(obj["port"] as? String ?? "") {
                return Child(process: p, stdout: out, stderr: err, port: port)
            }
        }
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        throw NSError(domain: "lede did not start: \(String(decoding: buffer, as: UTF8.self))", code: 1)
    }

    /// What the pipe has within `timeout` seconds: nil at end of file or when nothing came in time.
    static func read(_ pipe: Pipe, timeout: Double) -> Data? {
        let fd = pipe.fileHandleForReading.fileDescriptor
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, Int32(max(0, timeout) * 1000)) == 1 else { return nil }
        var chunk = [UInt8](repeating: 0, count: 4096)
        let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        return n > 0 ? Data(chunk[0..<n]) : nil
    }

    /// Waits for the child to exit, at most `timeout` seconds. A child still running then is killed, and the
    /// test fails with what it printed. Returns whether it exited by itself.
    @discardableResult
    static func waitForExit(_ p: Process, stderr: Pipe? = nil, timeout: Double = 15, file: StaticString = #filePath, line: UInt = #line) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while p.isRunning && Date() < deadline { usleep(5_000) }
        if !p.isRunning { return true }
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        let printed = stderr.map { String(decoding: $0.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) } ?? ""
        XCTFail("the child did not exit within \(timeout) s and was killed; it printed:\n\(printed)", file: file, line: line)
        return false
    }

    /// The status of one request on a fresh connection, or nil when nothing answered.
    func status(_ port: Int, _ text: String) -> Int? { (try? TestHTTPResponse(port: port, request: text))?.status }

    func testSIGTERMDrainsAndExitsZero() throws {
        let child = try launch([])
        XCTAssertEqual(status(child.port, "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"), 200)
        kill(child.process.processIdentifier, SIGTERM)
        guard Self.waitForExit(child.process, stderr: child.stderr) else { return }
        XCTAssertEqual(child.process.terminationStatus, 0)
        let log = String(decoding: child.stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertTrue(log.contains("draining"), log)
        XCTAssertTrue(log.contains("\"stopped\""), log)
    }

    /// SIGTERM with event streams open: each is told to reconnect (a `retry:` hint), its body ends properly, and the
    /// process exits 0 well within the drain timeout; a plain stream open at the same time is cut by the deadline.
    func testSIGTERMEndsOpenEventStreamsWithARetryHintAndExitsZero() throws {
        let child = try launch(["--bench-routes", "on", "--drain-timeout", "2"])
        var streams: [RawClient] = []
        for _ in 0..<3 {
            let c = try RawClient(port: child.port)
            c.send("GET /_bench/events HTTP/1.1\r\nHost: t\r\n\r\n")
            XCTAssertEqual(c.readHead()?.header("Content-Type"), "text/event-stream; charset=utf-8")
            streams.append(c)
        }
        // A broadcast reaches every stream.
        let sent = try TestHTTPResponse(port: child.port, request: "POST /_bench/broadcast HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello")
        XCTAssertEqual(String(decoding: sent.body, as: UTF8.self), "{\"subscribers\":3}")
        for c in streams { XCTAssertEqual(c.readChunk().map { String(decoding: $0, as: UTF8.self) }, "event: broadcast\ndata: hello\n\n") }
        let started = Date()
        kill(child.process.processIdentifier, SIGTERM)
        for c in streams {
            let hint = c.readChunk().map { String(decoding: $0, as: UTF8.self) } ?? "nothing"
            XCTAssertTrue(hint.hasPrefix("retry: "), hint)
            XCTAssertEqual(c.readChunk(), [], "the body ends with its last chunk")
            XCTAssertTrue(c.closedByPeer())
        }
        streams.removeAll()   // the clients close too, as an EventSource does on the end of its stream
        guard Self.waitForExit(child.process, stderr: child.stderr) else { return }
        XCTAssertEqual(child.process.terminationStatus, 0)
        XCTAssertLessThan(Date().timeIntervalSince(started), 1.5, "no stream held the drain")
    }

    /// The benchmark's event route: `count` tick events every `interval` ms, ids counting on from Last-Event-ID.
    func testBenchEventsTickAndResumeFromLastEventID() throws {
        let child = try launch(["--bench-routes", "on"])
        defer { kill(child.process.processIdentifier, SIGKILL); child.process.waitUntilExit() }
        let c = try RawClient(port: child.port)
        c.send("GET /_bench/events?interval=20&count=2&size=3 HTTP/1.1\r\nHost: t\r\nLast-Event-ID: 40\r\n\r\n")
        XCTAssertEqual(c.readHead()?.status, 200)
        XCTAssertEqual(c.readChunk().map { String(decoding: $0, as: UTF8.self) }, "event: tick\nid: 41\ndata: xxx\n\n")
        XCTAssertEqual(c.readChunk().map { String(decoding: $0, as: UTF8.self) }, "event: tick\nid: 42\ndata: xxx\n\n")
        XCTAssertEqual(c.readChunk(), [])
        let metrics = try TestHTTPResponse(port: child.port, request: "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n")
        let text = String(decoding: metrics.body, as: UTF8.self)
        XCTAssertTrue(text.contains("lede_http_streams_total 1\n"), text)
        XCTAssertTrue(text.contains("lede_http_streams_open 0\n"), text)
    }

    /// Whether the process's main thread has SIGTERM blocked (`SigBlk` in /proc): from then on the server
    /// handles the signal, whenever it comes. A mask only ever gains SIGTERM, so what was seen stays true.
    static func blocksSIGTERM(_ pid: Int32) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigBlk:") }),
              let mask = UInt64(line.dropFirst("SigBlk:".count).trimmingCharacters(in: .whitespaces), radix: 16) else { return false }
        return mask & (1 << (UInt64(SIGTERM) - 1)) != 0
    }

    /// SIGTERM at random moments from start to ready and after, to 100 fresh servers: every one that had
    /// installed its handling (SIGTERM blocked in its main thread, the first statement of `main`) exits 0 after
    /// draining; none keeps running. One signalled earlier still, while the dynamic loader runs, can only die
    /// of it (the default action) and must not have started listening.
    func testSIGTERMAtAnyMomentIsNeverLost() throws {
        // How long a start takes here, to spread the signals over before and after ready.
        let t0 = Date()
        let probe = try launch(["--access-log", "off", "--loops", "1"])
        let ready = Date().timeIntervalSince(t0)
        kill(probe.process.processIdentifier, SIGTERM)
        guard Self.waitForExit(probe.process, stderr: probe.stderr) else { return }
        var rng = SystemRandomNumberGenerator()
        var handled = 0, beforeMain = 0
        for i in 0..<100 {
            let p = Process()
            let out = Pipe(), err = Pipe()
            p.standardOutput = out; p.standardError = err
            p.executableURL = Self.binary
            p.arguments = ["--host", "127.0.0.1", "--port", "0", "--loops", "1", "--access-log", "off", "--log-level", "info"]
            try p.run()
            usleep(UInt32(Double.random(in: 0...(1.5 * ready), using: &rng) * 1_000_000))
            let installed = Self.blocksSIGTERM(p.processIdentifier)
            kill(p.processIdentifier, SIGTERM)
            guard Self.waitForExit(p, stderr: err, timeout: 15) else { return }
            let log = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            if installed {
                handled += 1
                XCTAssertEqual(p.terminationReason, .exit, "server \(i) had installed its handling:\n\(log)")
                XCTAssertEqual(p.terminationStatus, 0, "server \(i) had installed its handling:\n\(log)")
                XCTAssertTrue(log.contains("listening") && log.contains("\"stopped\""), "server \(i) did not start and drain:\n\(log)")
            } else if p.terminationReason == .uncaughtSignal {
                XCTAssertEqual(p.terminationStatus, SIGTERM, "server \(i)")
                XCTAssertFalse(log.contains("listening"), "server \(i) died of SIGTERM after it started listening:\n\(log)")
                beforeMain += 1
            } else {
                // Blocked between the look and the signal: handled like the others.
                XCTAssertEqual(p.terminationStatus, 0, "server \(i) exited \(p.terminationStatus):\n\(log)")
                handled += 1
            }
        }
        print("SIGTERM storm: \(handled) of 100 had installed their handling and exited 0 after draining; \(beforeMain) were signalled while the loader ran (start to ready: \(Int(ready * 1000)) ms)")
        XCTAssertGreaterThanOrEqual(handled, 20, "most signals land after main has begun")
    }

    func testAccessLogIsOneJSONLinePerRequestWithoutQueryOrAuthorization() throws {
        let child = try launch([])
        _ = status(child.port, "GET /healthz?token=s3cret HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer hunter2\r\nX-Request-ID: qa-1\r\nConnection: close\r\n\r\n")
        _ = status(child.port, "GET /missing HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        kill(child.process.processIdentifier, SIGTERM)
        guard Self.waitForExit(child.process, stderr: child.stderr) else { return }
        let out = String(decoding: child.stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let lines = out.split(separator: "\n")
        XCTAssertEqual(lines.count, 2, out)
        XCTAssertFalse(out.contains("s3cret")); XCTAssertFalse(out.contains("hunter2")); XCTAssertFalse(out.contains("Bearer"))
        // Each loop writes its own lines: two connections may land on two loops, so the order is not the requests'.
        let entries = try lines.map { try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        let first = try XCTUnwrap(entries.first { $0["path"] as? String == "/healthz" }, out)
        XCTAssertEqual(first["route"] as? String, "/healthz")
        XCTAssertEqual(first["path"] as? String, "/healthz")
        XCTAssertEqual(first["status"] as? Int, 200)
        XCTAssertEqual(first["request_id"] as? String, "qa-1")
        XCTAssertNotNil(first["duration_us"] as? Int); XCTAssertNotNil(first["bytes"] as? Int); XCTAssertNotNil(first["time"] as? String)
        XCTAssertEqual(first["method"] as? String, "GET")
        let second = try XCTUnwrap(entries.first { $0["path"] as? String == "/missing" }, out)
        XCTAssertEqual(second["status"] as? Int, 404)
    }

    func testAccessLogOffWritesNothing() throws {
        let child = try launch(["--access-log", "off"])
        _ = status(child.port, "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        kill(child.process.processIdentifier, SIGINT)
        guard Self.waitForExit(child.process, stderr: child.stderr) else { return }
        XCTAssertEqual(child.process.terminationStatus, 0)
        XCTAssertTrue(child.stdout.fileHandleForReading.readDataToEndOfFile().isEmpty)
    }

    /// Out of file descriptors: extra connections are refused with 503, the loop does not spin, and once
    /// descriptors are free again the server serves as before.
    func testDescriptorExhaustionIsSurvivedWithoutSpinning() throws {
        let child = try launch(["--access-log", "off", "--loops", "1"], fileLimit: 48)
        let pid = child.process.processIdentifier
        var held: [Int32] = []
        var refused = 0, served = 0
        for _ in 0..<80 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var tv = timeval(tv_sec: 3, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET); addr.sin_port = UInt16(child.port).bigEndian; addr.sin_addr.s_addr = inet_addr("127.0.0.1")
            _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            let req = Array("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n".utf8)
            _ = req.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            var chunk = [UInt8](repeating: 0, count: 512)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            let text = n > 0 ? String(decoding: chunk[0..<n], as: UTF8.self) : ""
            if text.hasPrefix("HTTP/1.1 200") { served += 1 } else if text.hasPrefix("HTTP/1.1 503") { refused += 1 }
            held.append(fd)
        }
        XCTAssertGreaterThan(served, 10)
        XCTAssertGreaterThan(refused, 10, "connections past the descriptor limit get 503")
        XCTAssertEqual(served + refused, 80)
        // CPU used over one second while still at the limit: a spinning loop would burn ~1 s.
        func cpuTicks() -> Int {
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
            return fields.count > 13 ? (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0) : 0
        }
        let before = cpuTicks()
        Thread.sleep(forTimeInterval: 1)
        XCTAssertLessThan(cpuTicks() - before, 30, "the loop must not spin at the descriptor limit")
        for fd in held { close(fd) }
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertEqual(status(child.port, "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"), 200)
        kill(pid, SIGTERM)
        guard Self.waitForExit(child.process, stderr: child.stderr) else { return }
        XCTAssertEqual(child.process.terminationStatus, 0)
    }
}

final class LocationsFileProcessTests: XCTestCase {
    func testABadLocationsFileStopsStartUpNamingFileAndEntry() throws {
        let path = NSTemporaryDirectory() + "lede-bad-locations-\(getpid()).json"
        try Data(#"[{"name":"Ok","lat":1,"long":2},{"name":"Bad","lat":95,"long":2}]"#.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let p = Process()
        p.executableURL = ProcessTests.binary
        p.arguments = ["--port", "0", "--locations", path]
        let err = Pipe(); p.standardError = err; p.standardOutput = Pipe()
        try p.run()
        guard ProcessTests.waitForExit(p, stderr: err) else { return }
        XCTAssertEqual(p.terminationStatus, 2)
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertTrue(message.contains(path), message)
        XCTAssertTrue(message.contains("entry 1"), message)
    }
}

import Foundation
import Glibc

/// Certificates made for the test with the openssl command (a private CA, a good server certificate, one for
/// another host, one from an unknown CA, one that expired in 2020), and a TLS server in Python's `ssl`.
public final class TLSFixtures: @unchecked Sendable {   // @unchecked: set up once, then only read.
    public let dir: String

    static let script = """
    set -e
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 3 -subj "/CN=Lede Test CA" 2>/dev/null
    openssl req -x509 -newkey rsa:2048 -nodes -keyout other-ca.key -out other-ca.pem -days 3 -subj "/CN=Someone Else" 2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > good.ext
    printf 'subjectAltName=DNS:other.example\\n' > wrong.ext
    openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/CN=localhost" 2>/dev/null
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out good.pem -days 3 -extfile good.ext 2>/dev/null
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out wrong.pem -days 3 -extfile wrong.ext 2>/dev/null
    openssl x509 -req -in server.csr -CA other-ca.pem -CAkey other-ca.key -CAcreateserial -out unknown.pem -days 3 -extfile good.ext 2>/dev/null
    printf '[ca]\\ndefault_ca=d\\n[d]\\ndatabase=index.txt\\nnew_certs_dir=.\\nserial=serial\\ndefault_md=sha256\\npolicy=p\\ncopy_extensions=copy\\n[p]\\ncommonName=supplied\\n' > ca.cnf
    : > index.txt; echo 01 > serial
    openssl ca -batch -config ca.cnf -cert ca.pem -keyfile ca.key -in server.csr -out expired.pem -startdate 20200101000000Z -enddate 20200102000000Z -extfile good.ext -notext 2>/dev/null
    """

    /// A TLS server in Python: `serve(c)` (one of the two below) on a thread per accepted connection; prints its port.
    static func pythonServer(_ serve: String) -> String {
        """
        import socket, ssl, sys, threading
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(sys.argv[1], sys.argv[2])
        s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
        body = open(sys.argv[3], "rb").read() if len(sys.argv) > 3 else b'{"ok":true}'
        head = b"HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\nContent-Length: %d\\r\\n\\r\\n" % len(body)
        print(s.getsockname()[1], flush=True)
        \(serve)
        def guarded(c):
            try: serve(c)
            except Exception: pass
            finally: c.close()
        while True:
            c, _ = s.accept()
            threading.Thread(target=guarded, args=(c,), daemon=True).start()
        """
    }

    /// Answers every request on a kept-alive TLS connection with a JSON body (argv[3], or a small one).
    static let server = pythonServer("""
        def serve(c):
            c = ctx.wrap_socket(c, server_side=True)
            f = c.makefile("rb")
            while True:
                line = f.readline()
                if not line: return
                while f.readline() not in (b"\\r\\n", b""): pass
                c.sendall(head + body)
        """)

    /// Like `server`, but each answer is followed by a second TLS record the client did not ask for ("STRAY"), and
    /// both go out in one send (TLS driven through memory buffers): they reach the client together, so a client that
    /// reads ahead holds the stray record in its TLS library, where epoll cannot see it.
    static let strayServer = pythonServer("""
        def serve(c):
            inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
            t = ctx.wrap_bio(inc, out, server_side=True)
            def flush():
                data = out.read()
                if data: c.sendall(data)
            def feed():
                d = c.recv(65536)
                if not d: raise EOFError
                inc.write(d)
            while True:
                try: t.do_handshake(); break
                except ssl.SSLWantReadError: flush(); feed()
            flush()
            buf = b""
            while True:
                while b"\\r\\n\\r\\n" not in buf:
                    try: buf += t.read(65536)
                    except ssl.SSLWantReadError: flush(); feed()
                buf = buf.split(b"\\r\\n\\r\\n", 1)[1]
                t.write(head + body)
                t.write(b"STRAY")
                flush()
        """)

    public static let shared: TLSFixtures? = try? TLSFixtures()

    init() throws {
        dir = NSTemporaryDirectory() + "lede-tls-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = ["-c", Self.script]
        p.currentDirectoryURL = URL(fileURLWithPath: dir)
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw NSError(domain: "openssl could not make the test certificates", code: 1) }
    }

    public func path(_ name: String) -> String { dir + "/" + name }

    /// A TLS server with `cert` on an ephemeral loopback port, answering every request with the bytes of
    /// `bodyFile` (or `{"ok":true}`); stopped by the returned closure.
    /// `strayRecords`: the server of `strayServer` instead (its answers are always `{"ok":true}`).
    public func startServer(cert: String, bodyFile: String? = nil, strayRecords: Bool = false) throws -> (port: Int, stop: () -> Void) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", "-c", strayRecords ? Self.strayServer : Self.server, path(cert), path("server.key")] + (bodyFile.map { [$0] } ?? [])
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let fd = out.fileHandleForReading.fileDescriptor
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        var line = [UInt8]()
        var byte: UInt8 = 0
        while poll(&pfd, 1, 5_000) == 1, read(fd, &byte, 1) == 1, byte != 10 { line.append(byte) }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else { kill(p.processIdentifier, SIGKILL); throw NSError(domain: "the TLS server did not start", code: 2) }
        // SIGKILL: a child spawned from a Dispatch worker thread inherits its blocked SIGTERM.
        return (port, { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() })
    }
}

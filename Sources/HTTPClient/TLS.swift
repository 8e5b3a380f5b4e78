import COpenSSL
import Glibc

/// The client's OpenSSL context: TLS 1.2+, the system trust store, plus `--upstream-ca` when given.
final class TLSContext: @unchecked Sendable {   // @unchecked: the SSL_CTX is set up once and only read afterwards (OpenSSL allows that from many threads).
    let ctx: OpaquePointer

    init(caFile: String?) throws(HTTPClientError) {
        guard let ctx = lede_tls_context(caFile) else {
            throw .tls(caFile.map { "cannot load the CA file \($0): \(TLSSession.lastError())" } ?? "cannot set up TLS: \(TLSSession.lastError())")
        }
        self.ctx = ctx
    }

    deinit { SSL_CTX_free(ctx) }
}

/// One connection's TLS session, driven by the event loop: every call says what it needs next.
final class TLSSession {
    enum Step { case done(Int), wantRead, wantWrite, closed, failed(HTTPClientError) }

    private let ssl: OpaquePointer

    init(context: TLSContext, fd: Int32, host: String) throws(HTTPClientError) {
        let isIP = host.contains(":") || host.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || $0 == 46 }
        guard let s = lede_tls_session(context.ctx, fd, host, isIP ? 1 : 0) else { throw .tls("cannot start TLS: \(Self.lastError())") }
        ssl = s
    }

    deinit { SSL_free(ssl) }

    static func lastError() -> String {
        var buf = [CChar](repeating: 0, count: 256)
        lede_tls_last_error(&buf, 256)
        return String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func step(_ rc: Int32, handshake: Bool) -> Step {
        switch Int(rc) {
        case Int(LEDE_TLS_WANT_READ): return .wantRead
        case Int(LEDE_TLS_WANT_WRITE): return .wantWrite
        case Int(LEDE_TLS_CLOSED): return .closed
        case Int(LEDE_TLS_ERROR):
            if handshake {
                let verify = lede_tls_verify_result(ssl)
                if verify != 0 /* X509_V_OK */ {
                    return .failed(.certificate("the certificate could not be verified: \(String(cString: lede_tls_verify_text(verify)))"))
                }
                return .failed(.tls("the TLS handshake failed: \(Self.lastError())"))
            }
            return .failed(.reset)
        default: return .done(Int(rc))
        }
    }

    func handshake() -> Step { step(lede_tls_handshake(ssl), handshake: true) }

    func read(_ buffer: UnsafeMutableRawBufferPointer) -> Step {
        step(lede_tls_read(ssl, buffer.baseAddress, Int32(min(buffer.count, Int(Int32.max)))), handshake: false)
    }

    /// Bytes read from the socket ahead and not yet handed out (read ahead is on): epoll will not report them.
    var hasPending: Bool { lede_tls_has_pending(ssl) == 1 }

    func write(_ bytes: UnsafeRawBufferPointer) -> Step {
        step(lede_tls_write(ssl, bytes.baseAddress, Int32(min(bytes.count, Int(Int32.max)))), handshake: false)
    }
}

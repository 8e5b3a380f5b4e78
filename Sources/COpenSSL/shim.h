// OpenSSL for Lede's HTTP client: the few calls it makes, wrapped so Swift sees functions, not macros.
#ifndef LEDE_COPENSSL_SHIM_H
#define LEDE_COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <string.h>

/// A client context: TLS 1.2 or newer, peer verification against the system trust store plus `ca_file`
/// (may be NULL). NULL on failure.
static inline SSL_CTX *lede_tls_context(const char *ca_file) {
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) return NULL;
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    // Read ahead: one read(2) takes what the socket holds (a record's header and body together, and any record
    // after it) instead of a read for each record's 5-byte header and another for its body. Bytes read ahead stay in
    // the library, where epoll cannot see them: the client asks `lede_tls_has_pending` before it waits.
    SSL_CTX_set_read_ahead(ctx, 1);
    if (SSL_CTX_set_default_verify_paths(ctx) != 1) { SSL_CTX_free(ctx); return NULL; }
    if (ca_file && SSL_CTX_load_verify_locations(ctx, ca_file, NULL) != 1) { SSL_CTX_free(ctx); return NULL; }
    return ctx;
}

/// A session on a connected socket: SNI (for names) and host-name or IP verification.
static inline SSL *lede_tls_session(SSL_CTX *ctx, int fd, const char *host, int host_is_ip) {
    SSL *s = SSL_new(ctx);
    if (!s) return NULL;
    if (SSL_set_fd(s, fd) != 1) { SSL_free(s); return NULL; }
    if (host_is_ip) {
        if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(s), host) != 1) { SSL_free(s); return NULL; }
    } else {
        if (SSL_set_tlsext_host_name(s, host) != 1 || SSL_set1_host(s, host) != 1) { SSL_free(s); return NULL; }
    }
    SSL_set_connect_state(s);
    return s;
}

/// What an I/O call came to: > 0 bytes (read/write), or one of these.
enum { LEDE_TLS_DONE = 1, LEDE_TLS_WANT_READ = -2, LEDE_TLS_WANT_WRITE = -3, LEDE_TLS_CLOSED = 0, LEDE_TLS_ERROR = -1 };

static inline int lede_tls_status(SSL *s, int rc) {
    int e = SSL_get_error(s, rc);
    if (e == SSL_ERROR_WANT_READ) return LEDE_TLS_WANT_READ;
    if (e == SSL_ERROR_WANT_WRITE) return LEDE_TLS_WANT_WRITE;
    if (e == SSL_ERROR_ZERO_RETURN) return LEDE_TLS_CLOSED;
    return LEDE_TLS_ERROR;
}

static inline int lede_tls_handshake(SSL *s) {
    ERR_clear_error();
    int rc = SSL_do_handshake(s);
    return rc == 1 ? LEDE_TLS_DONE : lede_tls_status(s, rc);
}

static inline int lede_tls_read(SSL *s, void *buf, int len) {
    ERR_clear_error();
    int rc = SSL_read(s, buf, len);
    return rc > 0 ? rc : lede_tls_status(s, rc);
}

static inline int lede_tls_write(SSL *s, const void *buf, int len) {
    ERR_clear_error();
    int rc = SSL_write(s, buf, len);
    return rc > 0 ? rc : lede_tls_status(s, rc);
}

/// Whether the session holds bytes it has read from the socket and not yet handed out (whole or partial records).
static inline int lede_tls_has_pending(const SSL *s) { return SSL_has_pending(s); }

/// X509_V_OK (0) when the chain and the name verified.
static inline long lede_tls_verify_result(SSL *s) { return SSL_get_verify_result(s); }
static inline const char *lede_tls_verify_text(long code) { return X509_verify_cert_error_string(code); }

/// The last OpenSSL error as text into buf.
static inline void lede_tls_last_error(char *buf, size_t len) {
    unsigned long e = ERR_peek_last_error();
    if (e == 0) { strncpy(buf, "unknown TLS error", len); buf[len - 1] = 0; return; }
    ERR_error_string_n(e, buf, len);
}

#endif

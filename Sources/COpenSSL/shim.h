// OpenSSL (Debian's libssl-dev): TLS for the framed listener and its clients, HMAC-SHA256 and
// random bytes for webhook signatures and their secrets. Macros Swift cannot
// call (SSL_CTX_set_min_proto_version, SSL_set_tlsext_host_name, SSL_CTX_set_mode, the BIO retry
// flags) and option bits Swift cannot import (SSL_OP_BIT) are wrapped here; so are the socket BIO
// (send with MSG_NOSIGNAL) and the server's ALPN choice, which OpenSSL calls back in C.
#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H
#include <errno.h>
#include <stdint.h>
#include <sys/socket.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

static const uint64_t CSSL_OP_NO_RENEGOTIATION = SSL_OP_NO_RENEGOTIATION;
static const uint64_t CSSL_OP_CIPHER_SERVER_PREFERENCE = SSL_OP_CIPHER_SERVER_PREFERENCE;
static const uint64_t CSSL_OP_NO_COMPRESSION = SSL_OP_NO_COMPRESSION;
static const long CSSL_MODE_ENABLE_PARTIAL_WRITE = SSL_MODE_ENABLE_PARTIAL_WRITE;
static const long CSSL_MODE_ACCEPT_MOVING_WRITE_BUFFER = SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER;
static const long CSSL_MODE_RELEASE_BUFFERS = SSL_MODE_RELEASE_BUFFERS;
static const unsigned long CSSL_XN_FLAG_RFC2253 = XN_FLAG_RFC2253;

static inline int cssl_ctx_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}

static inline long cssl_ctx_set_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_mode(ctx, mode); }

static inline void cssl_ctx_set_read_ahead(SSL_CTX *ctx, int on) { SSL_CTX_set_read_ahead(ctx, on); }

static inline long cssl_ctx_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}

static inline int cssl_set_tlsext_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

static inline long cssl_bio_get_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }

// MARK: The socket BIO

// OpenSSL's own socket BIO writes with write(2), which raises SIGPIPE on a connection the peer
// has reset: this one sends with MSG_NOSIGNAL, like the rest of the transport, so neither the
// server nor a client has to ignore SIGPIPE process-wide. The descriptor is the BIO's data; the
// BIO never closes it (the connection owns it).

static inline int cssl_socket_bio_write(BIO *bio, const char *data, int length) {
    int fd = (int)(intptr_t)BIO_get_data(bio);
    BIO_clear_retry_flags(bio);
    ssize_t n = send(fd, data, (size_t)length, MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) BIO_set_retry_write(bio);
    return (int)n;
}

static inline int cssl_socket_bio_read(BIO *bio, char *data, int length) {
    int fd = (int)(intptr_t)BIO_get_data(bio);
    BIO_clear_retry_flags(bio);
    ssize_t n = recv(fd, data, (size_t)length, 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) BIO_set_retry_read(bio);
    return (int)n;
}

static inline long cssl_socket_bio_ctrl(BIO *bio, int command, long number, void *pointer) {
    (void)bio;
    (void)number;
    (void)pointer;
    switch (command) {
    case BIO_CTRL_FLUSH:
        return 1;
    default:
        return 0;
    }
}

static inline int cssl_socket_bio_create(BIO *bio) {
    BIO_set_init(bio, 1);
    return 1;
}

/// The method of the socket BIO; make it once per process and keep it.
static inline BIO_METHOD *cssl_socket_bio_method(void) {
    BIO_METHOD *method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "mrpc socket");
    if (method == NULL) return NULL;
    BIO_meth_set_write(method, cssl_socket_bio_write);
    BIO_meth_set_read(method, cssl_socket_bio_read);
    BIO_meth_set_ctrl(method, cssl_socket_bio_ctrl);
    BIO_meth_set_create(method, cssl_socket_bio_create);
    return method;
}

/// A socket BIO over `fd` (not closed by the BIO).
static inline BIO *cssl_socket_bio_new(BIO_METHOD *method, int fd) {
    BIO *bio = BIO_new(method);
    if (bio != NULL) BIO_set_data(bio, (void *)(intptr_t)fd);
    return bio;
}

// MARK: ALPN, server side

/// The server's ALPN choice: the first of its protocols (ALPN wire format at `arg`, a length byte
/// then the name, `arg` starting with the list's total length as a byte) that the client offers.
/// A client that offers ALPN without any of them gets the no_application_protocol alert; a client
/// that offers none is not asked (OpenSSL does not call this).
static inline int cssl_alpn_select(SSL *ssl, const unsigned char **out, unsigned char *out_length,
                                   const unsigned char *offered, unsigned int offered_length, void *arg) {
    (void)ssl;
    const unsigned char *list = (const unsigned char *)arg;
    unsigned char *selected = NULL;
    int status = SSL_select_next_proto(&selected, out_length, list + 1, list[0], offered, offered_length);
    if (status != OPENSSL_NPN_NEGOTIATED) return SSL_TLSEXT_ERR_ALERT_FATAL;
    *out = selected;
    return SSL_TLSEXT_ERR_OK;
}

/// Makes the server choose from `list` (see cssl_alpn_select), which must outlive `ctx`.
static inline void cssl_ctx_set_alpn_select(SSL_CTX *ctx, const unsigned char *list) {
    SSL_CTX_set_alpn_select_cb(ctx, cssl_alpn_select, (void *)list);
}
#endif

// libcurl (Debian's libcurl4-openssl-dev, pkg-config libcurl): HTTP(S) client transfers for the
// webhook delivery engine. curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic,
// which Swift cannot call: each argument type the engine passes has a typed wrapper here. The
// response body is discarded by a C write callback that counts what it dropped and stops the
// transfer past a limit, so a receiver cannot keep the delivery thread reading.
#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H
#include <stddef.h>
#include <curl/curl.h>

static const int MRPC_CURL_ERROR_SIZE = CURL_ERROR_SIZE;
static const curl_socket_t MRPC_CURL_SOCKET_BAD = CURL_SOCKET_BAD;

/// The version and features of the libcurl loaded (CURLVERSION_NOW is a macro).
static inline curl_version_info_data *mrpc_curl_version_info(void) { return curl_version_info(CURLVERSION_NOW); }

static inline CURLcode mrpc_curl_setopt_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode mrpc_curl_setopt_ptr(CURL *easy, CURLoption option, void *value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode mrpc_curl_setopt_str(CURL *easy, CURLoption option, const char *value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode mrpc_curl_setopt_off_t(CURL *easy, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode mrpc_curl_setopt_slist(CURL *easy, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode mrpc_curl_setopt_blob(CURL *easy, CURLoption option, struct curl_blob *value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode mrpc_curl_setopt_opensocket(
    CURL *easy, curl_opensocket_callback callback, void *context) {
    CURLcode code = curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, callback);
    if (code != CURLE_OK) return code;
    return curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, context);
}

static inline CURLcode mrpc_curl_getinfo_long(CURL *easy, CURLINFO info, long *value) {
    return curl_easy_getinfo(easy, info, value);
}

static inline CURLcode mrpc_curl_getinfo_off_t(CURL *easy, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(easy, info, value);
}

static inline CURLMcode mrpc_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

/// Where a transfer's response body goes: counted and dropped, up to `limit` bytes.
typedef struct {
    size_t received;
    size_t limit;
} mrpc_curl_body_sink;

static size_t mrpc_curl_discard_body(char *data, size_t size, size_t count, void *context) {
    (void)data;
    mrpc_curl_body_sink *sink = (mrpc_curl_body_sink *)context;
    size_t length = size * count;
    sink->received += length;
    // Returning less than given makes curl end the transfer with CURLE_WRITE_ERROR.
    return sink->received > sink->limit ? 0 : length;
}

static inline CURLcode mrpc_curl_setopt_discard_body(CURL *easy, mrpc_curl_body_sink *sink) {
    CURLcode code = curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, mrpc_curl_discard_body);
    if (code != CURLE_OK) return code;
    return curl_easy_setopt(easy, CURLOPT_WRITEDATA, sink);
}

#endif

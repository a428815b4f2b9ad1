// The fan-out benchmark's client: one program that subscribes N subscribers to one
// peer, sends it triggers on a connection of its own, and times the receipts.
//
//   fanout-client mrpc|redis|nats|floor --port P [options]   one run; prints one JSON object
//   fanout-client setup --port P --api-key K [--subscribers N]
//                                   our server only: users u0…u(N-1), owner, group with them all
//
// Peers and what "subscribe", "confirmed", "trigger" and "receipt" are for each:
//   mrpc   our server (docs/PROTOCOL.md): a connection sends the preface and HELLO, then one
//          Subscribe CALL per subscriber on behalf of member u<i> (stream ids 1, 2, 3 …); a
//          subscription is confirmed by its stream's first MESSAGE, `started`
//          (SubscribeResponse field 2); the trigger is an UpdateGroup of the group as its owner
//          (acknowledged by its REPLY, after the durable commit); a receipt is one MESSAGE frame.
//   redis  SUBSCRIBE <group> (confirmed by its reply); trigger PUBLISH (acknowledged by its
//          integer reply); a receipt is one `message` push. One subscription per connection:
//          Redis keeps one subscription per channel and connection, so it has no gateway shape.
//   nats   CONNECT, then SUB <group> <sid> per subscriber and a PING (NATS handles a connection's
//          commands in order, so the PONG confirms every SUB before it); trigger PUB followed by a
//          PING (its PONG acknowledges the PUB); a receipt is one MSG.
//   floor  bench/fanout/floor-server.c: 'S' subscribes (acknowledged by 'A'); 'T' on the trigger
//          connection (which says 'H' first) makes the floor write the payload once to every
//          subscriber, then 'K'; a receipt is payload-bytes bytes. One subscription per connection.
//
// A run: open the subscriber connections (and finish each one's handshake), then send every
// subscription request at once and time until the last is confirmed ("live"); then rounds (the
// warm-up ones not reported): one trigger, the time from its send to the first and to the last
// subscriber's receipt; then a sustained phase: triggers with up to --inflight unacknowledged and
// at most --max-lag triggers not yet received by the average subscriber (so no peer cuts a
// subscriber as a slow consumer), counting every receipt of every subscriber per second. With a
// list for --inflight, each value first gets a --probe-seconds phase and the best is kept.
// Receipt times are taken when epoll_wait returns the socket as readable (the bytes were there
// by then). Everything runs on one thread: epoll, non-blocking sockets, libc only.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

// MARK: - basics

__attribute__((noreturn, format(printf, 1, 2))) static void die(const char *format, ...) {
    va_list args;
    va_start(args, format);
    fprintf(stderr, "fanout-client: ");
    vfprintf(stderr, format, args);
    fprintf(stderr, "\n");
    va_end(args);
    exit(1);
}

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static double ms(uint64_t ns) { return (double)ns / 1e6; }

/// A growable byte buffer.
struct buf {
    uint8_t *p;
    size_t len, cap;
};

static void buf_reserve(struct buf *b, size_t extra) {
    if (b->len + extra <= b->cap) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra) cap *= 2;
    b->p = realloc(b->p, cap);
    if (!b->p) die("out of memory");
    b->cap = cap;
}

static void buf_put(struct buf *b, const void *data, size_t n) {
    buf_reserve(b, n);
    memcpy(b->p + b->len, data, n);
    b->len += n;
}

static void buf_str(struct buf *b, const char *s) { buf_put(b, s, strlen(s)); }

static void buf_printf(struct buf *b, const char *format, ...) {
    va_list args;
    va_start(args, format);
    int n = vsnprintf(NULL, 0, format, args);
    va_end(args);
    buf_reserve(b, (size_t)n + 1);
    va_start(args, format);
    vsnprintf((char *)b->p + b->len, (size_t)n + 1, format, args);
    va_end(args);
    b->len += (size_t)n;
}

static void buf_consume(struct buf *b, size_t n) {
    memmove(b->p, b->p + n, b->len - n);
    b->len -= n;
}

static void buf_free(struct buf *b) {
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

static void put_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint32_t get_be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

// MARK: - protobuf, the few fields needed

static void pb_varint(struct buf *b, uint64_t v) {
    uint8_t bytes[10];
    size_t n = 0;
    do {
        bytes[n++] = (uint8_t)((v & 0x7F) | (v > 0x7F ? 0x80 : 0));
        v >>= 7;
    } while (v);
    buf_put(b, bytes, n);
}

static void pb_bytes(struct buf *b, unsigned field, const void *data, size_t n) {
    pb_varint(b, (uint64_t)field << 3 | 2);
    pb_varint(b, n);
    buf_put(b, data, n);
}

static void pb_string(struct buf *b, unsigned field, const char *s) { pb_bytes(b, field, s, strlen(s)); }

static void pb_uint(struct buf *b, unsigned field, uint64_t v) {
    pb_varint(b, (uint64_t)field << 3);
    pb_varint(b, v);
}

/// One field of a protobuf message: its number, and its value (varint) or bytes (length-delimited).
struct pb_field {
    unsigned number, wire;
    uint64_t value;
    const uint8_t *data;
    size_t len;
};

static int pb_read_varint(const uint8_t *p, size_t n, size_t *at, uint64_t *out) {
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64 && *at < n; shift += 7) {
        uint8_t byte = p[(*at)++];
        v |= (uint64_t)(byte & 0x7F) << shift;
        if (!(byte & 0x80)) {
            *out = v;
            return 1;
        }
    }
    return 0;
}

/// Reads the next field at *at; 1 when one was read, 0 at the end, -1 on malformed input.
static int pb_next(const uint8_t *p, size_t n, size_t *at, struct pb_field *f) {
    if (*at >= n) return 0;
    uint64_t tag;
    if (!pb_read_varint(p, n, at, &tag)) return -1;
    f->number = (unsigned)(tag >> 3);
    f->wire = (unsigned)(tag & 7);
    f->data = NULL;
    f->len = 0;
    f->value = 0;
    switch (f->wire) {
    case 0: return pb_read_varint(p, n, at, &f->value) ? 1 : -1;
    case 1: if (n - *at < 8) return -1; *at += 8; return 1;
    case 5: if (n - *at < 4) return -1; *at += 4; return 1;
    case 2:
        if (!pb_read_varint(p, n, at, &f->value) || f->value > n - *at) return -1;
        f->data = p + *at;
        f->len = (size_t)f->value;
        *at += f->len;
        return 1;
    default: return -1;
    }
}

/// mrpc.v1.Status as text: "code N ERR_… message {k=v, …}".
static void describe_status(const uint8_t *p, size_t n, char *out, size_t size) {
    uint64_t code = 0;
    struct buf error = {0}, message = {0}, details = {0};
    size_t at = 0;
    struct pb_field f;
    while (pb_next(p, n, &at, &f) == 1) {
        if (f.number == 1 && f.wire == 0) code = f.value;
        else if (f.number == 2 && f.wire == 2) buf_put(&error, f.data, f.len);
        else if (f.number == 3 && f.wire == 2) buf_put(&message, f.data, f.len);
        else if (f.number == 4 && f.wire == 2) {
            size_t entry_at = 0;
            struct pb_field e;
            buf_str(&details, details.len ? ", " : "");
            while (pb_next(f.data, f.len, &entry_at, &e) == 1) {
                if (e.wire != 2) continue;
                if (e.number == 2) buf_str(&details, "=");
                buf_put(&details, e.data, e.len);
            }
        }
    }
    snprintf(out, size, "code %llu %.*s: %.*s {%.*s}", (unsigned long long)code, (int)error.len,
             error.p ? (char *)error.p : "", (int)message.len, message.p ? (char *)message.p : "",
             (int)details.len, details.p ? (char *)details.p : "");
    buf_free(&error);
    buf_free(&message);
    buf_free(&details);
}

// MARK: - our protocol's frames

enum {
    FRAME_HELLO = 1, FRAME_HELLO_ACK = 2, FRAME_CALL = 3, FRAME_REPLY = 4, FRAME_MESSAGE = 5,
    FRAME_TRAILERS = 6, FRAME_PING = 8, FRAME_PONG = 9, FRAME_GOAWAY = 10,
};

static void frame_header(struct buf *b, uint32_t length, uint8_t type, uint32_t stream) {
    uint8_t h[12] = {0};
    put_be32(h, length);
    h[4] = type;
    put_be32(h + 8, stream);
    buf_put(b, h, sizeof h);
}

static void mrpc_preface_and_hello(struct buf *b, const char *api_key) {
    static const uint8_t preface[8] = {'M', 'R', 'P', 'C', 0, 1, 0, 0};
    buf_put(b, preface, sizeof preface);
    struct buf hello = {0};
    pb_string(&hello, 1, api_key);
    pb_string(&hello, 2, "fanout-client");
    frame_header(b, (uint32_t)hello.len, FRAME_HELLO, 0);
    buf_put(b, hello.p, hello.len);
    buf_free(&hello);
}

/// A CALL frame: u32 header length, CallHeader{method, on_behalf_of}, the request.
static void mrpc_call(struct buf *b, uint32_t stream, const char *method, const char *on_behalf_of,
                      const struct buf *request) {
    struct buf header = {0};
    pb_string(&header, 1, method);
    if (on_behalf_of && *on_behalf_of) pb_string(&header, 3, on_behalf_of);
    size_t body = request ? request->len : 0;
    frame_header(b, (uint32_t)(4 + header.len + body), FRAME_CALL, stream);
    uint8_t len[4];
    put_be32(len, (uint32_t)header.len);
    buf_put(b, len, 4);
    buf_put(b, header.p, header.len);
    if (body) buf_put(b, request->p, body);
    buf_free(&header);
}

#define METHOD(name) "/moderation.v1.Moderation/" name

// MARK: - settings

enum peer { PEER_MRPC, PEER_REDIS, PEER_NATS, PEER_FLOOR };
static const char *peer_names[] = {"mrpc", "redis", "nats", "floor"};

static struct {
    enum peer peer;
    int setup;
    const char *host;
    int port;
    int subscribers;
    int connections;  // 0: one per subscriber
    int rounds, warmup;
    double seconds, probe_seconds;
    int inflight[16], inflight_count;
    int max_lag;
    int payload_bytes;
    const char *api_key, *group, *owner, *uid_prefix;
    int server_pid;
    double timeout_s;
} opt = {
    .host = "127.0.0.1", .subscribers = 10000, .rounds = 7, .warmup = 2, .seconds = 5,
    .probe_seconds = 2, .inflight = {16}, .inflight_count = 1, .max_lag = 64, .payload_bytes = 142,
    .group = "fan", .owner = "owner", .uid_prefix = "u", .timeout_s = 60,
};

// MARK: - connections and subscriptions

enum role { ROLE_SUBSCRIBER, ROLE_TRIGGER };

struct conn {
    int fd;
    enum role role;
    int first_sub, sub_count;  // subscriptions carried (subscriber connections)
    int ready;                 // handshake done: HELLO_ACK, NATS's first PONG, the floor's 'A'
    uint64_t pongs;            // NATS: PONGs received
    uint64_t floor_bytes;      // floor: payload bytes received after the ack, modulo payload_bytes
    struct buf in, out;
    int want_out;              // EPOLLOUT registered
};

struct sub {
    uint32_t received;  // events received
    uint8_t confirmed;
};

static int epfd;
static struct conn *conns;  // subscriber connections, then the trigger connection
static int conn_count;
static struct conn *trigger;
static struct sub *subs;
static int ready_count, confirmed_count;
static uint64_t g_now;          // when the current epoll_wait returned
static uint64_t last_confirm;   // when the last subscription was confirmed
static uint64_t deliveries;     // every receipt of every subscriber
static uint64_t receipt_bytes;  // bytes of those receipts on the wire (framing included)
static uint64_t acked, sent_triggers;
static uint8_t scratch[1 << 18];

// Round measurement.
static uint32_t round_target;
static int round_remaining;
static uint64_t round_first, round_last;

// Sustained measurement.
static int counting;
static uint64_t count_start, count_end, counted;
static uint64_t per_second[3600];

static void on_confirm(int index) {
    if (subs[index].confirmed) die("subscription %d confirmed twice", index);
    subs[index].confirmed = 1;
    confirmed_count++;
    last_confirm = g_now;
}

static void on_receipt(int index, size_t bytes) {
    if (!subs[index].confirmed) die("subscription %d received an event before it was confirmed", index);
    uint32_t received = ++subs[index].received;
    if (received > sent_triggers) die("subscription %d received %u events for %llu triggers", index, received,
                                      (unsigned long long)sent_triggers);
    deliveries++;
    receipt_bytes += bytes;
    if (round_remaining > 0 && received == round_target) {
        if (!round_first) round_first = g_now;
        round_last = g_now;
        round_remaining--;
    }
    if (counting && g_now >= count_start && g_now < count_end) {
        counted++;
        per_second[(g_now - count_start) / 1000000000u]++;
    }
}

static void watch(struct conn *c) {
    struct epoll_event ev = {.events = EPOLLIN | (c->want_out ? EPOLLOUT : 0), .data.ptr = c};
    if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev) != 0) die("epoll_ctl: %s", strerror(errno));
}

static void flush_out(struct conn *c) {
    while (c->out.len) {
        ssize_t n = send(c->fd, c->out.p, c->out.len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) break;
            die("send on connection %ld: %s", (long)(c - conns), strerror(errno));
        }
        buf_consume(&c->out, (size_t)n);
    }
    int want = c->out.len > 0;
    if (want != c->want_out) {
        c->want_out = want;
        watch(c);
    }
}

/// Queues bytes and sends what the socket takes now.
static void conn_send(struct conn *c, const void *data, size_t n) {
    buf_put(&c->out, data, n);
    flush_out(c);
}

static int open_socket(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) die("socket: %s (raise the open-file limit: ulimit -n)", strerror(errno));
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)opt.port)};
    if (inet_pton(AF_INET, opt.host, &addr.sin_addr) != 1) die("bad host '%s'", opt.host);
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0)
        die("connect to %s:%d: %s", opt.host, opt.port, strerror(errno));
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

static void add_conn(struct conn *c, enum role role) {
    c->fd = open_socket();
    c->role = role;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev) != 0) die("epoll_ctl: %s", strerror(errno));
}

static void mark_ready(struct conn *c) {
    if (c->ready) return;
    c->ready = 1;
    if (c->role == ROLE_SUBSCRIBER) ready_count++;
}

static const char *conn_name(const struct conn *c, char *out, size_t size) {
    if (c->role == ROLE_TRIGGER) snprintf(out, size, "the trigger connection");
    else snprintf(out, size, "subscriber connection %ld (subscriptions %d…%d)", (long)(c - conns), c->first_sub,
                  c->first_sub + c->sub_count - 1);
    return out;
}

// MARK: - parsers: each consumes whole messages from the start of p and returns the bytes used

static size_t parse_mrpc(struct conn *c, const uint8_t *p, size_t n) {
    size_t at = 0;
    char name[96], status[1024];
    while (n - at >= 12) {
        uint32_t length = get_be32(p + at);
        uint8_t type = p[at + 4], flags = p[at + 5];
        uint32_t stream = get_be32(p + at + 8);
        if (n - at - 12 < length) break;
        const uint8_t *payload = p + at + 12;
        switch (type) {
        case FRAME_HELLO_ACK: mark_ready(c); break;
        case FRAME_MESSAGE: {
            if (c->role != ROLE_SUBSCRIBER || stream < 1 || (int)stream > c->sub_count)
                die("%s: MESSAGE on unexpected stream %u", conn_name(c, name, sizeof name), stream);
            if (flags & 1) die("%s: a compressed MESSAGE, though no compression was asked for",
                               conn_name(c, name, sizeof name));
            int index = c->first_sub + (int)stream - 1;
            if (!subs[index].confirmed) {
                // SubscribeResponse field 2 (started), length-delimited: tag 0x12.
                if (length == 0 || payload[0] != 0x12)
                    die("subscription %d (%s%d): the stream's first message is not `started` (first byte 0x%02x)",
                        index, opt.uid_prefix, index, length ? payload[0] : 0);
                on_confirm(index);
            } else {
                if (length == 0 || payload[0] != 0x0A)
                    die("subscription %d: a message after `started` without an action", index);
                on_receipt(index, 12 + length);
            }
            break;
        }
        case FRAME_REPLY: {
            if (length < 4 || get_be32(payload) > length - 4)
                die("%s: malformed REPLY on stream %u", conn_name(c, name, sizeof name), stream);
            uint32_t status_len = get_be32(payload);
            if (c->role == ROLE_SUBSCRIBER) {
                describe_status(payload + 4, status_len, status, sizeof status);
                die("subscription %d (%s%d) was refused: REPLY %s", c->first_sub + (int)stream - 1,
                    opt.uid_prefix, c->first_sub + (int)stream - 1, status);
            }
            if (status_len > 0) {
                describe_status(payload + 4, status_len, status, sizeof status);
                uint64_t code = 0;
                size_t sat = 0;
                struct pb_field f;
                while (pb_next(payload + 4, status_len, &sat, &f) == 1)
                    if (f.number == 1 && f.wire == 0) code = f.value;
                if (code != 0) die("trigger call on stream %u failed: %s", stream, status);
            }
            acked++;
            break;
        }
        case FRAME_TRAILERS:
            describe_status(payload, length, status, sizeof status);
            die("subscription %d (%s%d): the stream ended: TRAILERS %s", c->first_sub + (int)stream - 1,
                opt.uid_prefix, c->first_sub + (int)stream - 1, status);
        case FRAME_GOAWAY: {
            size_t gat = 0;
            struct pb_field f;
            status[0] = 0;
            while (pb_next(payload, length, &gat, &f) == 1)
                if (f.number == 2 && f.wire == 2) describe_status(f.data, f.len, status, sizeof status);
            die("%s: GOAWAY %s", conn_name(c, name, sizeof name), status);
        }
        case FRAME_PING: {
            struct buf pong = {0};
            frame_header(&pong, length, FRAME_PONG, 0);
            buf_put(&pong, payload, length);
            conn_send(c, pong.p, pong.len);
            buf_free(&pong);
            break;
        }
        default:
            if (type < 0x80) die("%s: unexpected frame type %u", conn_name(c, name, sizeof name), type);
        }
        at += 12 + length;
    }
    return at;
}

/// Reads a RESP integer line "<digits>\r\n" from p[*at]; 1 when complete, 0 when more is needed.
static int resp_line_int(const uint8_t *p, size_t n, size_t *at, long *out) {
    const uint8_t *end = memchr(p + *at, '\n', n - *at);
    if (!end) return 0;
    *out = strtol((const char *)p + *at, NULL, 10);
    *at = (size_t)(end - p) + 1;
    return 1;
}

static size_t parse_redis(struct conn *c, const uint8_t *p, size_t n) {
    size_t used = 0;
    char name[96];
    while (used < n) {
        size_t at = used;
        long value;
        uint8_t kind = p[at++];
        if (kind == '-') {
            const uint8_t *end = memchr(p + used, '\n', n - used);
            if (!end) break;
            die("%s: Redis error %.*s", conn_name(c, name, sizeof name), (int)(end - p - used), p + used);
        }
        if (kind == ':') {  // PUBLISH's reply: the subscribers reached
            if (!resp_line_int(p, n, &at, &value)) break;
            if (c->role != ROLE_TRIGGER) die("%s: unexpected integer reply", conn_name(c, name, sizeof name));
            if (value != opt.subscribers)
                die("PUBLISH reached %ld subscribers, not %d", value, opt.subscribers);
            acked++;
            used = at;
            continue;
        }
        if (kind != '*') die("%s: unexpected Redis reply type '%c'", conn_name(c, name, sizeof name), kind);
        long count;
        if (!resp_line_int(p, n, &at, &count)) break;
        const uint8_t *first = NULL;
        long first_len = 0;
        int complete = 1;
        for (long i = 0; i < count && complete; i++) {
            if (at >= n) { complete = 0; break; }
            uint8_t element = p[at++];
            if (!resp_line_int(p, n, &at, &value)) { complete = 0; break; }
            if (element == '$') {
                if (n - at < (size_t)value + 2) { complete = 0; break; }
                if (i == 0) { first = p + at; first_len = value; }
                at += (size_t)value + 2;
            } else if (element != ':') {
                die("%s: unexpected element type '%c' in a push", conn_name(c, name, sizeof name), element);
            }
        }
        if (!complete) break;
        if (first_len == 9 && memcmp(first, "subscribe", 9) == 0) on_confirm(c->first_sub);
        else if (first_len == 7 && memcmp(first, "message", 7) == 0) on_receipt(c->first_sub, at - used);
        else die("%s: unexpected push '%.*s'", conn_name(c, name, sizeof name), (int)first_len, first);
        used = at;
    }
    return used;
}

static size_t parse_nats(struct conn *c, const uint8_t *p, size_t n) {
    size_t used = 0;
    char name[96];
    while (used < n) {
        const uint8_t *end = memchr(p + used, '\n', n - used);
        if (!end) break;
        size_t line = (size_t)(end - p) + 1;  // first byte after the line
        const char *s = (const char *)p + used;
        if (strncmp(s, "MSG ", 4) == 0) {
            // MSG <subject> <sid> [reply-to] <#bytes>\r\n<payload>\r\n
            const char *tokens[5];
            int count = 0;
            for (size_t i = used; i < line - 2 && count < 5;) {
                while (i < line - 2 && p[i] == ' ') i++;
                if (i == line - 2) break;
                tokens[count] = (const char *)p + i;
                while (i < line - 2 && p[i] != ' ') i++;
                count++;
            }
            if (count < 4) die("%s: malformed MSG line", conn_name(c, name, sizeof name));
            unsigned long sid = strtoul(tokens[2], NULL, 10);
            unsigned long bytes = strtoul(tokens[count - 1], NULL, 10);
            if (n - line < bytes + 2) break;
            if (sid < 1 || sid > (unsigned long)c->sub_count)
                die("%s: MSG for unknown sid %lu", conn_name(c, name, sizeof name), sid);
            on_receipt(c->first_sub + (int)sid - 1, line + bytes + 2 - used);
            used = line + bytes + 2;
            continue;
        }
        if (strncmp(s, "PONG", 4) == 0) {
            c->pongs++;
            if (c->role == ROLE_TRIGGER) {
                if (c->pongs == 1) mark_ready(c);
                else acked++;
            } else if (c->pongs == 1) {
                mark_ready(c);
            } else if (c->pongs == 2) {
                for (int i = 0; i < c->sub_count; i++) on_confirm(c->first_sub + i);
            }
        } else if (strncmp(s, "PING", 4) == 0) {
            conn_send(c, "PONG\r\n", 6);
        } else if (strncmp(s, "-ERR", 4) == 0) {
            die("%s: NATS error %.*s", conn_name(c, name, sizeof name), (int)(line - used), s);
        } else if (strncmp(s, "INFO", 4) != 0 && strncmp(s, "+OK", 3) != 0) {
            die("%s: unexpected NATS line %.*s", conn_name(c, name, sizeof name), (int)(line - used), s);
        }
        used = line;
    }
    return used;
}

static size_t parse_floor(struct conn *c, const uint8_t *p, size_t n) {
    size_t at = 0;
    char name[96];
    if (c->role == ROLE_TRIGGER) {
        for (; at < n; at++) {
            if (p[at] == 'A') mark_ready(c);
            else if (p[at] == 'K') acked++;
            else die("the floor's trigger connection sent 0x%02x", p[at]);
        }
        return at;
    }
    if (!subs[c->first_sub].confirmed && n > 0) {
        if (p[0] != 'A')
            die("%s: the floor's first byte is 0x%02x, not its ack", conn_name(c, name, sizeof name), p[0]);
        on_confirm(c->first_sub);
        at = 1;
    }
    c->floor_bytes += n - at;
    while (c->floor_bytes >= (uint64_t)opt.payload_bytes) {
        c->floor_bytes -= (uint64_t)opt.payload_bytes;
        on_receipt(c->first_sub, (size_t)opt.payload_bytes);
    }
    return n;
}

static size_t parse(struct conn *c, const uint8_t *p, size_t n) {
    switch (opt.peer) {
    case PEER_MRPC: return parse_mrpc(c, p, n);
    case PEER_REDIS: return parse_redis(c, p, n);
    case PEER_NATS: return parse_nats(c, p, n);
    case PEER_FLOOR: return parse_floor(c, p, n);
    }
    return 0;
}

static void read_conn(struct conn *c) {
    char name[96];
    for (;;) {
        ssize_t n = read(c->fd, scratch, sizeof scratch);
        if (n == 0) die("%s: closed by the peer", conn_name(c, name, sizeof name));
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) return;
            die("%s: read: %s", conn_name(c, name, sizeof name), strerror(errno));
        }
        if (c->in.len == 0) {
            size_t used = parse(c, scratch, (size_t)n);
            if (used < (size_t)n) buf_put(&c->in, scratch + used, (size_t)n - used);
        } else {
            buf_put(&c->in, scratch, (size_t)n);
            buf_consume(&c->in, parse(c, c->in.p, c->in.len));
        }
        if ((size_t)n < sizeof scratch) return;
    }
}

/// One epoll_wait and the work it returns.
static void pump(int timeout_ms) {
    static struct epoll_event events[1024];
    int n = epoll_wait(epfd, events, 1024, timeout_ms);
    if (n < 0) {
        if (errno == EINTR) return;
        die("epoll_wait: %s", strerror(errno));
    }
    g_now = now_ns();
    for (int i = 0; i < n; i++) {
        struct conn *c = events[i].data.ptr;
        if (events[i].events & EPOLLOUT) flush_out(c);
        if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) read_conn(c);
    }
}

/// What is missing, for a timeout's message: triggers unacknowledged, subscriptions unconfirmed,
/// and the first subscriptions behind the others (with their connection).
static void describe_missing(char *out, size_t size) {
    int behind = 0, shown = 0, unconfirmed = 0;
    uint32_t most = 0;
    for (int i = 0; i < opt.subscribers; i++) most = subs[i].received > most ? subs[i].received : most;
    size_t at = (size_t)snprintf(out, size, "%llu of %llu triggers acknowledged; %llu receipts in all",
                                 (unsigned long long)acked, (unsigned long long)sent_triggers,
                                 (unsigned long long)deliveries);
    for (int c = 0; c < conn_count; c++) {
        for (int k = 0; k < conns[c].sub_count; k++) {
            int i = conns[c].first_sub + k;
            if (!subs[i].confirmed) unconfirmed++;
            if (subs[i].received == most) continue;
            behind++;
            if (shown++ < 5 && at < size)
                at += (size_t)snprintf(out + at, size - at,
                                       "; subscription %d (%s%d, connection %d, stream/sid %d) has %u of %u", i,
                                       opt.uid_prefix, i, c, k + 1, subs[i].received, most);
        }
    }
    if (at < size)
        snprintf(out + at, size - at, "; %d subscriptions behind the others, %d unconfirmed", behind, unconfirmed);
}

/// Pumps until done() or the timeout, which fails the run with what.
static void pump_until(int (*done)(void), const char *what) {
    uint64_t deadline = now_ns() + (uint64_t)(opt.timeout_s * 1e9);
    while (!done()) {
        if (now_ns() > deadline) {
            char missing[2048] = "";
            if (subs) describe_missing(missing, sizeof missing);
            die("timed out after %.0f s waiting for %s: %s", opt.timeout_s, what, missing);
        }
        pump(10);
    }
}

// MARK: - per-peer requests

static char uid_buf[64];
static const char *uid(int index) {
    snprintf(uid_buf, sizeof uid_buf, "%s%d", opt.uid_prefix, index);
    return uid_buf;
}

static void send_handshake(struct conn *c) {
    switch (opt.peer) {
    case PEER_MRPC: {
        struct buf b = {0};
        mrpc_preface_and_hello(&b, opt.api_key);
        conn_send(c, b.p, b.len);
        buf_free(&b);
        break;
    }
    case PEER_NATS: {
        const char *hello = "CONNECT {\"verbose\":false,\"pedantic\":false,\"name\":\"fanout-client\"}\r\nPING\r\n";
        conn_send(c, hello, strlen(hello));
        break;
    }
    case PEER_REDIS: mark_ready(c); break;
    case PEER_FLOOR:
        if (c->role == ROLE_TRIGGER) conn_send(c, "H", 1);
        else mark_ready(c);
        break;
    }
}

/// Every subscription request of a subscriber connection, in one write.
static void send_subscribes(struct conn *c) {
    struct buf b = {0};
    for (int i = 0; i < c->sub_count; i++) {
        int index = c->first_sub + i;
        switch (opt.peer) {
        case PEER_MRPC: mrpc_call(&b, (uint32_t)(i + 1), METHOD("Subscribe"), uid(index), NULL); break;
        case PEER_REDIS:
            buf_printf(&b, "*2\r\n$9\r\nSUBSCRIBE\r\n$%zu\r\n%s\r\n", strlen(opt.group), opt.group);
            break;
        case PEER_NATS: buf_printf(&b, "SUB %s %d\r\n", opt.group, i + 1); break;
        case PEER_FLOOR: buf_str(&b, "S"); break;
        }
    }
    if (opt.peer == PEER_NATS) buf_str(&b, "PING\r\n");
    conn_send(c, b.p, b.len);
    buf_free(&b);
}

static struct buf payload;  // the peers' message body: payload_bytes bytes
static uint32_t next_stream = 1;

static void send_trigger(void) {
    struct buf b = {0};
    sent_triggers++;
    switch (opt.peer) {
    case PEER_MRPC: {
        struct buf request = {0};
        // Unique across runs: an UpdateGroup that changes nothing records no action (SERVICE.md),
        // so a description the group already has would deliver nothing. Fixed width, so every
        // event frame has the same size.
        static uint64_t run_id;
        if (!run_id) run_id = now_ns() ^ ((uint64_t)getpid() << 40);
        char description[64];
        snprintf(description, sizeof description, "fan-out %016llx %08llu", (unsigned long long)run_id,
                 (unsigned long long)sent_triggers);
        pb_string(&request, 1, opt.group);
        pb_string(&request, 4, description);
        mrpc_call(&b, next_stream++, METHOD("UpdateGroup"), opt.owner, &request);
        buf_free(&request);
        break;
    }
    case PEER_REDIS:
        buf_printf(&b, "*3\r\n$7\r\nPUBLISH\r\n$%zu\r\n%s\r\n$%zu\r\n", strlen(opt.group), opt.group, payload.len);
        buf_put(&b, payload.p, payload.len);
        buf_str(&b, "\r\n");
        break;
    case PEER_NATS:
        buf_printf(&b, "PUB %s %zu\r\n", opt.group, payload.len);
        buf_put(&b, payload.p, payload.len);
        buf_str(&b, "\r\nPING\r\n");
        break;
    case PEER_FLOOR: buf_str(&b, "T"); break;
    }
    conn_send(trigger, b.p, b.len);
    buf_free(&b);
}

// MARK: - the run

static int all_ready(void) { return ready_count == conn_count && trigger->ready; }
static int all_confirmed(void) { return confirmed_count == opt.subscribers; }
static int round_done(void) { return round_remaining == 0 && acked == sent_triggers; }
static int all_delivered(void) {
    return acked == sent_triggers && deliveries == sent_triggers * (uint64_t)opt.subscribers;
}

/// CPU time of every thread of the server so far, in seconds (/proc/PID/task/*/schedstat, in
/// nanoseconds: clock-tick counts are too coarse for one round); 0 without --server-pid.
static double server_cpu_seconds(void) {
    if (opt.server_pid <= 0) return 0;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", opt.server_pid);
    DIR *tasks = opendir(path);
    if (!tasks) die("--server-pid %d: %s: %s", opt.server_pid, path, strerror(errno));
    unsigned long long total = 0;
    for (struct dirent *task; (task = readdir(tasks));) {
        if (task->d_name[0] == '.') continue;
        char stat_path[384];
        snprintf(stat_path, sizeof stat_path, "%s/%s/schedstat", path, task->d_name);
        FILE *f = fopen(stat_path, "r");
        if (!f) continue;  // the thread ended meanwhile
        unsigned long long ns = 0;
        if (fscanf(f, "%llu", &ns) == 1) total += ns;
        fclose(f);
    }
    closedir(tasks);
    return (double)total / 1e9;
}

struct phase {
    int inflight;
    double seconds;
    uint64_t triggers, counted;
    double per_s, server_cpu_percent, server_us_per_delivery;
    int seconds_recorded;
    uint64_t per_second[3600];
};

/// Triggers for `seconds` with up to `inflight` unacknowledged and at most max_lag not yet
/// received by the average subscriber; then waits until every subscriber has them all.
static void sustained(struct phase *ph, int inflight, double seconds) {
    uint64_t n = (uint64_t)opt.subscribers;
    uint64_t triggers_before = sent_triggers;
    memset(per_second, 0, sizeof per_second);
    counted = 0;
    double cpu_before = server_cpu_seconds();
    count_start = now_ns();
    count_end = count_start + (uint64_t)(seconds * 1e9);
    counting = 1;
    g_now = count_start;
    while (g_now < count_end) {
        while (sent_triggers - acked < (uint64_t)inflight &&
               sent_triggers * n - deliveries < (uint64_t)opt.max_lag * n)
            send_trigger();
        pump(1);
    }
    double cpu = server_cpu_seconds() - cpu_before;
    counting = 0;
    ph->inflight = inflight;
    ph->seconds = seconds;
    ph->triggers = sent_triggers - triggers_before;
    ph->counted = counted;
    ph->per_s = (double)counted / seconds;
    ph->server_cpu_percent = opt.server_pid > 0 ? cpu / seconds * 100 : -1;
    ph->server_us_per_delivery = opt.server_pid > 0 && counted ? cpu * 1e6 / (double)counted : -1;
    ph->seconds_recorded = (int)seconds + (seconds > (int)seconds);  // the last second may be partial
    memcpy(ph->per_second, per_second, sizeof(uint64_t) * (size_t)ph->seconds_recorded);
    pump_until(all_delivered, "every subscriber to receive every trigger of the sustained phase");
}

static int sorted_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(const double *values, int n) {
    double *copy = malloc(sizeof(double) * (size_t)n);
    memcpy(copy, values, sizeof(double) * (size_t)n);
    qsort(copy, (size_t)n, sizeof(double), sorted_double);
    double m = n % 2 ? copy[n / 2] : (copy[n / 2 - 1] + copy[n / 2]) / 2;
    free(copy);
    return m;
}

static void print_phase(const struct phase *ph) {
    printf("{\"inflight\": %d, \"seconds\": %g, \"triggers\": %llu, \"deliveries\": %llu, \"deliveries_per_s\": %.0f, "
           "\"server_cpu_percent\": %.1f, \"server_us_per_delivery\": %.3f, \"per_second\": [",
           ph->inflight, ph->seconds, (unsigned long long)ph->triggers, (unsigned long long)ph->counted, ph->per_s,
           ph->server_cpu_percent, ph->server_us_per_delivery);
    for (int i = 0; i < ph->seconds_recorded; i++)
        printf("%s%llu", i ? ", " : "", (unsigned long long)ph->per_second[i]);
    printf("]}");
}

static void run(void) {
    int shared = opt.connections > 0;
    int subscriber_conns = shared ? opt.connections : opt.subscribers;
    if (shared && (opt.peer == PEER_REDIS || opt.peer == PEER_FLOOR))
        die("%s has only the one-socket-each shape (--connections is for mrpc and nats)", peer_names[opt.peer]);
    if (shared && opt.connections > opt.subscribers) die("--connections is more than --subscribers");
    conn_count = subscriber_conns;
    conns = calloc((size_t)subscriber_conns + 1, sizeof *conns);
    subs = calloc((size_t)opt.subscribers, sizeof *subs);
    if (!conns || !subs) die("out of memory");
    trigger = &conns[subscriber_conns];
    for (int i = 0, first = 0; i < subscriber_conns; i++) {
        int count = opt.subscribers / subscriber_conns + (i < opt.subscribers % subscriber_conns);
        conns[i].first_sub = first;
        conns[i].sub_count = count;
        first += count;
    }
    payload.len = 0;
    for (int i = 0; i < opt.payload_bytes; i++) buf_put(&payload, &"fanout-payload-0123456789"[i % 25], 1);

    // Connections and handshakes (not timed).
    uint64_t connect_start = now_ns();
    for (int i = 0; i < subscriber_conns; i++) {
        add_conn(&conns[i], ROLE_SUBSCRIBER);
        send_handshake(&conns[i]);
        if (i % 256 == 255) pump(0);
    }
    add_conn(trigger, ROLE_TRIGGER);
    send_handshake(trigger);
    pump_until(all_ready, "the connections' handshakes");
    double connect_ms = ms(now_ns() - connect_start);

    // Live: every subscription request sent at once; the time until the last is confirmed.
    uint64_t live_start = now_ns();
    for (int i = 0; i < subscriber_conns; i++) send_subscribes(&conns[i]);
    pump_until(all_confirmed, "every subscription to be confirmed");
    double live_ms = ms(last_confirm - live_start);

    // Rounds: one trigger, every subscriber's receipt.
    int total_rounds = opt.warmup + opt.rounds;
    double *to_first = calloc((size_t)total_rounds, sizeof(double));
    double *to_last = calloc((size_t)total_rounds, sizeof(double));
    double *spread = calloc((size_t)total_rounds, sizeof(double));
    double *round_cpu = calloc((size_t)total_rounds, sizeof(double));
    for (int r = 0; r < total_rounds; r++) {
        round_target = (uint32_t)sent_triggers + 1;
        round_remaining = opt.subscribers;
        round_first = round_last = 0;
        double cpu_before = server_cpu_seconds();
        uint64_t sent = now_ns();
        send_trigger();
        pump_until(round_done, "a round's trigger to reach every subscriber");
        round_cpu[r] = (server_cpu_seconds() - cpu_before) * 1e3;
        to_first[r] = ms(round_first - sent);
        to_last[r] = ms(round_last - sent);
        spread[r] = ms(round_last - round_first);
        if (deliveries != sent_triggers * (uint64_t)opt.subscribers)
            die("round %d: %llu receipts after %llu triggers to %d subscribers", r, (unsigned long long)deliveries,
                (unsigned long long)sent_triggers, opt.subscribers);
    }
    uint64_t round_bytes = receipt_bytes;
    uint64_t round_receipts = deliveries;

    // Sustained: a probe per in-flight value when there are several, then the measured phase.
    struct phase *probes = calloc((size_t)opt.inflight_count, sizeof *probes);
    int best = opt.inflight[0];
    if (opt.seconds > 0 && opt.inflight_count > 1) {
        double best_rate = -1;
        for (int i = 0; i < opt.inflight_count; i++) {
            sustained(&probes[i], opt.inflight[i], opt.probe_seconds);
            if (probes[i].per_s > best_rate) {
                best_rate = probes[i].per_s;
                best = opt.inflight[i];
            }
        }
    }
    struct phase *main_phase = calloc(1, sizeof *main_phase);
    if (opt.seconds > 0) sustained(main_phase, best, opt.seconds);

    printf("{\"peer\": \"%s\", \"shape\": \"%s\", \"subscribers\": %d, \"connections\": %d, ", peer_names[opt.peer],
           shared ? "gateway" : "one-socket-each", opt.subscribers, subscriber_conns);
    if (opt.peer != PEER_MRPC) printf("\"payload_bytes\": %d, ", opt.payload_bytes);
    printf("\"receipt_bytes\": %.1f, \"connect_ms\": %.1f, \"live_ms\": %.2f, \"warmup_rounds\": %d, \"rounds\": [",
           round_receipts ? (double)round_bytes / (double)round_receipts : 0, connect_ms, live_ms, opt.warmup);
    for (int r = opt.warmup; r < total_rounds; r++)
        printf("%s{\"send_to_first_ms\": %.3f, \"send_to_last_ms\": %.3f, \"first_to_last_ms\": %.3f, "
               "\"server_cpu_ms\": %.3f}",
               r > opt.warmup ? ", " : "", to_first[r], to_last[r], spread[r], opt.server_pid > 0 ? round_cpu[r] : -1);
    printf("], \"median_send_to_last_ms\": %.3f, \"median_first_to_last_ms\": %.3f",
           median(to_last + opt.warmup, opt.rounds), median(spread + opt.warmup, opt.rounds));
    if (opt.seconds > 0) {
        printf(", \"max_lag\": %d, \"sustained\": ", opt.max_lag);
        print_phase(main_phase);
        if (opt.inflight_count > 1) {
            printf(", \"inflight_probe\": [");
            for (int i = 0; i < opt.inflight_count; i++) {
                if (i) printf(", ");
                print_phase(&probes[i]);
            }
            printf("]");
        }
    }
    printf("}\n");
    fflush(stdout);

    // Reset on close: no TIME_WAIT left behind, so runs back to back do not run out of ports.
    struct linger reset = {.l_onoff = 1, .l_linger = 0};
    for (int i = 0; i <= subscriber_conns; i++) {
        setsockopt(conns[i].fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
        close(conns[i].fd);
    }
}

// MARK: - setup of our server

static int setup_caught_up(void) { return acked == sent_triggers; }

/// Sends one call on the trigger connection, keeping at most `window` unanswered.
static void setup_call(const char *method, const char *on_behalf_of, const struct buf *request, int window) {
    while (sent_triggers - acked >= (uint64_t)window) pump(10);
    struct buf b = {0};
    mrpc_call(&b, next_stream++, method, on_behalf_of, request);
    sent_triggers++;
    conn_send(trigger, b.p, b.len);
    buf_free(&b);
}

/// Users owner and u0…u(N-1), the public group with all of them as members (AddMembers ≤ 100 a
/// call). Every call must succeed (a fresh data directory): a failed one ends the program.
static void setup(void) {
    if (!opt.api_key) die("setup needs --api-key");
    conn_count = 0;
    conns = calloc(1, sizeof *conns);
    trigger = &conns[0];
    add_conn(trigger, ROLE_TRIGGER);
    send_handshake(trigger);
    pump_until(all_ready, "HELLO_ACK");
    uint64_t start = now_ns();
    struct buf request = {0};
    pb_string(&request, 1, opt.owner);
    pb_string(&request, 2, "Owner");
    setup_call(METHOD("CreateUser"), NULL, &request, 1);
    for (int i = 0; i < opt.subscribers; i++) {
        char name[80];
        request.len = 0;
        pb_string(&request, 1, uid(i));
        snprintf(name, sizeof name, "User %s", uid(i));
        pb_string(&request, 2, name);
        setup_call(METHOD("CreateUser"), NULL, &request, 512);
    }
    pump_until(setup_caught_up, "CreateUser replies");
    request.len = 0;
    pb_string(&request, 1, opt.group);
    pb_string(&request, 2, "Fan-out");
    pb_uint(&request, 5, 1);  // GROUP_TYPE_PUBLIC
    setup_call(METHOD("CreateGroup"), opt.owner, &request, 1);
    pump_until(setup_caught_up, "CreateGroup's reply");
    for (int first = 0; first < opt.subscribers; first += 100) {
        request.len = 0;
        pb_string(&request, 1, opt.group);
        for (int i = first; i < first + 100 && i < opt.subscribers; i++) {
            struct buf member = {0};
            pb_string(&member, 1, uid(i));
            pb_bytes(&request, 2, member.p, member.len);
            buf_free(&member);
        }
        setup_call(METHOD("AddMembers"), opt.owner, &request, 16);
    }
    pump_until(setup_caught_up, "AddMembers replies");
    buf_free(&request);
    printf("{\"setup\": {\"users\": %d, \"group\": \"%s\", \"calls\": %llu, \"seconds\": %.2f}}\n",
           opt.subscribers + 1, opt.group, (unsigned long long)sent_triggers, ms(now_ns() - start) / 1000);
}

// MARK: - main

static int parse_int(const char *flag, const char *text, int low, int high) {
    char *end;
    long v = strtol(text, &end, 10);
    if (*text == 0 || *end != 0 || v < low || v > high)
        die("%s: '%s' is not an integer in %d…%d", flag, text, low, high);
    return (int)v;
}

static double parse_double(const char *flag, const char *text, double low, double high) {
    char *end;
    double v = strtod(text, &end);
    if (*text == 0 || *end != 0 || v < low || v > high)
        die("%s: '%s' is not a number in %g…%g", flag, text, low, high);
    return v;
}

static void usage(void) {
    fprintf(stderr,
            "usage: fanout-client mrpc|redis|nats|floor --port P [--subscribers N] [--connections C]\n"
            "         [--rounds R] [--warmup W] [--seconds S] [--inflight K[,K…]] [--probe-seconds S]\n"
            "         [--max-lag L] [--payload-bytes B] [--api-key KEY] [--group G] [--owner UID]\n"
            "         [--uid-prefix P] [--server-pid PID] [--timeout S] [--host IP]\n"
            "       fanout-client setup --port P --api-key KEY [--subscribers N] [--group G] [--owner UID]\n");
    exit(2);
}

int main(int argc, char **argv) {
    if (argc < 2) usage();
    const char *mode = argv[1];
    if (strcmp(mode, "setup") == 0) {
        opt.setup = 1;
        opt.peer = PEER_MRPC;
    } else {
        int found = 0;
        for (int i = 0; i < 4; i++)
            if (strcmp(mode, peer_names[i]) == 0) { opt.peer = (enum peer)i; found = 1; }
        if (!found) usage();
    }
    static const struct option options[] = {
        {"port", 1, 0, 'p'}, {"subscribers", 1, 0, 'n'}, {"connections", 1, 0, 'c'}, {"rounds", 1, 0, 'r'},
        {"warmup", 1, 0, 'w'}, {"seconds", 1, 0, 's'}, {"inflight", 1, 0, 'i'}, {"probe-seconds", 1, 0, 'P'},
        {"max-lag", 1, 0, 'l'}, {"payload-bytes", 1, 0, 'b'}, {"api-key", 1, 0, 'k'}, {"group", 1, 0, 'g'},
        {"owner", 1, 0, 'o'}, {"uid-prefix", 1, 0, 'u'}, {"server-pid", 1, 0, 'S'}, {"timeout", 1, 0, 't'},
        {"host", 1, 0, 'h'}, {0, 0, 0, 0},
    };
    int ch;
    optind = 2;
    while ((ch = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (ch) {
        case 'p': opt.port = parse_int("--port", optarg, 1, 65535); break;
        case 'n': opt.subscribers = parse_int("--subscribers", optarg, 1, 1000000); break;
        case 'c': opt.connections = parse_int("--connections", optarg, 1, 1000000); break;
        case 'r': opt.rounds = parse_int("--rounds", optarg, 1, 10000); break;
        case 'w': opt.warmup = parse_int("--warmup", optarg, 0, 10000); break;
        case 's': opt.seconds = parse_double("--seconds", optarg, 0, 3000); break;
        case 'P': opt.probe_seconds = parse_double("--probe-seconds", optarg, 0.1, 3000); break;
        case 'i': {
            opt.inflight_count = 0;
            char *list = strdup(optarg), *save = NULL;
            for (char *item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
                if (opt.inflight_count == 16) die("--inflight: at most 16 values");
                opt.inflight[opt.inflight_count++] = parse_int("--inflight", item, 1, 100000);
            }
            free(list);
            if (opt.inflight_count == 0) die("--inflight: give one value or more, e.g. 8,16,32");
            break;
        }
        case 'l': opt.max_lag = parse_int("--max-lag", optarg, 1, 1000000); break;
        case 'b': opt.payload_bytes = parse_int("--payload-bytes", optarg, 1, 1 << 20); break;
        case 'k': opt.api_key = optarg; break;
        case 'g': opt.group = optarg; break;
        case 'o': opt.owner = optarg; break;
        case 'u': opt.uid_prefix = optarg; break;
        case 'S': opt.server_pid = parse_int("--server-pid", optarg, 1, 1 << 30); break;
        case 't': opt.timeout_s = parse_double("--timeout", optarg, 1, 3600); break;
        case 'h': opt.host = optarg; break;
        default: usage();
        }
    }
    if (optind != argc) usage();
    if (!opt.port) die("--port is required");
    if (opt.peer == PEER_MRPC && !opt.api_key) die("mrpc needs --api-key");
    epfd = epoll_create1(0);
    if (epfd < 0) die("epoll_create1: %s", strerror(errno));
    if (opt.setup) setup();
    else run();
    return 0;
}

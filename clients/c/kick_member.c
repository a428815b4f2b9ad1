/*
 * kick-member: a complete MRPC client in one file of C, on protobuf-c.
 *
 * It connects, sends the preface and HELLO, waits for HELLO_ACK, calls
 * /moderation.v1.Moderation/KickMember once and prints the outcome. Everything it knows about
 * the server comes from proto/ (compiled by protoc-c in the Makefile) and docs/PROTOCOL.md.
 *
 *   usage: kick-member HOST:PORT API_KEY GUID UID [ON_BEHALF_OF]
 *
 * Output (stdout), one line:
 *   ok: kicked UID from GUID (action seq N, members now M)
 *   error: status=7 PERMISSION_DENIED code=ERR_PERMISSION_DENIED message=...
 * Exit status: 0 kicked; 1 the server answered with an error status (REPLY or GOAWAY);
 * 2 bad usage; 3 connection or protocol failure (reason on stderr).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "moderation/v1/moderation.pb-c.h"
#include "mrpc/v1/envelope.pb-c.h"

enum { HELLO = 1, HELLO_ACK = 2, CALL = 3, REPLY = 4, MESSAGE = 5, TRAILERS = 6,
       CANCEL = 7, PING = 8, PONG = 9, GOAWAY = 10 };
enum { FLAG_COMPRESSED = 0x01, HEADER_SIZE = 12, CALL_STREAM_ID = 1 };
#define MAX_PAYLOAD (64u << 20) /* refuse anything larger before reading it */
#define METHOD "/moderation.v1.Moderation/KickMember"

static const char *const status_names[] = {
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
    "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
};

static void die(const char *what) {
    fprintf(stderr, "kick-member: %s\n", what);
    exit(3);
}

static void put_u32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

static uint32_t get_u32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static void write_all(int fd, const uint8_t *data, size_t len) {
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) die("the connection failed while sending");
        data += n;
        len -= (size_t)n;
    }
}

static void read_exact(int fd, uint8_t *data, size_t len) {
    while (len > 0) {
        ssize_t n = read(fd, data, len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) die(errno == EAGAIN || errno == EWOULDBLOCK ? "no answer from the server in time"
                                                               : "the connection failed while reading");
        if (n == 0) die("the server closed the connection");
        data += n;
        len -= (size_t)n;
    }
}

/* Sends one frame: the 12-byte big-endian header, then the payload. */
static void send_frame(int fd, uint8_t type, uint32_t stream_id, const uint8_t *payload, uint32_t len) {
    uint8_t header[HEADER_SIZE] = {0};
    put_u32(header, len);
    header[4] = type;
    put_u32(header + 8, stream_id);
    write_all(fd, header, sizeof header);
    if (len) write_all(fd, payload, len);
}

struct frame {
    uint8_t type, flags;
    uint32_t stream_id, length;
    uint8_t *payload; /* malloc'ed; free it */
};

static struct frame read_frame(int fd) {
    uint8_t header[HEADER_SIZE];
    struct frame f;
    read_exact(fd, header, sizeof header);
    f.length = get_u32(header);
    f.type = header[4];
    f.flags = header[5];
    f.stream_id = get_u32(header + 8);
    if (header[6] || header[7]) die("the server sent a frame with non-zero reserved bytes");
    if (f.length > MAX_PAYLOAD) die("the server sent a frame larger than 64 MiB");
    f.payload = malloc(f.length ? f.length : 1);
    if (!f.payload) die("out of memory");
    read_exact(fd, f.payload, f.length);
    return f;
}

static void print_status(const Mrpc__V1__Status *status) {
    const char *name = status->code < sizeof status_names / sizeof *status_names ? status_names[status->code] : "?";
    printf("error: status=%u %s code=%s message=%s\n", status->code, name, status->error_code, status->message);
}

/* A GOAWAY: print its status and exit 1 (the server refused), or 3 when it is unreadable. */
static void goaway(const struct frame *f) {
    Mrpc__V1__Goaway *g = mrpc__v1__goaway__unpack(NULL, f->length, f->payload);
    if (!g) die("the server sent a GOAWAY that is not a valid mrpc.v1.Goaway");
    if (g->status) {
        print_status(g->status);
    } else {
        printf("error: status=14 UNAVAILABLE code=ERR_UNAVAILABLE message=the server went away\n");
    }
    mrpc__v1__goaway__free_unpacked(g, NULL);
    exit(1);
}

/* Answers PING, skips extension frames; true when the frame was one of those. */
static int handle_connection_frame(int fd, const struct frame *f) {
    if (f->type >= 0x80) return 1;
    if (f->type == PING) {
        if (f->length != 8) die("the server sent a PING without 8 bytes");
        send_frame(fd, PONG, 0, f->payload, 8);
        return 1;
    }
    if (f->type == PONG) return 1;
    if (f->type == GOAWAY) goaway(f);
    return 0;
}

static int connect_to(const char *address) {
    char host[256];
    const char *colon = strrchr(address, ':');
    const char *start = address, *end = colon;
    if (!colon || colon == address) return -1;
    if (address[0] == '[') { /* [v6]:port */
        start = address + 1;
        end = strchr(address, ']');
        if (!end || end + 1 != colon) return -1;
    }
    if ((size_t)(end - start) >= sizeof host) return -1;
    memcpy(host, start, (size_t)(end - start));
    host[end - start] = '\0';

    struct addrinfo hints = {0}, *found, *ai;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, colon + 1, &hints, &found) != 0) return -1;
    int fd = -1;
    for (ai = found; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (fd < 0) continue;
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) break;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(found);
    if (fd >= 0) {
        int one = 1;
        struct timeval timeout = {15, 0}; /* a server that never answers does not hang us */
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    }
    return fd;
}

/* Preface, HELLO, then HELLO_ACK (or GOAWAY: refused). */
static void handshake(int fd, char *api_key) {
    static const uint8_t preface[8] = {'M', 'R', 'P', 'C', 0, 1, 0, 0};
    write_all(fd, preface, sizeof preface);

    Mrpc__V1__Hello hello = MRPC__V1__HELLO__INIT;
    hello.api_key = api_key;
    hello.client_name = "kick-member (C example)";
    size_t len = mrpc__v1__hello__get_packed_size(&hello);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf) die("out of memory");
    mrpc__v1__hello__pack(&hello, buf);
    send_frame(fd, HELLO, 0, buf, (uint32_t)len);
    free(buf);

    for (;;) {
        struct frame f = read_frame(fd);
        if (handle_connection_frame(fd, &f)) { free(f.payload); continue; }
        if (f.type != HELLO_ACK) die("the server answered HELLO with neither HELLO_ACK nor GOAWAY");
        Mrpc__V1__HelloAck *ack = mrpc__v1__hello_ack__unpack(NULL, f.length, f.payload);
        free(f.payload);
        if (!ack) die("the server sent a HELLO_ACK that is not a valid mrpc.v1.HelloAck");
        fprintf(stderr, "kick-member: connected to %s %s as app %s\n", ack->server_name, ack->server_version, ack->app_id);
        mrpc__v1__hello_ack__free_unpacked(ack, NULL);
        return;
    }
}

/* CALL on stream 1: u32 header length, CallHeader, KickMemberRequest. */
static void send_kick(int fd, char *guid, char *uid, char *on_behalf_of) {
    Mrpc__V1__CallHeader header = MRPC__V1__CALL_HEADER__INIT;
    header.method = METHOD;
    header.timeout_ms = 10000;
    header.on_behalf_of = on_behalf_of;
    Moderation__V1__KickMemberRequest request = MODERATION__V1__KICK_MEMBER_REQUEST__INIT;
    request.guid = guid;
    request.uid = uid;

    size_t hlen = mrpc__v1__call_header__get_packed_size(&header);
    size_t blen = moderation__v1__kick_member_request__get_packed_size(&request);
    uint8_t *payload = malloc(4 + hlen + blen);
    if (!payload) die("out of memory");
    put_u32(payload, (uint32_t)hlen);
    mrpc__v1__call_header__pack(&header, payload + 4);
    moderation__v1__kick_member_request__pack(&request, payload + 4 + hlen);
    send_frame(fd, CALL, CALL_STREAM_ID, payload, (uint32_t)(4 + hlen + blen));
    free(payload);
}

/* Reads frames until the REPLY of stream 1; prints it; returns the exit status. */
static int await_reply(int fd, const char *guid, const char *uid) {
    for (;;) {
        struct frame f = read_frame(fd);
        if (f.type == GOAWAY) {
            Mrpc__V1__Goaway *g = mrpc__v1__goaway__unpack(NULL, f.length, f.payload);
            /* A GOAWAY that still covers our call: keep reading for its REPLY. */
            int covered = g && g->last_stream_id >= CALL_STREAM_ID;
            if (g) mrpc__v1__goaway__free_unpacked(g, NULL);
            if (!covered) goaway(&f);
            free(f.payload);
            continue;
        }
        if (handle_connection_frame(fd, &f)) { free(f.payload); continue; }
        if (f.type != REPLY || f.stream_id != CALL_STREAM_ID) die("the server sent a frame that is not the REPLY of our call");
        if (f.length < 4) die("the REPLY is shorter than its status length");
        uint32_t slen = get_u32(f.payload);
        if (slen > f.length - 4) die("the REPLY's status length runs past the frame");
        if (slen > 0) {
            Mrpc__V1__Status *status = mrpc__v1__status__unpack(NULL, slen, f.payload + 4);
            if (!status) die("the REPLY's status is not a valid mrpc.v1.Status");
            int failed = status->code != 0;
            if (failed) print_status(status);
            mrpc__v1__status__free_unpacked(status, NULL);
            if (failed) { free(f.payload); return 1; }
        }
        if (f.flags & FLAG_COMPRESSED) die("the server compressed the reply although this client accepts no encoding");
        Moderation__V1__KickMemberResponse *response =
            moderation__v1__kick_member_response__unpack(NULL, f.length - 4 - slen, f.payload + 4 + slen);
        free(f.payload);
        if (!response) die("the REPLY's body is not a valid moderation.v1.KickMemberResponse");
        const Moderation__V1__Action *action = response->action;
        printf("ok: kicked %s from %s (action seq %llu, members now %u)\n", uid, guid,
               action ? (unsigned long long)action->seq : 0ULL,
               action && action->action_for ? action->action_for->members_count : 0u);
        moderation__v1__kick_member_response__free_unpacked(response, NULL);
        return 0;
    }
}

int main(int argc, char **argv) {
    if (argc < 5 || argc > 6) {
        fprintf(stderr, "usage: %s HOST:PORT API_KEY GUID UID [ON_BEHALF_OF]\n", argv[0]);
        return 2;
    }
    int fd = connect_to(argv[1]);
    if (fd < 0) {
        fprintf(stderr, "kick-member: cannot connect to %s\n", argv[1]);
        return 3;
    }
    handshake(fd, argv[2]);
    send_kick(fd, argv[3], argv[4], argc == 6 ? argv[5] : "");
    int status = await_reply(fd, argv[3], argv[4]);
    close(fd);
    return status;
}

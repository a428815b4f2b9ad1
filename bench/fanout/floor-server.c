// The fan-out benchmark's floor: the least a server can do to deliver one event to
// N subscribers over TCP, one `write` per subscriber, and nothing else.
//
//   floor-server PORT PAYLOAD_BYTES
//
// A connection's first byte says what it is: 'S' a subscriber (answered 'A', then it only
// receives), 'H' the trigger connection (answered 'A'). Each 'T' on the trigger connection
// makes the server write PAYLOAD_BYTES bytes to every subscriber, one blocking `write` each, in
// a loop, then 'K' to the trigger connection. Subscriber sockets are blocking, so a subscriber
// that does not read stalls the loop (nothing is queued or dropped). The floor has only the
// one-socket-each shape: it has no notion of several subscriptions on a connection.
// One thread, epoll for the reads; libc only.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

enum role { ROLE_NEW, ROLE_SUBSCRIBER, ROLE_TRIGGER };

struct conn {
    enum role role;
    int slot;  // index in subscribers (ROLE_SUBSCRIBER)
};

static struct conn *conns;  // by file descriptor
static int conns_size;
static int *subscribers;
static int subscriber_count, subscribers_size;

static void fail(const char *what) {
    fprintf(stderr, "floor-server: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void write_all(int fd, const void *data, size_t n) {
    const char *p = data;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) {
            // The client went away (it resets its sockets at the end of a run): drop it.
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

static void forget(int epfd, int fd) {
    epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
    if (conns[fd].role == ROLE_SUBSCRIBER) {
        int slot = conns[fd].slot, last = subscribers[--subscriber_count];
        subscribers[slot] = last;
        conns[last].slot = slot;
    }
    conns[fd].role = ROLE_NEW;
    close(fd);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: floor-server PORT PAYLOAD_BYTES\n");
        return 2;
    }
    int port = atoi(argv[1]);
    size_t payload_bytes = (size_t)atol(argv[2]);
    if (port <= 0 || port > 65535 || payload_bytes == 0 || payload_bytes > (1 << 20)) {
        fprintf(stderr, "floor-server: bad PORT or PAYLOAD_BYTES\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);  // a subscriber that went away fails its write instead
    char *payload = malloc(payload_bytes);
    for (size_t i = 0; i < payload_bytes; i++) payload[i] = "fanout-payload-0123456789"[i % 25];

    int listener = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(listener, (struct sockaddr *)&addr, sizeof addr) != 0) fail("bind");
    if (listen(listener, 4096) != 0) fail("listen");
    int epfd = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = listener};
    epoll_ctl(epfd, EPOLL_CTL_ADD, listener, &ev);

    struct epoll_event events[256];
    char input[4096];
    for (;;) {
        int n = epoll_wait(epfd, events, 256, -1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail("epoll_wait");
        for (int i = 0; i < n; i++) {
            int fd = events[i].data.fd;
            if (fd == listener) {
                int client = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
                if (client < 0) continue;
                setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                if (client >= conns_size) {
                    int size = conns_size ? conns_size : 1024;
                    while (size <= client) size *= 2;
                    conns = realloc(conns, sizeof *conns * (size_t)size);
                    memset(conns + conns_size, 0, sizeof *conns * (size_t)(size - conns_size));
                    conns_size = size;
                }
                conns[client].role = ROLE_NEW;
                struct epoll_event cev = {.events = EPOLLIN, .data.fd = client};
                epoll_ctl(epfd, EPOLL_CTL_ADD, client, &cev);
                continue;
            }
            ssize_t got = read(fd, input, sizeof input);
            if (got <= 0) {
                if (got < 0 && errno == EINTR) continue;
                forget(epfd, fd);
                continue;
            }
            for (ssize_t k = 0; k < got; k++) {
                char byte = input[k];
                if (conns[fd].role == ROLE_NEW && byte == 'S') {
                    if (subscriber_count == subscribers_size) {
                        subscribers_size = subscribers_size ? subscribers_size * 2 : 1024;
                        subscribers = realloc(subscribers, sizeof *subscribers * (size_t)subscribers_size);
                    }
                    conns[fd].role = ROLE_SUBSCRIBER;
                    conns[fd].slot = subscriber_count;
                    subscribers[subscriber_count++] = fd;
                    write_all(fd, "A", 1);
                } else if (conns[fd].role == ROLE_NEW && byte == 'H') {
                    conns[fd].role = ROLE_TRIGGER;
                    write_all(fd, "A", 1);
                } else if (conns[fd].role == ROLE_TRIGGER && byte == 'T') {
                    // The fan-out: one write per subscriber.
                    for (int s = 0; s < subscriber_count; s++) write_all(subscribers[s], payload, payload_bytes);
                    write_all(fd, "K", 1);
                } else {
                    fprintf(stderr, "floor-server: unexpected byte 0x%02x on connection %d\n", (unsigned char)byte, fd);
                    forget(epfd, fd);
                    break;
                }
            }
        }
    }
}

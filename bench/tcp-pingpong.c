// Raw TCP ping-pong over loopback: the floor under any RPC round trip on this machine.
// Usage: tcp-pingpong server PORT          echo 32-byte messages back (one connection)
//        tcp-pingpong client PORT COUNT    COUNT round trips; prints p50/p99 in µs as JSON
// tools/bench compiles it and runs the server on core 0, the client on core 1 (TCP_NODELAY).
#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { MESSAGE = 32 };

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 3 || (argv[1][0] == 'c' && argc < 4)) {
        fprintf(stderr, "usage: tcp-pingpong server PORT | tcp-pingpong client PORT COUNT\n");
        return 2;
    }
    struct sockaddr_in address = {0};
    address.sin_family = AF_INET;
    address.sin_port = htons((unsigned short)atoi(argv[2]));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    char buffer[MESSAGE] = {0};
    if (argv[1][0] == 's') {
        int listener = socket(AF_INET, SOCK_STREAM, 0);
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 1) != 0) {
            perror("tcp-pingpong server");
            return 1;
        }
        int peer = accept(listener, NULL, NULL);
        setsockopt(peer, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        for (;;) {
            ssize_t n = read(peer, buffer, MESSAGE);
            if (n <= 0 || write(peer, buffer, (size_t)n) != n) return 0;
        }
    }
    int count = atoi(argv[3]);
    int peer = socket(AF_INET, SOCK_STREAM, 0);
    if (count <= 0 || connect(peer, (struct sockaddr *)&address, sizeof address) != 0) {
        perror("tcp-pingpong client");
        return 1;
    }
    setsockopt(peer, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    double *latency = malloc(sizeof(double) * (size_t)count);
    for (int i = 0; i < count; i++) {
        double start = now_us();
        if (write(peer, buffer, MESSAGE) != MESSAGE) return 1;
        for (int got = 0; got < MESSAGE;) {
            ssize_t n = read(peer, buffer + got, (size_t)(MESSAGE - got));
            if (n <= 0) return 1;
            got += (int)n;
        }
        latency[i] = now_us() - start;
    }
    qsort(latency, (size_t)count, sizeof(double), by_value);
    printf("{\"p50_us\": %.1f, \"p99_us\": %.1f}\n", latency[count / 2], latency[count * 99 / 100]);
    free(latency);
    return 0;
}

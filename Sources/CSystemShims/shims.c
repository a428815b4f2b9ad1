#define _GNU_SOURCE
#include "CSystemShims.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int cshim_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int cshim_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data) {
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = events;
    ev.data.u64 = data;
    return epoll_ctl(epfd, op, fd, &ev);
}

int cshim_epoll_wait(int epfd, uint32_t *events, uint64_t *data, int max, int timeout_ms) {
    struct epoll_event buffer[256];
    if (max > 256) max = 256;
    int n;
    do {
        n = epoll_wait(epfd, buffer, max, timeout_ms);
    } while (n < 0 && errno == EINTR);
    for (int i = 0; i < n; i++) {
        events[i] = buffer[i].events;
        data[i] = buffer[i].data.u64;
    }
    return n;
}

int cshim_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

int cshim_eventfd_signal(int fd) {
    uint64_t one = 1;
    ssize_t n;
    do {
        n = write(fd, &one, sizeof one);
    } while (n < 0 && errno == EINTR);
    return n == sizeof one || (n < 0 && errno == EAGAIN) ? 0 : -1;
}

int cshim_eventfd_drain(int fd) {
    uint64_t value;
    ssize_t n;
    do {
        n = read(fd, &value, sizeof value);
    } while (n < 0 && errno == EINTR);
    return n == sizeof value ? 0 : -1;
}

int cshim_timerfd(void) { return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC); }

int cshim_timerfd_arm_at(int fd, uint64_t ns) {
    struct itimerspec spec;
    memset(&spec, 0, sizeof spec);
    spec.it_value.tv_sec = (time_t)(ns / 1000000000ull);
    spec.it_value.tv_nsec = (long)(ns % 1000000000ull);
    return timerfd_settime(fd, TFD_TIMER_ABSTIME, &spec, NULL);
}

int cshim_timerfd_arm_periodic(int fd, uint64_t interval_ns) {
    struct itimerspec spec;
    spec.it_interval.tv_sec = (time_t)(interval_ns / 1000000000ull);
    spec.it_interval.tv_nsec = (long)(interval_ns % 1000000000ull);
    spec.it_value = spec.it_interval;
    return timerfd_settime(fd, 0, &spec, NULL);
}

int cshim_timerfd_drain(int fd) {
    uint64_t count;
    ssize_t n;
    do {
        n = read(fd, &count, sizeof count);
    } while (n < 0 && errno == EINTR);
    return n == sizeof count ? 0 : -1;
}

int cshim_accept(int fd) {
    int c;
    do {
        c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    } while (c < 0 && errno == EINTR);
    return c;
}

static int resolve(const char *host, uint16_t port, struct sockaddr_storage *out, socklen_t *len) {
    struct addrinfo hints, *result = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE;
    char service[8];
    snprintf(service, sizeof service, "%u", (unsigned)port);
    int rc = getaddrinfo(host, service, &hints, &result);
    if (rc != 0 || result == NULL) return -EADDRNOTAVAIL;
    memcpy(out, result->ai_addr, result->ai_addrlen);
    *len = result->ai_addrlen;
    freeaddrinfo(result);
    return 0;
}

int cshim_listen(const char *host, uint16_t port, int backlog, int reuse_port, int nonblocking, uint16_t *bound_port) {
    struct sockaddr_storage addr;
    socklen_t len;
    int rc = resolve(host, port, &addr, &len);
    if (rc < 0) return rc;
    int type = SOCK_STREAM | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0);
    int fd = socket(addr.ss_family, type, 0);
    if (fd < 0) return -errno;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (reuse_port) setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&addr, len) < 0 || listen(fd, backlog) < 0) {
        int err = errno;
        close(fd);
        return -err;
    }
    struct sockaddr_storage bound;
    socklen_t bound_len = sizeof bound;
    if (bound_port && getsockname(fd, (struct sockaddr *)&bound, &bound_len) == 0) {
        *bound_port = bound.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&bound)->sin6_port)
                                                   : ntohs(((struct sockaddr_in *)&bound)->sin_port);
    }
    return fd;
}

int cshim_connect(const char *host, uint16_t port, int timeout_ms) {
    struct sockaddr_storage addr;
    socklen_t len;
    int rc = resolve(host, port, &addr, &len);
    if (rc < 0) return rc;
    int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return -errno;
    if (connect(fd, (struct sockaddr *)&addr, len) < 0) {
        if (errno != EINPROGRESS) {
            int err = errno;
            close(fd);
            return -err;
        }
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int n;
        do {
            n = poll(&p, 1, timeout_ms);
        } while (n < 0 && errno == EINTR);
        if (n == 0) {
            close(fd);
            return -ETIMEDOUT;
        }
        int err = 0;
        socklen_t err_len = sizeof err;
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &err_len);
        if (n < 0 || err != 0) {
            close(fd);
            return -(err ? err : ECONNREFUSED);
        }
    }
    cshim_set_nonblocking(fd, 0);
    return fd;
}

int cshim_set_nonblocking(int fd, int on) {
    int flags = fcntl(fd, F_GETFL, 0);
    if (flags < 0) return -1;
    flags = on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK);
    return fcntl(fd, F_SETFL, flags);
}

int cshim_set_nodelay(int fd) {
    int one = 1;
    return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

int cshim_set_buffers(int fd, int send_bytes, int receive_bytes) {
    int rc = 0;
    if (send_bytes > 0) rc |= setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &send_bytes, sizeof send_bytes);
    if (receive_bytes > 0) rc |= setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_bytes, sizeof receive_bytes);
    return rc;
}

int cshim_usable_cpu_count(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    int n = CPU_COUNT(&set);
    return n > 0 ? n : 1;
}

int cshim_usable_cpu(int index) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
    int seen = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (CPU_ISSET(cpu, &set)) {
            if (seen == index) return cpu;
            seen++;
        }
    }
    return -1;
}

int cshim_pin_thread(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

void cshim_set_thread_name(const char *name) {
    char short_name[16];
    strncpy(short_name, name, 15);
    short_name[15] = 0;
    pthread_setname_np(pthread_self(), short_name);
}

uint64_t cshim_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int64_t cshim_realtime_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t cshim_process_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t cshim_resident_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    unsigned long size = 0, resident = 0;
    int n = fscanf(f, "%lu %lu", &size, &resident);
    fclose(f);
    if (n != 2) return 0;
    return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

void cshim_heap_bytes(uint64_t *in_use, uint64_t *system) {
    struct mallinfo2 info = mallinfo2();
    *in_use = (uint64_t)(info.uordblks + info.hblkhd);
    *system = (uint64_t)(info.arena + info.hblkhd);
}

int cshim_heap_trim(void) {
    return malloc_trim(0);
}

int cshim_heap_configure(size_t mmap_threshold, size_t trim_threshold) {
    int mmap_set = mallopt(M_MMAP_THRESHOLD, (int)mmap_threshold);
    int trim_set = mallopt(M_TRIM_THRESHOLD, (int)trim_threshold);
    return mmap_set == 1 && trim_set == 1;
}

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

#ifdef __SSE2__
#include <emmintrin.h>
#endif

int cshim_log_value_needs_escape(const uint8_t *bytes, size_t count, int json) {
    size_t i = 0;
#ifdef __SSE2__
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i second = _mm_set1_epi8(json ? '\\' : ' ');
    const __m128i third = _mm_set1_epi8(json ? '"' : '=');
    const __m128i fourth = _mm_set1_epi8(json ? '"' : '\n');
    const __m128i control = _mm_set1_epi8(0x1F);
    for (; i + 16 <= count; i += 16) {
        __m128i chunk = _mm_loadu_si128((const __m128i *)(bytes + i));
        __m128i hits = _mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_cmpeq_epi8(chunk, second));
        hits = _mm_or_si128(hits, _mm_or_si128(_mm_cmpeq_epi8(chunk, third), _mm_cmpeq_epi8(chunk, fourth)));
        if (json) hits = _mm_or_si128(hits, _mm_cmpeq_epi8(_mm_min_epu8(chunk, control), chunk));
        if (_mm_movemask_epi8(hits)) return 1;
    }
#endif
    for (; i < count; i++) {
        uint8_t byte = bytes[i];
        if (json ? (byte == '"' || byte == '\\' || byte < 0x20)
                 : (byte == ' ' || byte == '"' || byte == '=' || byte == '\n'))
            return 1;
    }
    return 0;
}

size_t cshim_access_line_maximum(const cshim_access_line *line) {
    // Fixed text and numbers, then every value at its worst (\u00XX per byte, and quotes).
    size_t total = 256 + line->wire.count;
    const cshim_text *values[] = {&line->method, &line->status, &line->error_code, &line->app,
                                  &line->on_behalf_of, &line->request_id, &line->peer};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) total += 6 * values[i]->count + 2;
    return total;
}

static inline uint8_t *put(uint8_t *out, const char *literal, size_t count) {
    memcpy(out, literal, count);
    return out + count;
}

#define PUT(out, literal) put((out), (literal), sizeof(literal) - 1)

/// `value` as a JSON string literal, escaped as `Logger.jsonString` does.
static uint8_t *put_json_string(uint8_t *out, cshim_text value) {
    static const char hex[] = "0123456789abcdef";
    *out++ = '"';
    if (!cshim_log_value_needs_escape(value.bytes, value.count, 1)) {
        if (value.count) memcpy(out, value.bytes, value.count);
        out += value.count;
    } else {
        for (size_t i = 0; i < value.count; i++) {
            uint8_t byte = value.bytes[i];
            switch (byte) {
            case '"': out = PUT(out, "\\\""); break;
            case '\\': out = PUT(out, "\\\\"); break;
            case '\n': out = PUT(out, "\\n"); break;
            case '\r': out = PUT(out, "\\r"); break;
            case '\t': out = PUT(out, "\\t"); break;
            default:
                if (byte < 0x20) {
                    out = PUT(out, "\\u00");
                    *out++ = (uint8_t)hex[byte >> 4];
                    *out++ = (uint8_t)hex[byte & 15];
                } else {
                    *out++ = byte;
                }
            }
        }
    }
    *out++ = '"';
    return out;
}

/// A value of the text format: as it is, or as a JSON string when empty or holding a space, a
/// quote, '=' or a newline.
static uint8_t *put_text_value(uint8_t *out, cshim_text value, int plain) {
    if (value.count == 0 || (!plain && cshim_log_value_needs_escape(value.bytes, value.count, 0)))
        return put_json_string(out, value);
    memcpy(out, value.bytes, value.count);
    return out + value.count;
}

static uint8_t *put_decimal(uint8_t *out, uint64_t value) {
    uint8_t digits[20];
    size_t count = 0;
    do {
        digits[count++] = (uint8_t)('0' + value % 10);
        value /= 10;
    } while (value);
    while (count) *out++ = digits[--count];
    return out;
}

static uint8_t *put_milliseconds(uint8_t *out, uint64_t nanoseconds) {
    uint64_t micros = nanoseconds / 1000;
    out = put_decimal(out, micros / 1000);
    unsigned fraction = (unsigned)(micros % 1000);
    *out++ = '.';
    *out++ = (uint8_t)('0' + fraction / 100);
    *out++ = (uint8_t)('0' + fraction / 10 % 10);
    *out++ = (uint8_t)('0' + fraction % 10);
    return out;
}

size_t cshim_format_access_line(uint8_t *out, const cshim_access_line *line, int json) {
    uint8_t *start = out;
    if (json) {
        out = PUT(out, "{\"time\":\"");
        out = put(out, (const char *)line->time, 24);
        out = PUT(out, "\",\"level\":\"info\",\"msg\":\"call\",\"method\":");
        out = put_json_string(out, line->method);
        out = PUT(out, ",\"status\":");
        out = put_json_string(out, line->status);
        out = PUT(out, ",\"error_code\":");
        out = put_json_string(out, line->error_code);
        out = PUT(out, ",\"duration_ms\":");
        out = put_milliseconds(out, line->duration_ns);
        out = PUT(out, ",\"app\":");
        out = put_json_string(out, line->app);
        out = PUT(out, ",\"on_behalf_of\":");
        out = put_json_string(out, line->on_behalf_of);
        out = PUT(out, ",\"request_id\":");
        out = put_json_string(out, line->request_id);
        out = PUT(out, ",\"peer\":");
        out = put_json_string(out, line->peer);
        out = PUT(out, ",\"stream\":");
        out = put_decimal(out, line->stream);
        out = PUT(out, ",\"wire\":");
        out = put_json_string(out, line->wire);
        out = PUT(out, "}\n");
    } else {
        out = put(out, (const char *)line->time, 24);
        out = PUT(out, " INFO call method=");
        out = put_text_value(out, line->method, line->method_is_plain);
        out = PUT(out, " status=");
        out = put_text_value(out, line->status, 1);
        out = PUT(out, " error_code=");
        out = put_text_value(out, line->error_code, 1);
        out = PUT(out, " duration_ms=");
        out = put_milliseconds(out, line->duration_ns);
        out = PUT(out, " app=");
        out = put_text_value(out, line->app, 0);
        out = PUT(out, " on_behalf_of=");
        out = put_text_value(out, line->on_behalf_of, 0);
        out = PUT(out, " request_id=");
        out = put_text_value(out, line->request_id, 0);
        out = PUT(out, " peer=");
        out = put_text_value(out, line->peer, 1);
        out = PUT(out, " stream=");
        out = put_decimal(out, line->stream);
        out = PUT(out, " wire=");
        out = put_text_value(out, line->wire, 1);
        *out++ = '\n';
    }
    return (size_t)(out - start);
}

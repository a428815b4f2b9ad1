// Linux system calls the toolchain's Glibc module does not expose (epoll, eventfd, timerfd,
// accept4, CPU affinity), behind small functions with plain types. Built with _GNU_SOURCE.
#ifndef CSYSTEMSHIMS_H
#define CSYSTEMSHIMS_H

#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

/// epoll_create1(EPOLL_CLOEXEC).
int cshim_epoll_create(void);
/// Adds, modifies or deletes `fd` in `epfd` with `events`, carrying `data` back in events.
int cshim_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data);
/// Waits for up to `max` events; writes their event masks and data into the two arrays.
int cshim_epoll_wait(int epfd, uint32_t *events, uint64_t *data, int max, int timeout_ms);

/// eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC).
int cshim_eventfd(void);
/// Adds one to an eventfd (wakes its reader); returns 0 or -1.
int cshim_eventfd_signal(int fd);
/// Reads and clears an eventfd's counter; returns 0 or -1 (EAGAIN when it was zero).
int cshim_eventfd_drain(int fd);

/// timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC).
int cshim_timerfd(void);
/// Arms a timerfd to fire once at the absolute CLOCK_MONOTONIC time `ns` (0 disarms).
int cshim_timerfd_arm_at(int fd, uint64_t ns);
/// Arms a timerfd to fire every `interval_ns` from now.
int cshim_timerfd_arm_periodic(int fd, uint64_t interval_ns);
/// Reads and clears a timerfd's expiration count; returns 0 or -1.
int cshim_timerfd_drain(int fd);

/// accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC).
int cshim_accept(int fd);
/// A TCP listening socket bound to host:port (IPv4 or IPv6 literal, or "localhost"), with
/// SO_REUSEADDR and, when `reuse_port`, SO_REUSEPORT; non-blocking when `nonblocking`.
/// Returns the fd or -errno; writes the bound port (useful with port 0) into `bound_port`.
int cshim_listen(const char *host, uint16_t port, int backlog, int reuse_port, int nonblocking, uint16_t *bound_port);
/// A TCP connection to host:port with a timeout in milliseconds (blocking socket on return).
/// Returns the fd or -errno.
int cshim_connect(const char *host, uint16_t port, int timeout_ms);
/// Sets O_NONBLOCK on or off.
int cshim_set_nonblocking(int fd, int on);
/// Sets TCP_NODELAY.
int cshim_set_nodelay(int fd);
/// Sets SO_SNDBUF / SO_RCVBUF (0 leaves the kernel default).
int cshim_set_buffers(int fd, int send_bytes, int receive_bytes);

/// The number of CPUs this thread may run on (sched_getaffinity).
int cshim_usable_cpu_count(void);
/// The index of the n-th CPU this process may run on, or -1.
int cshim_usable_cpu(int n);
/// Pins the calling thread to one CPU; returns 0 or an errno.
int cshim_pin_thread(int cpu);
/// Names the calling thread (at most 15 characters are kept).
void cshim_set_thread_name(const char *name);
/// CLOCK_MONOTONIC in nanoseconds.
uint64_t cshim_monotonic_ns(void);
/// CLOCK_REALTIME in milliseconds since the Unix epoch.
int64_t cshim_realtime_ms(void);
/// CPU time of the whole process (user + system), in nanoseconds.
uint64_t cshim_process_cpu_ns(void);
/// Resident set size of this process in bytes (from /proc/self/statm), or 0.
uint64_t cshim_resident_bytes(void);
/// The malloc heap: bytes handed out and not yet freed (`in_use`), and bytes the heap holds from
/// the system (`system`, what RSS sees), from glibc's mallinfo2 (walks every arena: not per call).
void cshim_heap_bytes(uint64_t *in_use, uint64_t *system);
/// Gives the heap's free pages back to the system (glibc malloc_trim(0)); 1 when some were.
int cshim_heap_trim(void);
/// Fixes glibc's thresholds (mallopt): allocations of `mmap_threshold` bytes or more get their
/// own mapping, unmapped when freed; a heap whose free top reaches `trim_threshold` bytes is
/// shrunk on free. Setting them turns off glibc's dynamic thresholds, which rise after large
/// frees (up to 32 MiB) and then keep big buffers inside per-thread heaps, whose free top
/// malloc_trim does not release. 1 when both were set.
int cshim_heap_configure(size_t mmap_threshold, size_t trim_threshold);

/// 1 when a log value of `count` bytes must be quoted or escaped: in the text format (`json` 0)
/// when it holds a space, a double quote, '=' or a newline; in JSON (`json` 1) when it holds a
/// double quote, a backslash or a byte below 0x20. Sixteen bytes at a time where SSE2 is there
/// (access-log values are method paths, addresses and ids: scanning them was most of a line's
/// cost).
int cshim_log_value_needs_escape(const uint8_t *bytes, size_t count, int json);

/// A string's UTF-8 bytes, for `cshim_format_access_line`.
typedef struct {
    const uint8_t *bytes;
    size_t count;
} cshim_text;

/// The values of one access-log line (see the server's `AccessLog`).
typedef struct {
    /// `2026-11-29T11:30:00.123Z`: exactly 24 bytes.
    const uint8_t *time;
    cshim_text method, status, error_code, app, on_behalf_of, request_id, peer;
    /// The wire the call came on (`mrpc` or `grpc`): plain, never escaped.
    cshim_text wire;
    uint64_t duration_ns;
    uint32_t stream;
    /// The method is a path of the server's method table, which needs no escaping.
    int method_is_plain;
} cshim_access_line;

/// The most bytes `cshim_format_access_line` writes for `line` (every value escaped at worst).
size_t cshim_access_line_maximum(const cshim_access_line *line);

/// Writes `line` into `out` (room for `cshim_access_line_maximum` bytes) as the text format's
/// `TIME INFO call method=… status=… error_code=… duration_ms=… app=… on_behalf_of=…
/// request_id=… peer=… stream=… wire=…` line, or (`json` 1) as one JSON object, newline included,
/// with values quoted and escaped exactly as the server's `Logger` does; returns the bytes
/// written. In C because it runs for every call: the Swift formatting cost more than the call.
size_t cshim_format_access_line(uint8_t *out, const cshim_access_line *line, int json);

/// Relaxed atomic add and load on a 64-bit counter (metrics; no ordering implied).
static inline void cshim_atomic_add(uint64_t *counter, uint64_t value) {
    __atomic_fetch_add(counter, value, __ATOMIC_RELAXED);
}
static inline uint64_t cshim_atomic_load(const uint64_t *counter) {
    return __atomic_load_n(counter, __ATOMIC_RELAXED);
}
/// Asks the processor to bring the cache line at `address` in, for writing (a hint: no fault
/// for any address, no effect on what the program computes).
static inline void cshim_prefetch(const void *address) {
    __builtin_prefetch(address, 1, 3);
}
#endif

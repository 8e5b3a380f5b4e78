#ifndef LEDE_CLINUX_H
#define LEDE_CLINUX_H
// A few Linux calls Swift's Glibc module does not export, wrapped so Swift never touches the
// packed `struct epoll_event` directly.
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

int lede_epoll_create(void);
/// op: 1 add, 2 modify, 3 delete. events: bit 0 readable, bit 1 writable. Level-triggered.
int lede_epoll_ctl(int epfd, int op, int fd, uint32_t events);
/// Fills fds[i] and events[i] (bit 0 readable, bit 1 writable, bit 2 hang-up/error). Returns count or -1.
int lede_epoll_wait(int epfd, int32_t *fds, uint32_t *events, int max, int timeout_ms);
int lede_eventfd(void);
int lede_eventfd_signal(int fd);
int lede_eventfd_drain(int fd);
/// accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC.
int lede_accept(int listen_fd);
/// accept4 as above, and the peer's address in `address` (16 bytes: IPv6, or IPv4 as ::ffff:a.b.c.d; zeros when unknown).
int lede_accept_peer(int listen_fd, uint8_t *address);
int lede_errno(void);
/// read (sockets too), send (with MSG_NOSIGNAL), and two buffers in one sendmsg (with MSG_NOSIGNAL), as plain system calls
/// (not glibc's cancellation points): -1 and errno on failure.
ssize_t lede_read(int fd, void *buffer, size_t count);
ssize_t lede_send(int fd, const void *buffer, size_t count);
ssize_t lede_send2(int fd, const void *a, size_t a_count, const void *b, size_t b_count);
/// `count` buffers in one sendmsg (with MSG_NOSIGNAL), as a plain system call.
ssize_t lede_sendv(int fd, const struct iovec *iov, int count);
/// Monotonic clock in nanoseconds.
uint64_t lede_monotonic_ns(void);

/// Lock-free counters shared between event loops.
/// Full buffering of `size` bytes for stdout (the access log), set once at start before any thread writes.
void lede_buffer_stdout(size_t size);

#endif

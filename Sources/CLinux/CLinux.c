#define _GNU_SOURCE
#include "CLinux.h"
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int lede_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int lede_epoll_ctl(int epfd, int op, int fd, uint32_t events) {
    struct epoll_event ev = {0};
    if (events & 1) ev.events |= EPOLLIN | EPOLLRDHUP;
    if (events & 2) ev.events |= EPOLLOUT;
    ev.data.fd = fd;
    int cop = op == 1 ? EPOLL_CTL_ADD : (op == 2 ? EPOLL_CTL_MOD : EPOLL_CTL_DEL);
    return epoll_ctl(epfd, cop, fd, &ev);
}

int lede_epoll_wait(int epfd, int32_t *fds, uint32_t *events, int max, int timeout_ms) {
    struct epoll_event evs[256];
    if (max > 256) max = 256;
    int n;
    do { n = (int)syscall(SYS_epoll_pwait, epfd, evs, max, timeout_ms, NULL, 8); } while (n < 0 && errno == EINTR);
    for (int i = 0; i < n; i++) {
        fds[i] = evs[i].data.fd;
        uint32_t e = 0;
        if (evs[i].events & (EPOLLIN | EPOLLRDHUP)) e |= 1;
        if (evs[i].events & EPOLLOUT) e |= 2;
        if (evs[i].events & (EPOLLHUP | EPOLLERR)) e |= 4;
        events[i] = e;
    }
    return n;
}

int lede_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }
int lede_eventfd_signal(int fd) { uint64_t one = 1; return (int)write(fd, &one, sizeof one); }
int lede_eventfd_drain(int fd) { uint64_t v; return (int)read(fd, &v, sizeof v); }

int lede_accept(int listen_fd) {
    int fd;
    do { fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC); } while (fd < 0 && errno == EINTR);
    return fd;
}

int lede_accept_peer(int listen_fd, uint8_t *address) {
    struct sockaddr_storage peer;
    socklen_t length;
    int fd;
    do {
        length = sizeof peer;
        fd = accept4(listen_fd, (struct sockaddr *)&peer, &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    memset(address, 0, 16);
    if (fd >= 0) {
        if (peer.ss_family == AF_INET6) {
            memcpy(address, &((struct sockaddr_in6 *)&peer)->sin6_addr, 16);
        } else if (peer.ss_family == AF_INET) {
            address[10] = 0xff; address[11] = 0xff;
            memcpy(address + 12, &((struct sockaddr_in *)&peer)->sin_addr, 4);
        }
    }
    return fd;
}

int lede_errno(void) { return errno; }

// The loops' I/O as plain system calls. glibc's read, send, sendmsg and epoll_wait are cancellation points:
// each call switches the thread's asynchronous cancellation on and off around the system call, two atomic updates
// of the thread's cancel state. Lede never cancels a thread, and a loop makes about five such calls a request.
ssize_t lede_read(int fd, void *buffer, size_t count) { return syscall(SYS_read, fd, buffer, count); }
ssize_t lede_send(int fd, const void *buffer, size_t count) {
    return syscall(SYS_sendto, fd, buffer, count, MSG_NOSIGNAL, NULL, 0);
}
ssize_t lede_send2(int fd, const void *a, size_t a_count, const void *b, size_t b_count) {
    struct iovec iov[2] = { { (void *)a, a_count }, { (void *)b, b_count } };
    struct msghdr msg = {0};
    msg.msg_iov = iov;
    msg.msg_iovlen = 2;
    return syscall(SYS_sendmsg, fd, &msg, MSG_NOSIGNAL);
}

ssize_t lede_sendv(int fd, const struct iovec *iov, int count) {
    struct msghdr msg = {0};
    msg.msg_iov = (struct iovec *)iov;
    msg.msg_iovlen = (size_t)count;
    return syscall(SYS_sendmsg, fd, &msg, MSG_NOSIGNAL);
}

uint64_t lede_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}


void lede_buffer_stdout(size_t size) { setvbuf(stdout, NULL, _IOFBF, size); }

// The bare limit for Benchmarks/run.sh: an epoll loop per thread that answers every request with fixed bytes (the
// whole response, read from a file: Lede's own answer to the same route, headers included), parsing nothing but
// the blank line that ends each request head. What Lede costs above this is the cost of being an HTTP server.
//   cc -O2 -pthread -o epoll_loop Benchmarks/epoll_loop.c && ./epoll_loop PORT THREADS RESPONSE_FILE
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static char response[65536];
static size_t response_len;
static int port;

// Per connection: how many bytes of "\r\n\r\n" were matched at the end of the last read.
static unsigned char matched[1 << 20];

static void *serve(void *arg) {
    (void)arg;
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    setsockopt(ls, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 4096)) { perror("listen"); exit(1); }
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = ls}, events[256];
    epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
    static __thread char buf[65536];
    static __thread char out[1 << 20];
    for (;;) {
        int n = epoll_wait(ep, events, 256, -1);
        for (int i = 0; i < n; i++) {
            int fd = events[i].data.fd;
            if (fd == ls) {
                int c;
                while ((c = accept4(ls, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    matched[c] = 0;
                    struct epoll_event ce = {.events = EPOLLIN, .data.fd = c};
                    epoll_ctl(ep, EPOLL_CTL_ADD, c, &ce);
                }
                continue;
            }
            ssize_t r = read(fd, buf, sizeof buf);
            if (r <= 0) {
                if (r < 0 && errno == EAGAIN) continue;
                close(fd);
                continue;
            }
            // Count request heads ended in these bytes (pipelined requests each get an answer).
            size_t answers = 0, m = matched[fd];
            static const char end[4] = {'\r', '\n', '\r', '\n'};
            for (ssize_t k = 0; k < r; k++) {
                if (buf[k] == end[m]) { if (++m == 4) { answers++; m = 0; } }
                else m = buf[k] == '\r' ? 1 : 0;
            }
            matched[fd] = (unsigned char)m;
            size_t len = 0;
            while (answers-- > 0 && len + response_len <= sizeof out) { memcpy(out + len, response, response_len); len += response_len; }
            if (len > 0 && write(fd, out, len) < 0 && errno != EAGAIN) close(fd);
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: %s PORT THREADS RESPONSE_FILE\n", argv[0]); return 2; }
    port = atoi(argv[1]);
    int threads = atoi(argv[2]);
    FILE *f = fopen(argv[3], "rb");
    if (!f) { perror(argv[3]); return 1; }
    response_len = fread(response, 1, sizeof response, f);
    fclose(f);
    pthread_t t[64];
    for (int i = 0; i < threads && i < 64; i++) pthread_create(&t[i], NULL, serve, NULL);
    for (int i = 0; i < threads && i < 64; i++) pthread_join(t[i], NULL);
    return 0;
}

// Many server-sent-event readers on one epoll loop, for Benchmarks/streams.sh (not part of CI).
//   sse_bench PORT SUBPATH PUBPATH N ROUNDS IDLE_SECONDS
// Opens N streams to 127.0.0.1:PORT SUBPATH and waits until every one has its response head; prints "ready N" and
// keeps reading (heartbeats) for IDLE_SECONDS; then, ROUNDS times, POSTs "bcast-R" to PUBPATH on a connection of
// its own and measures, per stream, the time from the POST until "bcast-R" arrived. Prints one line per round:
// received count, p50, p99 and max in milliseconds. Bounded: every wait has a deadline.
// Env: SSE_USERS=U sends "Authorization: Bearer user-<i mod U>" on stream i (the live bell: U users);
// SSE_PUBLISH_FILE=F with SSE_PUBLISH_TEMPLATE=T publishes by writing T to F (atomically, by rename) with %ROUND%,
// %ID% and %N% filled in, instead of POSTing (a static fake upstream that the server polls).
// Like an app, a stream refused with Retry-After (a 503 in a storm) comes back after that many seconds; "ready" then
// says how long opening every stream took and how many refusals came first. A refusal without Retry-After fails.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    int fd;
    int sent;        // request written
    int ready;       // response head seen
    int got;         // the current round's marker seen
    char tail[64];   // last bytes seen (a marker split across reads)
    int tail_len;
    char head[512];  // first bytes, until the head is complete
    int head_len;
    double retry_at; // refused: when to come back (0: not waiting)
} conn;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int open_conn(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0) return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS) { close(fd); return -1; }
    return fd;
}

int main(int argc, char **argv) {
    if (argc < 7) { fprintf(stderr, "usage: sse_bench PORT SUBPATH PUBPATH N ROUNDS IDLE_SECONDS\n"); return 2; }
    int port = atoi(argv[1]);
    const char *sub = argv[2], *pub = argv[3];
    int n = atoi(argv[4]), rounds = atoi(argv[5]);
    double idle = atof(argv[6]);
    int ep = epoll_create1(0);
    conn *cs = calloc(n, sizeof(conn));
    int users = getenv("SSE_USERS") ? atoi(getenv("SSE_USERS")) : 0;
    const char *publish_file = getenv("SSE_PUBLISH_FILE"), *publish_template = getenv("SSE_PUBLISH_TEMPLATE");
    // Open in batches so the listen backlog is not overrun.
    int opened = 0;
    for (int i = 0; i < n; i++) {
        cs[i].fd = open_conn(port);
        if (cs[i].fd < 0) { fprintf(stderr, "connect %d failed: %s\n", i, strerror(errno)); return 1; }
        struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.u32 = (uint32_t)i};
        epoll_ctl(ep, EPOLL_CTL_ADD, cs[i].fd, &ev);
        opened++;
    }
    struct epoll_event evs[1024];
    char buf[65536];
    int ready = 0;
    double deadline = now_ms() + 120000;
    long bytes = 0;
    int round = -1;
    char marker[32];
    int marker_len = 0;
    double t0 = 0;
    double *lat = calloc(n, sizeof(double));
    int received = 0;
    double idle_end = 0;
    int phase = 0;  // 0 connecting, 1 idle, 2 rounds
    int refused = 0;
    double opening = now_ms();
    while (1) {
        double t = now_ms();
        if (phase == 0) {
            // Refused streams whose Retry-After has passed come back.
            for (int i = 0; i < n; i++) {
                if (cs[i].retry_at == 0 || cs[i].retry_at > t) continue;
                cs[i].retry_at = 0;
                cs[i].fd = open_conn(port);
                if (cs[i].fd < 0) { fprintf(stderr, "reconnect %d failed: %s\n", i, strerror(errno)); return 1; }
                cs[i].sent = 0; cs[i].head_len = 0;
                struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.u32 = (uint32_t)i};
                epoll_ctl(ep, EPOLL_CTL_ADD, cs[i].fd, &ev);
            }
        }
        if (t > deadline) {
            if (phase == 0) { fprintf(stderr, "only %d of %d streams ready\n", ready, n); return 1; }
            if (phase == 2) {
                // Round timed out: report what arrived.
                qsort(lat, received, sizeof(double), cmp);
                printf("round %d: received %d/%d (timeout)\n", round, received, n);
                fflush(stdout);
                phase = 3;
            }
        }
        if (phase == 1 && t >= idle_end) { phase = 3; }
        if (phase == 3) {
            round++;
            if (round >= rounds) break;
            for (int i = 0; i < n; i++) cs[i].got = 0;
            received = 0;
            marker_len = snprintf(marker, sizeof marker, "bcast-%d", round);
            if (publish_file && publish_template) {
                // Fill the template and swap it in: the server sees it on its next poll.
                FILE *tf = fopen(publish_template, "r");
                if (!tf) { perror("template"); return 1; }
                static char tpl[65536], outb[131072];
                size_t tn = fread(tpl, 1, sizeof tpl - 1, tf); fclose(tf); tpl[tn] = 0;
                size_t on = 0;
                for (size_t i = 0; i < tn && on < sizeof outb - 32;) {
                    if (!strncmp(tpl + i, "%ROUND%", 7)) { on += snprintf(outb + on, 32, "%d", round); i += 7; }
                    else if (!strncmp(tpl + i, "%ID%", 4)) { on += snprintf(outb + on, 32, "%d", 1000 + round); i += 4; }
                    else if (!strncmp(tpl + i, "%N%", 3)) { on += snprintf(outb + on, 32, "%d", round + 1); i += 3; }
                    else outb[on++] = tpl[i++];
                }
                char tmp[4096];
                snprintf(tmp, sizeof tmp, "%s.tmp", publish_file);
                FILE *of = fopen(tmp, "w");
                if (!of) { perror("publish file"); return 1; }
                fwrite(outb, 1, on, of); fclose(of);
                t0 = now_ms();
                if (rename(tmp, publish_file) != 0) { perror("rename"); return 1; }
                deadline = t0 + 60000;
                phase = 2;
                continue;
            }
            int p = socket(AF_INET, SOCK_STREAM, 0);
            struct sockaddr_in a = {0};
            a.sin_family = AF_INET; a.sin_port = htons(port); a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            if (connect(p, (struct sockaddr *)&a, sizeof a) < 0) { perror("publish connect"); return 1; }
            char post[512];
            int plen = snprintf(post, sizeof post, "POST %s HTTP/1.1\r\nHost: bench\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", pub, marker_len, marker);
            t0 = now_ms();
            if (write(p, post, plen) != plen) { perror("publish write"); return 1; }
            // Read the publisher's answer (a proxy that sees its client leave early may drop the request).
            struct timeval tv = {.tv_sec = 5};
            setsockopt(p, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
            char answer[4096];
            int an = 0;
            ssize_t ar;
            while (an < (int)sizeof answer - 1 && (ar = read(p, answer + an, sizeof answer - 1 - an)) > 0) {
                an += ar;
                answer[an] = 0;
                if (strstr(answer, "\r\n\r\n")) break;
            }
            close(p);
            deadline = t0 + 10000;
            phase = 2;
        }
        int k = epoll_wait(ep, evs, 1024, 10);
        for (int e = 0; e < k; e++) {
            conn *c = &cs[evs[e].data.u32];
            if ((evs[e].events & EPOLLOUT) && !c->sent) {
                char req[512], auth[64] = "";
                if (users > 0) snprintf(auth, sizeof auth, "Authorization: Bearer user-%u\r\n", evs[e].data.u32 % (unsigned)users);
                int reqlen = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n%s\r\n", sub, auth);
                if (write(c->fd, req, reqlen) == reqlen) {
                    c->sent = 1;
                    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = evs[e].data.u32};
                    epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
                }
            }
            if (!(evs[e].events & (EPOLLIN | EPOLLHUP | EPOLLERR))) continue;
            ssize_t r = read(c->fd, buf, sizeof buf);
            if (r <= 0) {
                if (r < 0 && errno == EAGAIN) continue;
                fprintf(stderr, "stream %u closed by the server\n", evs[e].data.u32);
                return 1;
            }
            bytes += r;
            if (!c->ready) {
                int take = r < (ssize_t)(sizeof c->head - 1 - c->head_len) ? (int)r : (int)(sizeof c->head - 1 - c->head_len);
                memcpy(c->head + c->head_len, buf, take);
                c->head_len += take;
                c->head[c->head_len] = 0;
                if (strstr(c->head, "\r\n\r\n")) {
                    if (strncmp(c->head, "HTTP/1.1 200", 12) != 0) {
                        char *ra = strcasestr(c->head, "\r\nRetry-After: ");
                        if (!ra || phase != 0) { fprintf(stderr, "stream refused: %.60s\n", c->head); return 1; }
                        // As an app does: come back after Retry-After.
                        refused++;
                        epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
                        close(c->fd);
                        c->fd = -1;
                        c->retry_at = now_ms() + atof(ra + 15) * 1000;
                        continue;
                    }
                    c->ready = 1;
                    if (++ready == n) {
                        printf("ready %d after %.0f ms, %d refusals first\n", n, now_ms() - opening, refused);
                        fflush(stdout);
                        idle_end = now_ms() + idle * 1000;
                        phase = 1;
                    }
                }
            }
            if (phase == 2 && !c->got) {
                // Search the previous tail joined with the new bytes.
                char join[64 + 65536];
                memcpy(join, c->tail, c->tail_len);
                memcpy(join + c->tail_len, buf, r);
                if (memmem(join, c->tail_len + r, marker, marker_len)) {
                    c->got = 1;
                    lat[received++] = now_ms() - t0;
                    if (received == n) {
                        qsort(lat, n, sizeof(double), cmp);
                        printf("round %d: received %d/%d p50 %.1f ms p99 %.1f ms max %.1f ms\n", round, n, n,
                               lat[n / 2], lat[(int)(n * 0.99)], lat[n - 1]);
                        fflush(stdout);
                        phase = 3;
                        deadline = now_ms() + 120000;
                    }
                }
            }
            int keep = r < 48 ? (int)r : 48;
            memcpy(c->tail, buf + r - keep, keep);
            c->tail_len = keep;
        }
    }
    printf("bytes read %ld over %d streams\n", bytes, opened);
    return 0;
}

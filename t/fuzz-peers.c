/* A hostile client for t/8100-procs.sh: `fuzz-peers [--curve SERVER.pub CLIENT.key] N
 * ENDPOINT...` sends each endpoint (a stub listening for other processes) and the Unix socket
 * beside it (@singa-<host:port>, where processes of its host connect) N bad messages of every
 * kind the runtime must survive: raw bytes that are not ZeroMQ at all, random frames,
 * headers with the right magic and random fields, messages claiming to come from a real rank
 * over a stranger's connection, truncated and extra frames, frames above the size limit, and
 * for every leg of the stub's table (runtime/protocol.h) that another process may send, that
 * message with its sender's and addressee's kinds right and the rest random.
 * With --curve its ZeroMQ sockets are CURVE clients of a server with that public key, using that
 * secret key.  `fuzz-peers --joins N ENDPOINT` instead sends a coordinator N malformed joins
 * while it waits for the job's processes: garbage, truncated ones, and well-formed ones from a
 * connection whose identity is not the rank they claim.  Prints how many it sent. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <zmq.h>

#include "runtime/protocol.h"

/* The legs of the stub's table that come from other processes. */
static const rt_leg_row legs[] = {RT_STUB_LEGS(RT_LEG_ROW)};

static unsigned long long rng = 88172645463325252ull;
static char server_key[41], secret_key[41], public_key[41]; /* Z85; empty without --curve */

static int read_key(const char *path, char key[41])
{
    FILE *f = fopen(path, "r");
    int ok = f && fscanf(f, "%40s", key) == 1 && strlen(key) == 40;
    if (f)
        fclose(f);
    return ok ? 0 : -1;
}

static void *dealer(void *ctx, const char *id, int linger)
{
    void *s = zmq_socket(ctx, ZMQ_DEALER);
    int zero = 0;
    if (server_key[0]) /* the handshake and the ZAP round trip take a while on a loaded machine */
        linger = 5000;
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(s, ZMQ_SNDHWM, &zero, sizeof zero);
    if (id)
        zmq_setsockopt(s, ZMQ_ROUTING_ID, id, strlen(id));
    if (server_key[0]) {
        zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, server_key, 40);
        zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, public_key, 40);
        zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, secret_key, 40);
    }
    return s;
}

static unsigned rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng >> 11);
}

static void fill(unsigned char *buf, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char)rnd();
}

/* Bytes straight onto the tcp port, or onto the Unix socket beside it (abstract: a leading NUL):
 * the ZeroMQ handshake must refuse them. */
static int raw_garbage(const char *endpoint, int n, bool unix_socket)
{
    const char *hostport = endpoint + strlen("tcp://");
    const char *colon = strrchr(hostport, ':');
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
    struct sockaddr_un u = {.sun_family = AF_UNIX};
    char host[64];
    snprintf(host, sizeof host, "%.*s", (int)(colon - hostport), hostport);
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
        return 0;
    int named = snprintf(u.sun_path + 1, sizeof u.sun_path - 1, "singa-%s", hostport);
    struct sockaddr *to = unix_socket ? (struct sockaddr *)&u : (struct sockaddr *)&a;
    socklen_t len = unix_socket ? (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)named) : sizeof a;
    int sent = 0;
    for (int i = 0; i < n; i++) {
        int fd = socket(to->sa_family, SOCK_STREAM, 0);
        unsigned char buf[512];
        fill(buf, sizeof buf);
        if (i % 3 == 0) /* a ZMTP greeting's signature, then nonsense */
            memcpy(buf, "\xff\0\0\0\0\0\0\0\1\x7f", 10);
        if (fd >= 0 && connect(fd, to, len) == 0 &&
            send(fd, buf, 1 + rnd() % sizeof buf, MSG_NOSIGNAL) > 0)
            sent++;
        if (fd >= 0)
            close(fd);
    }
    return sent;
}

/* One of the kinds in `mask` (RT_STUBS ...), at random. */
static uint8_t kind_in(unsigned mask)
{
    uint8_t k;
    while (!(mask >> (k = (uint8_t)(rnd() % 3)) & 1))
        ;
    return k;
}

/* A message of a leg another process may send, claiming to come from rank `from`: its type and
 * kinds right, its fields random and mostly in range, its payload random (often float-sized). */
static void leg_message(void *s, int from)
{
    const rt_leg_row *l;
    do
        l = &legs[rnd() % (sizeof legs / sizeof *legs)];
    while (!(l->via & RT_PEER));
    unsigned char head[MSG_HEADER_BYTES], body[256];
    msg m = {.type = l->type, .flags = (uint8_t)(rnd() % 2 ? MSG_F_VALUES : rnd() % 16),
             .src = {kind_in(l->from), (uint16_t)(rnd() % 3), (uint16_t)(rnd() % 3), (uint16_t)from},
             .dst = {kind_in(l->to), (uint16_t)(rnd() % 3), (uint16_t)(rnd() % 3), (uint16_t)(rnd() % 3)},
             .step = (int32_t)(rnd() % 8) - 1, .slice = (int32_t)(rnd() % 24) - 2, .param = (int32_t)(rnd() % 8) - 1,
             .server = (int32_t)(rnd() % 8) - 1, .layer = (int32_t)(rnd() % 8) - 1, .count = rnd() % 4,
             .edge = (int32_t)(rnd() % 4) - 1, .lost = rnd() % 2, .of_step = rnd() % 2, .ptr = rnd() % 2 ? 0 : rnd(),
             .offset = rnd() % 16, .len = rnd() % 32};
    size_t n = rnd() % 3 == 0 ? rnd() % sizeof body : 4 * (rnd() % (sizeof body / 4));
    if (m.type == MSG_FLUSH && rnd() % 2)
        n = MSG_FLUSH_MASK_BYTES;
    fill(body, n);
    msg_encode(&m, head);
    zmq_send(s, head, sizeof head, ZMQ_SNDMORE | ZMQ_DONTWAIT);
    zmq_send(s, body, n, ZMQ_DONTWAIT);
}

/* One bad ZeroMQ message of kind k, over a connection claiming to be rank `from`. */
static void bad_message(void *s, int k, int from)
{
    unsigned char head[MSG_HEADER_BYTES], body[256];
    msg m = {.type = (uint8_t)(1 + rnd() % (MSG_NTYPES + 3)), .flags = (uint8_t)(rnd() % 4),
             .src = {(uint8_t)(rnd() % 3), (uint16_t)(rnd() % 4), (uint16_t)(rnd() % 4), (uint16_t)(rnd() % 4)},
             .dst = {(uint8_t)(rnd() % 3), (uint16_t)(rnd() % 4), (uint16_t)(rnd() % 4), (uint16_t)(rnd() % 4)},
             .slice = (int32_t)(rnd() % 64) - 8, .step = (int32_t)rnd(), .count = rnd() % 5, .ptr = rnd(),
             .offset = rnd() % 80 == 0 ? UINT64_MAX - rnd() % 4 : rnd() % 80, .len = rnd() % 80 == 0 ? rnd() : rnd() % 80};
    fill(body, sizeof body);
    msg_encode(&m, head);
    switch (k % 8) {
    case 0: /* random bytes */
        zmq_send(s, body, 1 + rnd() % sizeof body, ZMQ_DONTWAIT);
        break;
    case 1: /* a header with the magic, random fields, maybe a payload */
        zmq_send(s, head, sizeof head, (k & 8 ? ZMQ_SNDMORE : 0) | ZMQ_DONTWAIT);
        if (k & 8)
            zmq_send(s, body, rnd() % sizeof body, ZMQ_DONTWAIT);
        break;
    case 2: /* truncated header */
        zmq_send(s, head, rnd() % sizeof head, ZMQ_DONTWAIT);
        break;
    case 3: /* too many frames */
        zmq_send(s, head, sizeof head, ZMQ_SNDMORE | ZMQ_DONTWAIT);
        zmq_send(s, body, 8, ZMQ_SNDMORE | ZMQ_DONTWAIT);
        zmq_send(s, body, 8, ZMQ_DONTWAIT);
        break;
    case 4: /* a plausible stop or reply "from" rank 0 or 1, over this stranger's connection */
        m.type = rnd() % 2 ? MSG_STOP : MSG_UPDATE_REPLY;
        m.flags = MSG_F_VALUES;
        m.src = (msg_addr){ENT_STUB, 0, 0, (uint16_t)(rnd() % 2)};
        msg_encode(&m, head);
        zmq_send(s, head, sizeof head, ZMQ_SNDMORE | ZMQ_DONTWAIT);
        zmq_send(s, "fuzz", 4, ZMQ_DONTWAIT);
        break;
    case 5: /* empty frames */
        zmq_send(s, "", 0, ZMQ_DONTWAIT);
        break;
    default:
        leg_message(s, from);
        break;
    }
}

/* Joins no process of a job sends, to a coordinator still meeting its processes. */
static int bad_joins(void *ctx, int n, const char *endpoint)
{
    static const char *const texts[] = {"", "1", "1 2 x", "garbage\n", "1 2 0123456789abcdef tcp://127.0.0.1:1 -",
                                        "1 2 0123456789abcdef tcp://127.0.0.1:1 -\n"}; /* the last: rank 1 from a stranger */
    const char *ids[] = {"stranger", "p1", "p0", NULL};
    int sent = 0;
    for (int c = 0; c < 4; c++) {
        void *s = dealer(ctx, ids[c], 5000);
        zmq_connect(s, endpoint);
        for (int i = c; i < n; i += 4) {
            unsigned char head[MSG_HEADER_BYTES], body[64];
            msg m = {.type = MSG_JOIN, .src = {ENT_STUB, 0, 0, 1}, .dst = {ENT_STUB, 0, 0, 0}};
            msg_encode(&m, head);
            size_t k = (size_t)i % (sizeof texts / sizeof *texts + 1), len;
            if (k < sizeof texts / sizeof *texts) {
                len = strlen(texts[k]);
                if (strcmp(ids[c] ? ids[c] : "", "p1") == 0 && texts[k][len ? len - 1 : 0] == '\n')
                    len--; /* from p1, only malformed ones: a well-formed one would be rank 1's */
                memcpy(body, texts[k], len);
            } else {
                len = 1 + rnd() % sizeof body;
                fill(body, len);
            }
            if (zmq_send(s, head, sizeof head, ZMQ_SNDMORE) >= 0 && zmq_send(s, body, len, 0) >= 0)
                sent++;
        }
        zmq_close(s);
    }
    return sent;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--joins") == 0) {
        void *ctx = zmq_ctx_new();
        int sent = bad_joins(ctx, atoi(argv[2]), argv[3]);
        zmq_ctx_term(ctx); /* waits until they are out, up to the lingers */
        printf("sent %d bad joins\n", sent);
        return 0;
    }
    if (argc > 3 && strcmp(argv[1], "--curve") == 0) {
        if (read_key(argv[2], server_key) < 0 || read_key(argv[3], secret_key) < 0 ||
            zmq_curve_public(public_key, secret_key) < 0) {
            fprintf(stderr, "fuzz-peers: cannot read the keys %s, %s\n", argv[2], argv[3]);
            return 2;
        }
        argv += 3;
        argc -= 3;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: fuzz-peers [--curve SERVER.pub CLIENT.key] N ENDPOINT...\n");
        return 2;
    }
    int n = atoi(argv[1]), total = 0;
    void *ctx = zmq_ctx_new();
    /* Sent without a copy: copying 64 MB per endpoint took longer than some jobs run. */
    size_t big = 64u << 20;
    unsigned char *huge = calloc(1, big);
    /* Each endpoint, then the Unix socket where the processes of its host reach it: N messages to
     * the two. */
    for (int e = 2; e < 2 * argc - 2; e++) {
        bool unix_socket = e >= argc;
        const char *tcp = argv[unix_socket ? e - argc + 2 : e];
        char at[256];
        snprintf(at, sizeof at, unix_socket ? "ipc://@singa-%s" : "%s", unix_socket ? tcp + strlen("tcp://") : tcp);
        total += raw_garbage(tcp, n / 20, unix_socket);
        /* identities a real rank could have (its meeting's "p1", its job's "p1+"), and not ("x", binary) */
        const char *ids[] = {"p1", "p0+", "p1+", "stranger", "\x01\x02", "p99"};
        const int claims[] = {1, 0, 1, 2, 1, 99};
        for (int c = 0; c < 6; c++) {
            void *s = dealer(ctx, ids[c], 1000);
            zmq_connect(s, at);
            for (int i = 0; i < n / 12; i++, total++)
                bad_message(s, (int)rnd(), claims[c]);
            zmq_close(s);
        }
        /* above the size limit: the connection is dropped */
        void *s = dealer(ctx, NULL, 2000);
        zmq_msg_t m;
        zmq_connect(s, at);
        if (huge && zmq_msg_init_data(&m, huge, big, NULL, NULL) == 0) {
            if (zmq_msg_send(&m, s, ZMQ_DONTWAIT) >= 0)
                total++;
            else
                zmq_msg_close(&m);
        }
        zmq_close(s);
    }
    printf("sent %d bad messages to %d endpoints and their Unix sockets\n", total, argc - 2);
    fflush(stdout);
    zmq_ctx_term(ctx); /* waits for what is still queued, up to the lingers */
    free(huge);
    return 0;
}

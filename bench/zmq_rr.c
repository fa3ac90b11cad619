/* bench/zmq_rr: raw ZeroMQ request/reply between two processes on loopback tcp, the ceiling for
 * a param round trip of singa-tui (bench/dist.sh).  The process forks: the child binds a REP
 * socket on tcp://127.0.0.1 (an ephemeral port, handed to the parent through a pipe) and answers
 * every request with a reply of the same size; the parent connects a REQ socket and, for each
 * size, sends a request of SIZE bytes and waits for the SIZE-byte reply, as many times as fit in
 * the timed seconds (after a short warm-up).  Each round trip thus moves SIZE bytes each way,
 * like one step of a worker that sends a param's gradient to a server in another process and
 * gets its new values back.
 *
 * Sends copy the payload into the message (zmq_send), as the runtime's msg_send does, unless -z
 * is given: then both sides send with zmq_msg_init_data and no copy (the best raw ZeroMQ can do).
 * Receives never copy (zmq_msg_recv).  Both processes use one context with ZeroMQ's default
 * single I/O thread, as the runtime does.
 *
 * With -r, each process relays through a thread of its own, as the runtime's stubs do: the
 * parent's requests go over inproc to a relay thread that holds the tcp socket, and the child's
 * relay thread hands them over inproc to the thread that answers (zmq_proxy, frames passed on as
 * they are).  That is raw ZeroMQ with the runtime's four extra thread hand-offs per round trip
 * (worker, stub, stub, server and back), and no work of its own: the most a runtime with a stub
 * per process can reach on this machine.
 *
 * usage: bench/zmq_rr [-t SECONDS] [-w SECONDS] [-z] [-r] SIZE...
 *   SIZE  bytes, or with a suffix K/M (KiB/MiB): 1M, 16M, 1047424
 * prints one line per size:
 *   RESULT bytes=<n> roundtrips_per_sec=<r> mb_per_sec_each_way=<MB/s> usec_per_roundtrip=<us>
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what)
{
    fprintf(stderr, "zmq_rr: %s: %s\n", what, zmq_strerror(zmq_errno()));
    exit(1);
}

static size_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v <= 0) {
        fprintf(stderr, "zmq_rr: bad size '%s'\n", s);
        exit(2);
    }
    if (*end == 'K' || *end == 'k')
        v *= 1024, end++;
    else if (*end == 'M' || *end == 'm')
        v *= 1024 * 1024, end++;
    if (*end) {
        fprintf(stderr, "zmq_rr: bad size '%s'\n", s);
        exit(2);
    }
    return (size_t)v;
}

static void no_free(void *data, void *hint)
{
    (void)data;
    (void)hint;
}

/* Sends n bytes of buf: a copy, or (zero_copy) the buffer itself, which stays alive and is
 * never written while in flight (both sides wait for the answer before sending again). */
static void send_bytes(void *sock, char *buf, size_t n, int zero_copy)
{
    if (!zero_copy) {
        if (zmq_send(sock, buf, n, 0) < 0)
            die("send");
        return;
    }
    zmq_msg_t m;
    if (zmq_msg_init_data(&m, buf, n, no_free, NULL) < 0 || zmq_msg_send(&m, sock, 0) < 0)
        die("send");
}

static size_t recv_bytes(void *sock)
{
    zmq_msg_t m;
    zmq_msg_init(&m);
    int n;
    while ((n = zmq_msg_recv(&m, sock, 0)) < 0 && zmq_errno() == EINTR)
        ;
    if (n < 0)
        die("receive");
    zmq_msg_close(&m);
    return (size_t)n;
}

/* A relay thread (-r): passes messages between `outer` and `inner` until the context ends. */
typedef struct relay {
    void *outer, *inner;
    pthread_t thread;
} relay;

static void *relay_main(void *arg)
{
    relay *r = arg;
    zmq_proxy(r->outer, r->inner, NULL);
    zmq_close(r->outer);
    zmq_close(r->inner);
    return NULL;
}

/* Starts a relay whose outer ROUTER binds (tcp) or whose outer DEALER connects to `tcp`, with its
 * inner side on inproc `name`; returns the tcp endpoint it bound in `bound`. */
static void start_relay(void *ctx, relay *r, const char *tcp, const char *name, char *bound, size_t len)
{
    r->outer = zmq_socket(ctx, tcp ? ZMQ_DEALER : ZMQ_ROUTER);
    r->inner = zmq_socket(ctx, tcp ? ZMQ_ROUTER : ZMQ_DEALER);
    if (!r->outer || !r->inner || zmq_bind(r->inner, name) < 0)
        die("relay");
    if (tcp ? zmq_connect(r->outer, tcp) < 0
            : zmq_bind(r->outer, "tcp://127.0.0.1:*") < 0 || zmq_getsockopt(r->outer, ZMQ_LAST_ENDPOINT, bound, &len) < 0)
        die("relay");
    if (pthread_create(&r->thread, NULL, relay_main, r) != 0) {
        fprintf(stderr, "zmq_rr: cannot start a relay thread\n");
        exit(1);
    }
}

/* The child: binds, tells the parent where, and answers until an empty request. */
static int serve(int fd, size_t most, int zero_copy, int relayed)
{
    void *ctx = zmq_ctx_new(), *rep = zmq_socket(ctx, ZMQ_REP);
    char endpoint[256];
    size_t len = sizeof endpoint;
    char *buf = malloc(most);
    relay stub;
    if (!buf)
        return 1;
    memset(buf, 1, most);
    if (relayed) {
        start_relay(ctx, &stub, NULL, "inproc://server", endpoint, len);
        if (!rep || zmq_connect(rep, "inproc://server") < 0)
            die("connect");
    } else if (!rep || zmq_bind(rep, "tcp://127.0.0.1:*") < 0 ||
               zmq_getsockopt(rep, ZMQ_LAST_ENDPOINT, endpoint, &len) < 0) {
        die("bind");
    }
    if (write(fd, endpoint, strlen(endpoint) + 1) < 0)
        return 1;
    close(fd);
    for (;;) {
        size_t n = recv_bytes(rep);
        send_bytes(rep, buf, n, zero_copy);
        if (n == 0)
            break;
    }
    zmq_close(rep);
    if (relayed) { /* the last reply is still in the relay: let it leave, then end the proxy */
        nanosleep(&(struct timespec){0, 200000000}, NULL);
        zmq_ctx_shutdown(ctx);
        pthread_join(stub.thread, NULL);
    }
    zmq_ctx_term(ctx);
    free(buf);
    return 0;
}

/* Round trips of n bytes each way until `seconds` pass; returns the count and sets *took. */
static long round_trips(void *req, char *buf, size_t n, double seconds, int zero_copy, double *took)
{
    long count = 0;
    double t0 = now(), t;
    do {
        send_bytes(req, buf, n, zero_copy);
        if (recv_bytes(req) != n) {
            fprintf(stderr, "zmq_rr: a reply of the wrong size\n");
            exit(1);
        }
        count++;
    } while ((t = now()) - t0 < seconds);
    *took = t - t0;
    return count;
}

int main(int argc, char **argv)
{
    double seconds = 3, warm = 0.5;
    int zero_copy = 0, relayed = 0, opt;
    while ((opt = getopt(argc, argv, "t:w:zr")) != -1) {
        if (opt == 't')
            seconds = atof(optarg);
        else if (opt == 'w')
            warm = atof(optarg);
        else if (opt == 'z')
            zero_copy = 1;
        else if (opt == 'r')
            relayed = 1;
        else {
            fprintf(stderr, "usage: %s [-t SECONDS] [-w SECONDS] [-z] [-r] SIZE...\n", argv[0]);
            return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "usage: %s [-t SECONDS] [-w SECONDS] [-z] [-r] SIZE...\n", argv[0]);
        return 2;
    }
    size_t most = 1;
    for (int i = optind; i < argc; i++)
        if (parse_size(argv[i]) > most)
            most = parse_size(argv[i]);

    int fds[2];
    if (pipe(fds) < 0) {
        perror("zmq_rr: pipe");
        return 1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("zmq_rr: fork");
        return 1;
    }
    if (pid == 0) {
        close(fds[0]);
        _exit(serve(fds[1], most, zero_copy, relayed));
    }
    close(fds[1]);
    char endpoint[256];
    ssize_t got = 0, r;
    while (got < (ssize_t)sizeof endpoint && (r = read(fds[0], endpoint + got, sizeof endpoint - (size_t)got)) > 0) {
        got += r;
        if (memchr(endpoint, 0, (size_t)got))
            break;
    }
    close(fds[0]);
    if (got <= 0 || !memchr(endpoint, 0, (size_t)got)) {
        fprintf(stderr, "zmq_rr: the server process did not start\n");
        return 1;
    }

    void *ctx = zmq_ctx_new(), *req = zmq_socket(ctx, ZMQ_REQ);
    char *buf = malloc(most);
    relay stub;
    if (!buf)
        return 1;
    memset(buf, 2, most);
    if (relayed)
        start_relay(ctx, &stub, endpoint, "inproc://worker", NULL, 0);
    if (!req || zmq_connect(req, relayed ? "inproc://worker" : endpoint) < 0)
        die("connect");
    for (int i = optind; i < argc; i++) {
        size_t n = parse_size(argv[i]);
        double took;
        if (warm > 0)
            round_trips(req, buf, n, warm, zero_copy, &took);
        long count = round_trips(req, buf, n, seconds, zero_copy, &took);
        double rps = (double)count / took;
        printf("RESULT bytes=%zu roundtrips_per_sec=%.1f mb_per_sec_each_way=%.1f usec_per_roundtrip=%.1f "
               "copy=%s relayed=%s\n",
               n, rps, rps * (double)n / 1e6, 1e6 / rps, zero_copy ? "no" : "yes", relayed ? "yes" : "no");
        fflush(stdout);
    }
    send_bytes(req, buf, 0, 0);
    recv_bytes(req);
    zmq_close(req);
    zmq_ctx_shutdown(ctx);
    if (relayed)
        pthread_join(stub.thread, NULL);
    zmq_ctx_term(ctx);
    free(buf);
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

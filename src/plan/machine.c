/* This machine for the planner: its cores, the bandwidth its memory streams at (a copy of a
 * buffer larger than the caches, the fastest of 3), its L2 and what a message between processes
 * costs a process with one core: a ZeroMQ round trip over TCP on the loopback, as between stubs,
 * between two threads pinned with ZeroMQ's I/O thread to the core a third keeps busy (as a worker
 * computing), half the median of 5 rounds' means: the system calls, the I/O threads and the waits
 * for the core, not the copies, are its cost (an inproc round trip costs a tenth: the messages
 * within a process are left out). */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "runtime/runtime.h"
#include "singa/plan.h"

enum { BUF = 64 << 20, TRIPS = 200, ROUNDS = 5, HEADER = 56 };

typedef struct bench {
    void *ctx;
    char at[64]; /* the endpoint bound */
    int cpu;
    atomic_int stop;
} bench;

static void pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static void *busy(void *arg)
{
    bench *b = arg;
    pin(b->cpu);
    volatile double x = 0;
    while (!atomic_load(&b->stop))
        for (int i = 0; i < 1000; i++)
            x += i;
    return NULL;
}

static void *echo(void *arg)
{
    bench *b = arg;
    pin(b->cpu);
    void *s = zmq_socket(b->ctx, ZMQ_PAIR);
    char m[HEADER];
    if (s && zmq_connect(s, b->at) == 0)
        for (int i = 0; i < TRIPS * ROUNDS && zmq_recv(s, m, sizeof m, 0) >= 0 && zmq_send(s, m, sizeof m, 0) >= 0; i++)
            ;
    zmq_close(s);
    return NULL;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Seconds one way, or 0 when the threads or sockets cannot be had. */
static double message_cost(void)
{
    cpu_set_t was;
    pthread_getaffinity_np(pthread_self(), sizeof was, &was);
    bench b = {.cpu = sched_getcpu()};
    pin(b.cpu < 0 ? 0 : b.cpu); /* ZeroMQ's I/O thread, started with the context, inherits it */
    b.ctx = zmq_ctx_new();
    void *s = b.ctx ? zmq_socket(b.ctx, ZMQ_PAIR) : NULL;
    size_t len = sizeof b.at;
    pthread_t e, w;
    double mean[ROUNDS] = {0}, cost = 0;
    if (!s || b.cpu < 0 || zmq_bind(s, "tcp://127.0.0.1:*") < 0 || zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, b.at, &len) < 0 ||
        pthread_create(&e, NULL, echo, &b) != 0)
        goto out;
    bool spun = pthread_create(&w, NULL, busy, &b) == 0;
    char m[HEADER] = {0};
    int r = 0;
    for (; r < ROUNDS; r++) {
        double t0 = rt_now();
        for (int i = 0; i < TRIPS; i++)
            if (zmq_send(s, m, sizeof m, 0) < 0 || zmq_recv(s, m, sizeof m, 0) < 0)
                goto done;
        mean[r] = (rt_now() - t0) / TRIPS / 2;
    }
done:
    atomic_store(&b.stop, 1);
    if (spun)
        pthread_join(w, NULL);
    zmq_close(s), s = NULL;
    zmq_ctx_shutdown(b.ctx); /* the echo thread's receive returns if the rounds stopped early */
    pthread_join(e, NULL);
    qsort(mean, ROUNDS, sizeof *mean, by_value);
    cost = r == ROUNDS && spun ? mean[ROUNDS / 2] : 0;
out:
    zmq_close(s);
    if (b.ctx)
        zmq_ctx_term(b.ctx);
    pthread_setaffinity_np(pthread_self(), sizeof was, &was);
    return cost;
}

static double memory_bandwidth(void)
{
    char *x = malloc(BUF), *y = malloc(BUF);
    double best = 0;
    if (x && y) {
        memset(x, 1, BUF), memset(y, 2, BUF);
        for (int r = 0; r < 3; r++) {
            double t0 = rt_now();
            memcpy(y, x, BUF);
            best = fmax(best, 2.0 * BUF / fmax(rt_now() - t0, 1e-9));
        }
    }
    free(x), free(y);
    return best;
}

void singa_plan_machine_measure(singa_plan_machine *m)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    *m = (singa_plan_machine){.cores = cores > 0 ? (int)cores : 1, .cache = l2 > 0 ? (double)l2 : 1 << 20};
    m->memory = memory_bandwidth();
    m->message = message_cost();
}

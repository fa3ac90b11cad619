/* The thread pool: workers sleep on a condition variable between loops, after a short spin,
 * because loops come in bursts (every layer of every step) and waking a sleeping thread costs
 * tens of microseconds.  One loop runs at a time; the caller is thread 0. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "singa/pool.h"

#define SPIN 4000 /* polls of the generation before sleeping */

typedef struct worker {
    singa_pool *pool;
    int id;
    pthread_t thread;
} worker;

struct singa_pool {
    int n;
    worker *workers;
    pthread_mutex_t lock;
    pthread_cond_t wake, done;
    atomic_uint generation; /* bumped for every loop; workers run when it changes */
    atomic_int pending;     /* workers still running the current loop */
    atomic_bool stop;
    /* the current loop */
    singa_range_fn fn;
    void *ctx;
    size_t count;
    int used; /* threads taking part */
};

static void range_of(const singa_pool *p, int id, size_t *begin, size_t *end)
{
    *begin = p->count * (size_t)id / (size_t)p->used;
    *end = p->count * (size_t)(id + 1) / (size_t)p->used;
}

static void *work(void *arg)
{
    worker *w = arg;
    singa_pool *p = w->pool;
    unsigned seen = 0;
    for (;;) {
        unsigned gen = atomic_load(&p->generation);
        for (int i = 0; i < SPIN && gen == seen; i++)
            gen = atomic_load(&p->generation);
        if (gen == seen) {
            pthread_mutex_lock(&p->lock);
            while ((gen = atomic_load(&p->generation)) == seen && !p->stop)
                pthread_cond_wait(&p->wake, &p->lock);
            pthread_mutex_unlock(&p->lock);
        }
        if (p->stop)
            return NULL;
        seen = gen;
        if (w->id < p->used) {
            size_t b, e;
            range_of(p, w->id, &b, &e);
            p->fn(p->ctx, b, e);
        }
        if (atomic_fetch_sub(&p->pending, 1) == 1) {
            pthread_mutex_lock(&p->lock);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->lock);
        }
    }
}

singa_pool *singa_pool_new(int nthreads)
{
    singa_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->n = nthreads < 1 ? 1 : nthreads;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    if (p->n > 1 && !(p->workers = calloc((size_t)p->n, sizeof *p->workers))) {
        singa_pool_free(p);
        return NULL;
    }
    for (int i = 1; i < p->n; i++) {
        p->workers[i] = (worker){.pool = p, .id = i};
        if (pthread_create(&p->workers[i].thread, NULL, work, &p->workers[i]) != 0) {
            p->n = i; /* free joins only those started */
            singa_pool_free(p);
            return NULL;
        }
    }
    return p;
}

void singa_pool_free(singa_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = true;
    atomic_fetch_add(&p->generation, 1);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int i = 1; i < p->n; i++)
        pthread_join(p->workers[i].thread, NULL);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->lock);
    free(p->workers);
    free(p);
}

int singa_pool_threads(const singa_pool *p) { return p ? p->n : 1; }

void singa_pool_for(singa_pool *p, size_t n, size_t min_per_thread, singa_range_fn fn, void *ctx)
{
    size_t want = min_per_thread ? n / min_per_thread : n;
    int used = p ? (want < (size_t)p->n ? (int)want : p->n) : 1;
    if (used <= 1) {
        fn(ctx, 0, n);
        return;
    }
    p->fn = fn;
    p->ctx = ctx;
    p->count = n;
    p->used = used;
    atomic_store(&p->pending, p->n - 1);
    pthread_mutex_lock(&p->lock);
    atomic_fetch_add(&p->generation, 1);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    size_t b, e;
    range_of(p, 0, &b, &e);
    fn(ctx, b, e);
    for (int i = 0; i < SPIN && atomic_load(&p->pending) > 0; i++)
        ;
    pthread_mutex_lock(&p->lock);
    while (atomic_load(&p->pending) > 0)
        pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
}

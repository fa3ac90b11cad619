/* Traffic counters: a small table of (type, peer) rows behind one mutex.  The stub counts every
 * message it routes (a few per param per step), so a lock is cheap next to the message.  The
 * workers' step times sit behind the same lock: one record a step. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/stats.h"

enum { PART_COMPUTE, PART_SEND, PART_WAIT, PART_BRIDGE, NPARTS };

typedef struct timed {
    singa_worker_time t;                    /* another process's: as its heartbeat told */
    double ring[SINGA_STEP_WINDOW][NPARTS]; /* this process's: its last steps */
    double bridge;                          /* this process's: bridge waits since its last step */
} timed;

struct singa_stats {
    pthread_mutex_t lock;
    atomic_int rank; /* set when the job starts, while a reader may look */
    singa_traffic *rows;   /* this process's, then (rank 0) the others' as their heartbeats tell */
    int n, cap;
    uint64_t dropped;
    int *lost;             /* ranks found dead */
    int nlost;
    int rejoins, rejoin_rank, rejoin_step; /* rank 0: rejoins so far, and the newest */
    char group[SINGA_STATS_GROUP]; /* a synchronous group that changed: what it is now */
    timed *workers;        /* this process's, then (rank 0) the others' */
    int nworkers, capworkers;
    uint64_t (*link)[2];   /* per peer process: bytes sent, received */
    int nlinks;
    char host[32];
    _Atomic double predicted; /* cluster.plan = "auto": the predicted step, seconds */
};

singa_stats *singa_stats_new(int rank)
{
    singa_stats *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    pthread_mutex_init(&s->lock, NULL);
    atomic_init(&s->rank, rank);
    s->rejoin_rank = s->rejoin_step = -1;
    if (gethostname(s->host, sizeof s->host - 1) < 0)
        snprintf(s->host, sizeof s->host, "localhost");
    return s;
}

void singa_stats_set_rank(singa_stats *s, int rank) { atomic_store(&s->rank, rank); }

void singa_stats_free(singa_stats *s)
{
    if (!s)
        return;
    pthread_mutex_destroy(&s->lock);
    free(s->rows);
    free(s->lost);
    free(s->workers);
    free(s->link);
    free(s);
}

/* A new zeroed row at the end; NULL when out of memory.  Called locked. */
static singa_traffic *new_row(singa_stats *s)
{
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 32;
        singa_traffic *grown = realloc(s->rows, (size_t)cap * sizeof *grown);
        if (!grown)
            return NULL;
        s->rows = grown;
        s->cap = cap;
    }
    singa_traffic *r = &s->rows[s->n++];
    memset(r, 0, sizeof *r);
    return r;
}

/* This process's row of (type, peer), made when missing; NULL when out of memory.  Called
 * locked. */
static singa_traffic *row(singa_stats *s, const char *type, const char *peer)
{
    int rank = atomic_load(&s->rank);
    for (int i = 0; i < s->n; i++)
        if (s->rows[i].rank == rank && strcmp(s->rows[i].type, type) == 0 && strcmp(s->rows[i].peer, peer) == 0)
            return &s->rows[i];
    singa_traffic *r = new_row(s);
    if (!r)
        return NULL;
    r->rank = rank;
    snprintf(r->type, sizeof r->type, "%s", type);
    snprintf(r->peer, sizeof r->peer, "%s", peer);
    return r;
}

void singa_stats_count(singa_stats *s, const char *type, const char *peer, bool sent, size_t bytes, int pending,
                       double wait)
{
    pthread_mutex_lock(&s->lock);
    singa_traffic *r = row(s, type, peer);
    if (r) {
        r->sent += sent && bytes;
        r->bytes_sent += sent ? bytes : 0;
        r->received += !sent && bytes;
        r->bytes_received += sent ? 0 : bytes;
        r->pending += pending;
        r->wait_seconds += wait;
    }
    pthread_mutex_unlock(&s->lock);
}

void singa_stats_link(singa_stats *s, int peer, bool sent, size_t bytes)
{
    if (peer < 0 || peer > UINT16_MAX)
        return;
    pthread_mutex_lock(&s->lock);
    if (peer >= s->nlinks) {
        uint64_t(*grown)[2] = realloc(s->link, (size_t)(peer + 1) * sizeof *grown);
        if (grown) {
            memset(grown + s->nlinks, 0, (size_t)(peer + 1 - s->nlinks) * sizeof *grown);
            s->link = grown;
            s->nlinks = peer + 1;
        }
    }
    if (peer < s->nlinks)
        s->link[peer][sent ? 0 : 1] += bytes;
    pthread_mutex_unlock(&s->lock);
}

void singa_stats_drop(singa_stats *s)
{
    pthread_mutex_lock(&s->lock);
    s->dropped++;
    pthread_mutex_unlock(&s->lock);
}

int singa_stats_snapshot(const singa_stats *s, singa_traffic *rows, int max)
{
    singa_stats *m = (singa_stats *)s; /* the lock is not part of the value */
    pthread_mutex_lock(&m->lock);
    int n = s->n, k = n < max ? n : max;
    if (k > 0)
        memcpy(rows, s->rows, (size_t)k * sizeof *rows);
    pthread_mutex_unlock(&m->lock);
    return n;
}

int singa_stats_own(const singa_stats *s, singa_traffic *rows, int max)
{
    singa_stats *m = (singa_stats *)s;
    pthread_mutex_lock(&m->lock);
    int k = 0, rank = atomic_load(&m->rank);
    for (int i = 0; i < s->n && k < max; i++)
        if (s->rows[i].rank == rank)
            rows[k++] = s->rows[i];
    pthread_mutex_unlock(&m->lock);
    return k;
}

void singa_stats_put(singa_stats *s, int rank, const singa_traffic *rows, int n)
{
    pthread_mutex_lock(&s->lock);
    int k = 0;
    for (int i = 0; i < s->n; i++) /* that rank's old rows go */
        if (s->rows[i].rank != rank)
            s->rows[k++] = s->rows[i];
    s->n = k;
    for (int i = 0; i < n; i++) {
        singa_traffic *r = new_row(s);
        if (!r)
            break;
        *r = rows[i];
        r->rank = rank;
    }
    pthread_mutex_unlock(&s->lock);
}

void singa_stats_lost(singa_stats *s, int rank)
{
    pthread_mutex_lock(&s->lock);
    int *grown = realloc(s->lost, (size_t)(s->nlost + 1) * sizeof *grown);
    if (grown) {
        s->lost = grown;
        s->lost[s->nlost++] = rank;
    }
    pthread_mutex_unlock(&s->lock);
}

void singa_stats_rejoined(singa_stats *s, int rank, int step)
{
    pthread_mutex_lock(&s->lock);
    int kept = 0;
    for (int i = 0; i < s->nlost; i++)
        if (s->lost[i] != rank)
            s->lost[kept++] = s->lost[i];
    s->nlost = kept;
    if (step >= 0) {
        s->rejoins++;
        s->rejoin_rank = rank;
        s->rejoin_step = step;
    }
    pthread_mutex_unlock(&s->lock);
}

void singa_stats_set_group(singa_stats *s, const char *text)
{
    pthread_mutex_lock(&s->lock);
    snprintf(s->group, sizeof s->group, "%s", text);
    pthread_mutex_unlock(&s->lock);
}

void singa_stats_group(const singa_stats *s, char *buf, size_t len)
{
    singa_stats *m = (singa_stats *)s;
    pthread_mutex_lock(&m->lock);
    snprintf(buf, len, "%s", s->group);
    pthread_mutex_unlock(&m->lock);
}

int singa_stats_rejoins(const singa_stats *s, int *rank, int *step)
{
    singa_stats *m = (singa_stats *)s;
    pthread_mutex_lock(&m->lock);
    int n = s->rejoins;
    *rank = s->rejoin_rank;
    *step = s->rejoin_step;
    pthread_mutex_unlock(&m->lock);
    return n;
}

bool singa_stats_rank_lost(const singa_stats *s, int rank)
{
    singa_stats *m = (singa_stats *)s;
    bool lost = false;
    pthread_mutex_lock(&m->lock);
    for (int i = 0; i < s->nlost; i++)
        lost |= s->lost[i] == rank;
    pthread_mutex_unlock(&m->lock);
    return lost;
}

uint64_t singa_stats_dropped(const singa_stats *s)
{
    singa_stats *m = (singa_stats *)s;
    pthread_mutex_lock(&m->lock);
    uint64_t d = s->dropped;
    pthread_mutex_unlock(&m->lock);
    return d;
}

int singa_stats_rank(const singa_stats *s) { return atomic_load(&((singa_stats *)s)->rank); }

void singa_stats_set_predicted(singa_stats *s, double step_seconds) { atomic_store(&s->predicted, step_seconds); }
double singa_stats_predicted(const singa_stats *s) { return atomic_load(&((singa_stats *)s)->predicted); }

/* ---- the workers' step times ---- */

/* A new zeroed worker row at the end; NULL when out of memory.  Called locked. */
static timed *new_timed(singa_stats *s)
{
    if (s->nworkers == s->capworkers) {
        int cap = s->capworkers ? 2 * s->capworkers : 8;
        timed *grown = realloc(s->workers, (size_t)cap * sizeof *grown);
        if (!grown)
            return NULL;
        s->workers = grown;
        s->capworkers = cap;
    }
    timed *w = &s->workers[s->nworkers++];
    memset(w, 0, sizeof *w);
    return w;
}

/* This process's row of worker group.id, made at its first step; NULL when out of memory.
 * Called locked. */
static timed *own_timed(singa_stats *s, int group, int id)
{
    int rank = atomic_load(&s->rank);
    for (int i = 0; i < s->nworkers; i++)
        if (s->workers[i].t.rank == rank && s->workers[i].t.group == group && s->workers[i].t.id == id)
            return &s->workers[i];
    timed *w = new_timed(s);
    if (w) {
        w->t.rank = rank, w->t.group = group, w->t.id = id;
        snprintf(w->t.host, sizeof w->t.host, "%s", s->host);
    }
    return w;
}

void singa_stats_bridge_wait(singa_stats *s, int group, int id, double seconds)
{
    pthread_mutex_lock(&s->lock);
    timed *w = own_timed(s, group, id);
    if (w)
        w->bridge += seconds;
    pthread_mutex_unlock(&s->lock);
}

void singa_stats_step(singa_stats *s, int group, int id, double compute, double send, double wait)
{
    pthread_mutex_lock(&s->lock);
    timed *w = own_timed(s, group, id);
    if (w) {
        double *r = w->ring[w->t.steps++ % SINGA_STEP_WINDOW];
        r[PART_BRIDGE] = w->bridge; /* waited inside the forward and backward passes */
        r[PART_COMPUTE] = compute > w->bridge ? compute - w->bridge : 0;
        r[PART_SEND] = send;
        r[PART_WAIT] = wait;
        w->bridge = 0;
    }
    pthread_mutex_unlock(&s->lock);
}

/* A row as read: this process's with the means of its ring. */
static singa_worker_time read_timed(const timed *w, int rank)
{
    singa_worker_time t = w->t;
    if (t.rank != rank)
        return t;
    t.window = t.steps < SINGA_STEP_WINDOW ? (int)t.steps : SINGA_STEP_WINDOW;
    double sum[NPARTS] = {0};
    for (int i = 0; i < t.window; i++)
        for (int k = 0; k < NPARTS; k++)
            sum[k] += w->ring[i][k];
    double n = t.window ? t.window : 1;
    t.compute = sum[PART_COMPUTE] / n, t.send = sum[PART_SEND] / n, t.wait = sum[PART_WAIT] / n;
    t.bridge = sum[PART_BRIDGE] / n;
    t.work = t.compute + t.send;
    t.step = t.work + t.wait + t.bridge;
    return t;
}

int singa_stats_own_workers(const singa_stats *s, singa_worker_time *rows, int max)
{
    singa_stats *m = (singa_stats *)s;
    pthread_mutex_lock(&m->lock);
    int k = 0, rank = atomic_load(&m->rank);
    for (int i = 0; i < s->nworkers && k < max; i++)
        if (s->workers[i].t.rank == rank && s->workers[i].t.steps)
            rows[k++] = read_timed(&s->workers[i], rank);
    pthread_mutex_unlock(&m->lock);
    return k;
}

void singa_stats_put_workers(singa_stats *s, int rank, const singa_worker_time *rows, int n)
{
    pthread_mutex_lock(&s->lock);
    int k = 0;
    for (int i = 0; i < s->nworkers; i++) /* that rank's old rows go */
        if (s->workers[i].t.rank != rank)
            s->workers[k++] = s->workers[i];
    s->nworkers = k;
    for (int i = 0; i < n; i++) {
        timed *w = new_timed(s);
        if (!w)
            break;
        w->t = rows[i];
        w->t.rank = rank;
    }
    pthread_mutex_unlock(&s->lock);
}

int singa_stats_links(const singa_stats *s, singa_link *rows, int max)
{
    singa_stats *m = (singa_stats *)s;
    pthread_mutex_lock(&m->lock);
    int rank = atomic_load(&m->rank), n = 0;
    uint64_t own = 0, any = 0;
    for (int i = 0; i < s->nworkers; i++) {
        uint64_t steps = s->workers[i].t.steps;
        any = steps > any ? steps : any;
        own = s->workers[i].t.rank == rank && steps > own ? steps : own;
    }
    for (int q = 0; q < s->nlinks; q++) {
        if (!s->link[q][0] && !s->link[q][1])
            continue;
        if (n < max)
            rows[n] = (singa_link){rank, q, s->link[q][0], s->link[q][1], own ? own : any};
        n++;
    }
    pthread_mutex_unlock(&m->lock);
    return n;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Flags the stragglers of each group among rows[0..n). */
static void flag(singa_worker_time *rows, int n, double *works)
{
    for (int i = 0; i < n; i++) {
        int m = 0;
        double group_step = 0;
        for (int j = 0; j < n; j++)
            if (rows[j].group == rows[i].group) {
                works[m++] = rows[j].work;
                group_step = rows[j].step > group_step ? rows[j].step : group_step;
            }
        qsort(works, (size_t)m, sizeof *works, by_value);
        double median = m % 2 ? works[m / 2] : m ? (works[m / 2 - 1] + works[m / 2]) / 2 : 0;
        rows[i].straggler = m > 1 && median > 0 && rows[i].work >= SINGA_STRAGGLER * median &&
                            rows[i].work - median >= SINGA_STRAGGLER_MIN;
        rows[i].share = rows[i].straggler && group_step > 0 ? (rows[i].work - median) / group_step : 0;
    }
}

int singa_stats_workers(const singa_stats *s, singa_worker_time *rows, int max)
{
    singa_stats *m = (singa_stats *)s;
    pthread_mutex_lock(&m->lock);
    int n = 0, rank = atomic_load(&m->rank);
    for (int i = 0; i < s->nworkers; i++)
        n += s->workers[i].t.steps > 0;
    singa_worker_time *all = calloc((size_t)n + 1, sizeof *all);
    double *works = calloc((size_t)n + 1, sizeof *works);
    int k = 0;
    for (int i = 0; all && i < s->nworkers; i++)
        if (s->workers[i].t.steps)
            all[k++] = read_timed(&s->workers[i], rank);
    pthread_mutex_unlock(&m->lock);
    if (!all || !works) {
        free(all);
        free(works);
        return 0;
    }
    flag(all, k, works);
    memcpy(rows, all, (size_t)(k < max ? k : max) * sizeof *rows);
    free(all);
    free(works);
    return k;
}

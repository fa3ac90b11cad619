/* Traffic counters: a small table of (type, peer) rows behind one mutex.  The stub counts every
 * message it routes (a few per param per step), so a lock is cheap next to the message. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/stats.h"

struct singa_stats {
    pthread_mutex_t lock;
    atomic_int rank; /* set when the job starts, while a reader may look */
    singa_traffic *rows;   /* this process's, then (rank 0) the others' as their heartbeats tell */
    int n, cap;
    uint64_t dropped;
    int *lost;             /* ranks found dead */
    int nlost;
};

singa_stats *singa_stats_new(int rank)
{
    singa_stats *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    pthread_mutex_init(&s->lock, NULL);
    atomic_init(&s->rank, rank);
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

void singa_stats_rejoined(singa_stats *s, int rank)
{
    pthread_mutex_lock(&s->lock);
    int kept = 0;
    for (int i = 0; i < s->nlost; i++)
        if (s->lost[i] != rank)
            s->lost[kept++] = s->lost[i];
    s->nlost = kept;
    pthread_mutex_unlock(&s->lock);
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

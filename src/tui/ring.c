/* A bounded lock-free queue (Dmitry Vyukov's bounded MPMC queue, used here with one consumer).
 * Every cell carries a sequence number: a producer claims the cell at `tail` by a CAS on the
 * tail when the cell's sequence equals the position (the cell is free), writes the sample, then
 * publishes it by setting the sequence to position + 1; the consumer takes the cell at `head`
 * when its sequence is head + 1 and frees it by setting it to head + capacity.  Engine threads
 * (one per worker group, concurrently) push after every step; the UI thread pops ten times a
 * second.  A full queue drops the sample instead of waiting: training never waits for the UI. */
#include <stdatomic.h>
#include <stdlib.h>

#include "tui/ring.h"

typedef struct cell {
    atomic_size_t seq;
    tui_sample s;
} cell;

struct tui_ring {
    size_t mask;
    cell *cells;
    /* On their own cache lines: producers hammer tail, the consumer head. */
    _Alignas(64) atomic_size_t tail;
    _Alignas(64) atomic_size_t head;
    _Alignas(64) atomic_uint_fast64_t dropped;
};

tui_ring *tui_ring_new(size_t capacity)
{
    size_t n = 2;
    while (n < capacity)
        n <<= 1;
    tui_ring *r = aligned_alloc(64, sizeof *r);
    if (!r)
        return NULL;
    if (!(r->cells = calloc(n, sizeof *r->cells))) {
        free(r);
        return NULL;
    }
    r->mask = n - 1;
    for (size_t i = 0; i < n; i++)
        atomic_init(&r->cells[i].seq, i);
    atomic_init(&r->tail, 0);
    atomic_init(&r->head, 0);
    atomic_init(&r->dropped, 0);
    return r;
}

void tui_ring_free(tui_ring *r)
{
    if (!r)
        return;
    free(r->cells);
    free(r);
}

bool tui_ring_push(tui_ring *r, const tui_sample *s)
{
    size_t pos = atomic_load_explicit(&r->tail, memory_order_relaxed);
    for (;;) {
        cell *c = &r->cells[pos & r->mask];
        size_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
        intptr_t diff = (intptr_t)seq - (intptr_t)pos;
        if (diff == 0) {
            if (atomic_compare_exchange_weak_explicit(&r->tail, &pos, pos + 1, memory_order_relaxed,
                                                      memory_order_relaxed)) {
                c->s = *s;
                atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
                return true;
            }
            /* another producer took it; pos now holds the current tail */
        } else if (diff < 0) { /* the cell still holds a sample the consumer has not taken */
            atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
            return false;
        } else {
            pos = atomic_load_explicit(&r->tail, memory_order_relaxed);
        }
    }
}

bool tui_ring_pop(tui_ring *r, tui_sample *out)
{
    size_t pos = atomic_load_explicit(&r->head, memory_order_relaxed);
    cell *c = &r->cells[pos & r->mask];
    size_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
    if ((intptr_t)seq - (intptr_t)(pos + 1) < 0)
        return false; /* empty, or a producer is still writing this cell */
    *out = c->s;
    atomic_store_explicit(&c->seq, pos + r->mask + 1, memory_order_release);
    atomic_store_explicit(&r->head, pos + 1, memory_order_relaxed);
    return true;
}

uint64_t tui_ring_dropped(tui_ring *r) { return atomic_load_explicit(&r->dropped, memory_order_relaxed); }

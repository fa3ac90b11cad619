/* A sequence lock (as Linux's seqlock): the writer makes the sequence odd, writes, makes it even
 * again; a reader copies and retries when the sequence was odd or changed meanwhile.  The writer
 * (a training thread) never waits and never skips an update; the reader (the UI, ten times a
 * second) retries at most while one sample is being written.  The words are atomics, read and
 * written relaxed between fences, so a torn copy is detected, never undefined. */
#include <string.h>

#include "tui/snapshot.h"

void tui_snapshot_init(tui_snapshot *s)
{
    atomic_init(&s->seq, 0);
    for (size_t i = 0; i < TUI_SNAPSHOT_WORDS; i++)
        atomic_init(&s->words[i], 0);
}

void tui_snapshot_write(tui_snapshot *s, const tui_sample *x)
{
    uint64_t w[TUI_SNAPSHOT_WORDS] = {0};
    memcpy(w, x, sizeof *x);
    unsigned q = atomic_load_explicit(&s->seq, memory_order_relaxed);
    atomic_store_explicit(&s->seq, q + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    for (size_t i = 0; i < TUI_SNAPSHOT_WORDS; i++)
        atomic_store_explicit(&s->words[i], w[i], memory_order_relaxed);
    atomic_store_explicit(&s->seq, q + 2, memory_order_release);
}

bool tui_snapshot_read(tui_snapshot *s, tui_sample *out)
{
    uint64_t w[TUI_SNAPSHOT_WORDS];
    for (;;) {
        unsigned a = atomic_load_explicit(&s->seq, memory_order_acquire);
        if (a == 0)
            return false;
        if (a & 1)
            continue;
        for (size_t i = 0; i < TUI_SNAPSHOT_WORDS; i++)
            w[i] = atomic_load_explicit(&s->words[i], memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&s->seq, memory_order_relaxed) == a) {
            memcpy(out, w, sizeof *out);
            return true;
        }
    }
}

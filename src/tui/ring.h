/* The hand-over of training samples from the engine's threads to the UI thread. */
#ifndef SINGA_TUI_RING_H
#define SINGA_TUI_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum tui_sample_kind {
    TUI_SAMPLE_STEP,   /* after one training step: that step's own loss and accuracy */
    TUI_SAMPLE_RECORD, /* a display, test or validation result */
    TUI_SAMPLE_RESET,  /* attached: the job sends its history again; drop what is shown */
} tui_sample_kind;

typedef struct tui_sample {
    uint8_t kind;  /* tui_sample_kind */
    uint8_t phase; /* singa_phase */
    uint16_t job;  /* which singa.train of the script (1, 2, ...): older ones are stale */
    int group;     /* worker group */
    int step, total_steps;
    float loss, accuracy; /* NAN when the net does not report one */
    double images_per_sec, lr, elapsed, eta; /* NAN: not known (a record file holds no lr) */
    double seconds; /* records: since training started, on the clock of the host that wrote them */
} tui_sample;

typedef struct tui_ring tui_ring;

/* A queue of at least `capacity` samples (rounded up to a power of two); NULL when out of memory. */
tui_ring *tui_ring_new(size_t capacity);
void tui_ring_free(tui_ring *r);
/* Any thread.  Never waits: when the queue is full the sample is dropped (and counted) and this
 * returns false, so a UI that falls behind never slows training. */
bool tui_ring_push(tui_ring *r, const tui_sample *s);
/* One consumer thread only.  False when the queue is empty. */
bool tui_ring_pop(tui_ring *r, tui_sample *out);
/* Samples dropped so far because the queue was full. */
uint64_t tui_ring_dropped(tui_ring *r);

#endif

/* The metric history the plot shows: one series per worker group and phase. */
#ifndef SINGA_TUI_SERIES_H
#define SINGA_TUI_SERIES_H

#include <stdio.h>

#include "singa/layer.h"
#include "tui/ring.h"

#define TUI_MAX_GROUPS 16
#define TUI_MAX_SERIES (3 * TUI_MAX_GROUPS)
#define TUI_SERIES_CAP 4096 /* points per series before neighbours merge */
#define TUI_RECENT 20       /* steps the "latest" train values average over */

enum { TUI_LOSS, TUI_ACC, TUI_METRICS };

typedef struct tui_point {
    int step;              /* the last step it covers */
    int n;                 /* steps averaged into it */
    float v[TUI_METRICS];  /* NAN when not reported */
} tui_point;

typedef struct tui_series {
    int group;
    singa_phase phase;
    tui_point *pts;
    int n;
    int stride;            /* steps per point: doubles whenever the series fills up */
    tui_point pending;     /* the point being filled (pending.n steps so far), as sums */
    int pending_count[TUI_METRICS];
    float recent[TUI_METRICS][TUI_RECENT];
    int nrecent;
} tui_series;

typedef struct tui_history {
    tui_series *series[TUI_MAX_SERIES];
    int n;
    int first_step, last_step; /* over every series; first > last while empty */
} tui_history;

void tui_history_init(tui_history *h);
/* Frees every series; the history is empty (and initialised) afterwards. */
void tui_history_clear(tui_history *h);
/* Adds one value pair (NAN for a metric not reported).  Train series take one per step and
 * average `stride` steps into a point; test and validation series keep every record.  -1 when
 * out of memory (the value is lost). */
int tui_history_add(tui_history *h, int group, singa_phase phase, int step, float loss, float acc);
/* A sample from the job's hooks: a step into its group's train series, a test or validation
 * record into its own (display records repeat the steps' values and are skipped). */
int tui_history_add_sample(tui_history *h, const tui_sample *x);
/* Point i of s, for i < tui_series_len(s): the stored points, then the one being filled. */
int tui_series_len(const tui_series *s);
tui_point tui_series_at(const tui_series *s, int i);
/* The mean of the last TUI_RECENT values of a metric (NAN if none). */
float tui_series_recent(const tui_series *s, int metric);
/* Every point as CSV: step,phase,group,loss,accuracy,steps (header first). */
int tui_history_write_csv(const tui_history *h, FILE *f);

#endif

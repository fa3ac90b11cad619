/* Series keep bounded memory for runs of any length: a train series stores one point per
 * `stride` steps and, when its TUI_SERIES_CAP points are used, merges neighbours and doubles the
 * stride, so a million-step run still has a few thousand points spread evenly over it, which is
 * more than a terminal has columns.  Averaging steps into points is also the plot's smoothing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tui/series.h"

void tui_history_init(tui_history *h)
{
    memset(h, 0, sizeof *h);
    h->first_step = 1;
    h->last_step = 0;
}

void tui_history_clear(tui_history *h)
{
    for (int i = 0; i < h->n; i++) {
        free(h->series[i]->pts);
        free(h->series[i]);
    }
    tui_history_init(h);
}

static tui_series *find_or_add(tui_history *h, int group, singa_phase phase)
{
    for (int i = 0; i < h->n; i++)
        if (h->series[i]->group == group && h->series[i]->phase == phase)
            return h->series[i];
    if (h->n == TUI_MAX_SERIES)
        return NULL;
    tui_series *s = calloc(1, sizeof *s);
    if (!s || !(s->pts = malloc(TUI_SERIES_CAP * sizeof *s->pts))) {
        free(s);
        return NULL;
    }
    s->group = group;
    s->phase = phase;
    s->stride = 1;
    /* Keep the series sorted by group, then phase (train, validation, test): a stable legend. */
    int at = h->n;
    while (at > 0 && (h->series[at - 1]->group > group ||
                      (h->series[at - 1]->group == group && h->series[at - 1]->phase > phase))) {
        h->series[at] = h->series[at - 1];
        at--;
    }
    h->series[at] = s;
    h->n++;
    return s;
}

/* The mean of a and b weighted by their steps, per metric over the ones that have it. */
static tui_point merge(tui_point a, tui_point b)
{
    tui_point m = {.step = b.step, .n = a.n + b.n};
    for (int k = 0; k < TUI_METRICS; k++) {
        bool ha = !isnan(a.v[k]), hb = !isnan(b.v[k]);
        m.v[k] = ha && hb ? (a.v[k] * (float)a.n + b.v[k] * (float)b.n) / (float)(a.n + b.n) : ha ? a.v[k] : b.v[k];
    }
    return m;
}

static void store(tui_series *s, tui_point p)
{
    if (s->n == TUI_SERIES_CAP) {
        for (int i = 0; i < s->n / 2; i++)
            s->pts[i] = merge(s->pts[2 * i], s->pts[2 * i + 1]);
        s->n /= 2;
        s->stride *= 2;
    }
    s->pts[s->n++] = p;
}

int tui_series_len(const tui_series *s) { return s->n + (s->pending.n > 0); }

tui_point tui_series_at(const tui_series *s, int i)
{
    if (i < s->n)
        return s->pts[i];
    tui_point p = s->pending;
    for (int k = 0; k < TUI_METRICS; k++)
        p.v[k] = s->pending_count[k] ? p.v[k] / (float)s->pending_count[k] : NAN;
    return p;
}

int tui_history_add(tui_history *h, int group, singa_phase phase, int step, float loss, float acc)
{
    tui_series *s = find_or_add(h, group, phase);
    if (!s)
        return -1;
    float v[TUI_METRICS] = {loss, acc};
    if (step < h->first_step || h->first_step > h->last_step)
        h->first_step = step;
    if (step > h->last_step)
        h->last_step = step;
    for (int k = 0; k < TUI_METRICS; k++)
        s->recent[k][s->nrecent % TUI_RECENT] = v[k];
    s->nrecent++;
    if (s->pending.n == 0) {
        memset(&s->pending, 0, sizeof s->pending);
        memset(s->pending_count, 0, sizeof s->pending_count);
    }
    s->pending.step = step;
    s->pending.n++;
    for (int k = 0; k < TUI_METRICS; k++)
        if (!isnan(v[k])) {
            s->pending.v[k] += v[k];
            s->pending_count[k]++;
        }
    if (s->pending.n >= s->stride) {
        store(s, tui_series_at(s, s->n));
        s->pending.n = 0;
    }
    return 0;
}

int tui_history_add_sample(tui_history *h, const tui_sample *x)
{
    if (x->kind == TUI_SAMPLE_STEP)
        return tui_history_add(h, x->group, SINGA_PHASE_TRAIN, x->step, x->loss, x->accuracy);
    if (x->phase != SINGA_PHASE_TRAIN)
        return tui_history_add(h, x->group, (singa_phase)x->phase, x->step, x->loss, x->accuracy);
    return 0;
}

float tui_series_recent(const tui_series *s, int metric)
{
    int n = s->nrecent < TUI_RECENT ? s->nrecent : TUI_RECENT, used = 0;
    double sum = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(s->recent[metric][i])) {
            sum += s->recent[metric][i];
            used++;
        }
    return used ? (float)(sum / used) : NAN;
}

int tui_history_write_csv(const tui_history *h, FILE *f)
{
    fputs("step,phase,group,loss,accuracy,steps\n", f);
    for (int i = 0; i < h->n; i++) {
        const tui_series *s = h->series[i];
        const char *phase = s->phase == SINGA_PHASE_TRAIN ? "train" : s->phase == SINGA_PHASE_TEST ? "test" : "validation";
        for (int j = 0; j < tui_series_len(s); j++) {
            tui_point p = tui_series_at(s, j);
            char l[32] = "", a[32] = "";
            if (isfinite(p.v[TUI_LOSS]))
                snprintf(l, sizeof l, "%.6g", p.v[TUI_LOSS]);
            if (isfinite(p.v[TUI_ACC]))
                snprintf(a, sizeof a, "%.6g", p.v[TUI_ACC]);
            fprintf(f, "%d,%s,%d,%s,%s,%d\n", p.step, phase, s->group, l, a, p.n);
        }
    }
    return ferror(f) ? -1 : 0;
}

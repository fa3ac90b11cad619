/* The plot: values are averaged per sub-column (the steps one braille dot column covers), then
 * consecutive sub-columns are joined by straight lines (Bresenham), so a falling loss reads as
 * a curve at any zoom.  Test and validation results are few, and drawn as marks on top. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/plot.h"

#define LABEL_W 8 /* y labels (7) and the axis */

typedef struct grid {
    int w, h, sx, sy; /* cells, and dots per cell */
    uint8_t *bits;    /* per cell: which dots are set */
    int8_t *role;     /* per cell: the series that set a dot last (-1: none) */
} grid;

static void dot(grid *g, int gx, int gy, int role)
{
    if (gx < 0 || gy < 0 || gx >= g->w * g->sx || gy >= g->h * g->sy)
        return;
    int cx = gx / g->sx, cy = gy / g->sy, dx = gx % g->sx, dy = gy % g->sy;
    static const uint8_t braille[2][4] = {{0x01, 0x02, 0x04, 0x40}, {0x08, 0x10, 0x20, 0x80}};
    size_t at = (size_t)cy * (size_t)g->w + (size_t)cx;
    g->bits[at] |= g->sx == 2 ? braille[dx][dy] : (uint8_t)(1u << dy);
    g->role[at] = (int8_t)role;
}

static void line(grid *g, int x0, int y0, int x1, int y1, int role)
{
    int dx = abs(x1 - x0), dy = -abs(y1 - y0), sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1, e = dx + dy;
    for (;;) {
        dot(g, x0, y0, role);
        if (x0 == x1 && y0 == y1)
            return;
        int e2 = 2 * e;
        if (e2 >= dy) {
            e += dy;
            x0 += sx;
        }
        if (e2 <= dx) {
            e += dx;
            y0 += sy;
        }
    }
}

/* ASCII: one of three heights per cell, or a bar when a line crosses several. */
static uint32_t ascii_cell(uint8_t bits)
{
    switch (bits) {
    case 1:
        return '\'';
    case 2:
        return '-';
    case 4:
        return '.';
    default:
        return '|';
    }
}

void tui_plot_num(char *buf, size_t len, double v)
{
    double a = fabs(v);
    if (v == 0)
        snprintf(buf, len, "0");
    else if (a >= 1e5 && a < 1e9)
        snprintf(buf, len, "%.0fk", v / 1e3);
    else if (a >= 1e-3 && a < 1e5)
        snprintf(buf, len, a >= 100 ? "%.0f" : a >= 10 ? "%.2f" : "%.4f", v);
    else
        snprintf(buf, len, "%.1e", v);
    /* trim zeros after the point: "0.5000" -> "0.5" */
    if (strchr(buf, '.') && !strchr(buf, 'e') && !strchr(buf, 'k')) {
        size_t n = strlen(buf);
        while (n > 1 && buf[n - 1] == '0')
            buf[--n] = 0;
        if (buf[n - 1] == '.')
            buf[n - 1] = 0;
    }
}

static void step_label(char *buf, size_t len, double s)
{
    if (s >= 1e6)
        snprintf(buf, len, "%.1fM", s / 1e6);
    else if (s >= 1e4)
        snprintf(buf, len, "%.0fk", s / 1e3);
    else
        snprintf(buf, len, "%.0f", s);
}

uint32_t tui_plot_mark(singa_phase phase, bool unicode)
{
    if (phase == SINGA_PHASE_TEST)
        return unicode ? 0x25CF : 'o'; /* ● */
    if (phase == SINGA_PHASE_VALIDATION)
        return unicode ? 0x25C6 : 'x'; /* ◆ */
    return unicode ? 0x2500 : '-';     /* ─ */
}

static bool usable(double v, bool logy) { return isfinite(v) && (!logy || v > 0); }

void tui_plot_draw(tui_canvas *c, int x, int y, int w, int h, const tui_history *hist, const tui_plot_view *v)
{
    const char *what = v->metric == TUI_LOSS ? (v->logy ? "loss (log)" : "loss") : "accuracy";
    if (w < 16 || h < 4) {
        tui_canvas_text(c, x, y, what, TUI_R_DIM, 0);
        return;
    }
    int dw = w - LABEL_W, dh = h - 2;
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < hist->n; i++) {
        const tui_series *s = hist->series[i];
        for (int j = 0; j < tui_series_len(s); j++) {
            tui_point p = tui_series_at(s, j);
            double val = p.v[v->metric];
            if (p.step >= v->x0 && p.step <= v->x1 && usable(val, v->logy)) {
                lo = fmin(lo, val);
                hi = fmax(hi, val);
            }
        }
    }
    if (!(lo <= hi)) {
        char note[64];
        snprintf(note, sizeof note, "%s: no values yet", what);
        tui_canvas_text(c, x + (w - (int)strlen(note)) / 2, y + h / 2, note, TUI_R_DIM, 0);
        return;
    }
    double tlo = v->logy ? log10(lo) : lo, thi = v->logy ? log10(hi) : hi;
    double pad = thi > tlo ? 0.05 * (thi - tlo) : fmax(fabs(thi) * 0.05, 1e-6);
    tlo -= pad;
    thi += pad;

    grid g = {dw, dh, v->unicode ? 2 : 1, v->unicode ? 4 : 3, calloc((size_t)dw * (size_t)dh, 1),
              malloc((size_t)dw * (size_t)dh)};
    int gw = dw * g.sx, gh = dh * g.sy;
    double *sum = calloc((size_t)gw, sizeof *sum);
    int *cnt = calloc((size_t)gw, sizeof *cnt);
    if (!g.bits || !g.role || !sum || !cnt) {
        free(g.bits), free(g.role), free(sum), free(cnt);
        tui_canvas_text(c, x, y, "out of memory", TUI_R_ERROR, 0);
        return;
    }
    memset(g.role, -1, (size_t)dw * (size_t)dh);
    double span = v->x1 - v->x0;
#define GX(step) ((int)lround(((step) - v->x0) / span * (gw - 1)))
#define GY(val) ((int)lround((thi - (v->logy ? log10(val) : (val))) / (thi - tlo) * (gh - 1)))
    for (int i = 0; i < hist->n; i++) { /* train series: lines through per-column means */
        const tui_series *s = hist->series[i];
        if (s->phase != SINGA_PHASE_TRAIN)
            continue;
        memset(sum, 0, (size_t)gw * sizeof *sum);
        memset(cnt, 0, (size_t)gw * sizeof *cnt);
        for (int j = 0; j < tui_series_len(s); j++) {
            tui_point p = tui_series_at(s, j);
            double val = p.v[v->metric];
            if (p.step < v->x0 || p.step > v->x1 || !usable(val, v->logy))
                continue;
            int gx = GX(p.step);
            sum[gx] += v->logy ? log10(val) : val;
            cnt[gx]++;
        }
        int px = -1, py = 0, role = TUI_R_SERIES + s->group % TUI_NSERIES;
        for (int gx = 0; gx < gw; gx++) {
            if (!cnt[gx])
                continue;
            double m = sum[gx] / cnt[gx];
            int gy = (int)lround((thi - m) / (thi - tlo) * (gh - 1));
            if (px < 0)
                dot(&g, gx, gy, role);
            else
                line(&g, px, py, gx, gy, role);
            px = gx;
            py = gy;
        }
    }
    for (int cy = 0; cy < dh; cy++)
        for (int cx = 0; cx < dw; cx++) {
            size_t at = (size_t)cy * (size_t)dw + (size_t)cx;
            if (g.bits[at])
                tui_canvas_put(c, x + LABEL_W + cx, y + cy, v->unicode ? 0x2800u + g.bits[at] : ascii_cell(g.bits[at]),
                               g.role[at], 0);
        }
    for (int i = 0; i < hist->n; i++) { /* test and validation results: marks */
        const tui_series *s = hist->series[i];
        if (s->phase == SINGA_PHASE_TRAIN)
            continue;
        for (int j = 0; j < tui_series_len(s); j++) {
            tui_point p = tui_series_at(s, j);
            double val = p.v[v->metric];
            if (p.step < v->x0 || p.step > v->x1 || !usable(val, v->logy))
                continue;
            tui_canvas_put(c, x + LABEL_W + GX(p.step) / g.sx, y + GY(val) / g.sy, tui_plot_mark(s->phase, v->unicode),
                           TUI_R_SERIES + s->group % TUI_NSERIES, 1);
        }
    }
#undef GX
#undef GY
    free(g.bits), free(g.role), free(sum), free(cnt);

    /* y axis: labels every 4 rows or so, always at the top and bottom rows */
    uint32_t vbar = v->unicode ? 0x2502 : '|', tick = v->unicode ? 0x2524 : '+';
    int every = dh >= 12 ? 4 : dh >= 6 ? (dh - 1) / 2 : dh - 1;
    for (int r = 0; r < dh; r++) {
        bool label = r == 0 || r == dh - 1 || (every > 0 && r % every == 0 && dh - 1 - r >= 2);
        tui_canvas_put(c, x + LABEL_W - 1, y + r, label ? tick : vbar, TUI_R_DIM, 0);
        if (!label)
            continue;
        double t = thi - (r * g.sy + g.sy / 2.0) / (gh - 1) * (thi - tlo);
        char buf[16];
        tui_plot_num(buf, sizeof buf, v->logy ? pow(10, t) : t);
        tui_canvas_text(c, x + LABEL_W - 1 - (int)strlen(buf), y + r, buf, TUI_R_DIM, 0);
    }
    /* x axis and step labels at the left, middle and right */
    tui_canvas_put(c, x + LABEL_W - 1, y + dh, v->unicode ? 0x2514 : '+', TUI_R_DIM, 0);
    for (int cx = 0; cx < dw; cx++)
        tui_canvas_put(c, x + LABEL_W + cx, y + dh, v->unicode ? 0x2500 : '-', TUI_R_DIM, 0);
    char lab[16];
    step_label(lab, sizeof lab, v->x0);
    tui_canvas_text(c, x + LABEL_W, y + dh + 1, lab, TUI_R_DIM, 0);
    int used = LABEL_W + (int)strlen(lab);
    step_label(lab, sizeof lab, v->x0 + span / 2);
    int mid = x + LABEL_W + dw / 2 - (int)strlen(lab) / 2;
    if (mid > x + used + 1) {
        tui_canvas_text(c, mid, y + dh + 1, lab, TUI_R_DIM, 0);
        tui_canvas_put(c, x + LABEL_W + dw / 2, y + dh, v->unicode ? 0x252C : '+', TUI_R_DIM, 0);
        used = mid - x + (int)strlen(lab);
    }
    step_label(lab, sizeof lab, v->x1);
    int right = x + w - (int)strlen(lab);
    if (right > x + used + 1)
        tui_canvas_text(c, right, y + dh + 1, lab, TUI_R_DIM, 0);
    /* the metric's name on the x axis, where it hides nothing */
    if (dw > (int)strlen(what) + 4)
        tui_canvas_text(c, x + LABEL_W + 1, y + dh, what, TUI_R_TITLE, 0);
}

/* A legend entry's text, "train g1 0.339/87.7%": the group when there are several, the
 * accuracy when `with_acc` and it is known; the latest training values, or the last result. */
static void entry(const tui_series *s, int groups, bool with_acc, char *text, size_t len)
{
    bool train = s->phase == SINGA_PHASE_TRAIN;
    float loss = tui_series_recent(s, TUI_LOSS), acc = tui_series_recent(s, TUI_ACC);
    if (!train) {
        tui_point last = tui_series_at(s, tui_series_len(s) - 1);
        loss = last.v[TUI_LOSS];
        acc = last.v[TUI_ACC];
    }
    const char *phase = train ? "train" : s->phase == SINGA_PHASE_TEST ? "test" : "val";
    char num[16];
    tui_plot_num(num, sizeof num, loss);
    int n = groups > 1 ? snprintf(text, len, "%s g%d ", phase, s->group) : snprintf(text, len, "%s ", phase);
    n += snprintf(text + n, len - (size_t)n, "%s", isfinite(loss) ? num : "-");
    if (with_acc && isfinite(acc))
        snprintf(text + n, len - (size_t)n, "/%.1f%%", 100 * acc);
}

/* The training series come first, so that every worker group's shows before the test results;
 * entries that do not all fit drop their accuracies, and then the last ones. */
void tui_plot_legend(tui_canvas *c, int x, int y, int w, const tui_history *hist, bool unicode)
{
    if (hist->n == 0) {
        tui_canvas_text(c, x, y, "no metrics yet", TUI_R_DIM, 0);
        return;
    }
    const tui_series *order[TUI_MAX_SERIES];
    int n = 0, groups = 0;
    for (int train = 1; train >= 0; train--)
        for (int i = 0; i < hist->n; i++)
            if ((hist->series[i]->phase == SINGA_PHASE_TRAIN) == train)
                order[n++] = hist->series[i];
    for (int i = 0; i < n; i++)
        groups = order[i]->group + 1 > groups ? order[i]->group + 1 : groups;
    char text[96];
    int full = 0; /* the width with accuracies: a mark, a space, the text, two spaces */
    for (int i = 0; i < n; i++) {
        entry(order[i], groups, true, text, sizeof text);
        full += 2 + (int)strlen(text) + 2;
    }
    int end = x + w;
    for (int i = 0; i < n; i++) {
        const tui_series *s = order[i];
        entry(s, groups, full - 2 <= w, text, sizeof text);
        if (x + 2 + (int)strlen(text) > end)
            break;
        int role = TUI_R_SERIES + s->group % TUI_NSERIES;
        tui_canvas_put(c, x, y, tui_plot_mark(s->phase, unicode), role, s->phase != SINGA_PHASE_TRAIN);
        x = tui_canvas_text(c, x + 2, y, text, role, 0) + 2;
    }
}

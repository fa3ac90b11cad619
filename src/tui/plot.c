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

/* Whether point p of the view's metric is in the view and can be drawn; its value in *val. */
static bool shown(tui_point p, const tui_plot_view *v, double *val)
{
    *val = p.v[v->metric];
    return p.step >= v->x0 && p.step <= v->x1 && usable(*val, v->logy);
}

/* Where a step and a value fall among the plot's dots.  Values are placed as t (their log10 on
 * a log axis) between tlo and thi: the values shown, padded by 5% so no line runs on a border. */
typedef struct scale {
    double x0, span; /* the steps shown */
    double tlo, thi;
    bool logy;
    int gw, gh; /* dots across and down */
} scale;

static double scale_t(const scale *s, double val) { return s->logy ? log10(val) : val; }
static int scale_x(const scale *s, double step) { return (int)lround((step - s->x0) / s->span * (s->gw - 1)); }
static int scale_y(const scale *s, double t) { return (int)lround((s->thi - t) / (s->thi - s->tlo) * (s->gh - 1)); }

/* The scale of the values in view on a grid of gw x gh dots; false when no value is in view. */
static bool scale_fit(scale *s, const tui_history *hist, const tui_plot_view *v, int gw, int gh)
{
    double lo = INFINITY, hi = -INFINITY, val;
    for (int i = 0; i < hist->n; i++)
        for (int j = 0; j < tui_series_len(hist->series[i]); j++)
            if (shown(tui_series_at(hist->series[i], j), v, &val)) {
                lo = fmin(lo, val);
                hi = fmax(hi, val);
            }
    if (!(lo <= hi))
        return false;
    *s = (scale){.x0 = v->x0, .span = v->x1 - v->x0, .logy = v->logy, .gw = gw, .gh = gh};
    s->tlo = scale_t(s, lo);
    s->thi = scale_t(s, hi);
    double pad = s->thi > s->tlo ? 0.05 * (s->thi - s->tlo) : fmax(fabs(s->thi) * 0.05, 1e-6);
    s->tlo -= pad;
    s->thi += pad;
    return true;
}

/* A train series into g: the mean of each dot column's values, joined by lines.  sum and cnt
 * are scratch of sc->gw each. */
static void series_line(grid *g, const scale *sc, const tui_series *s, const tui_plot_view *v, double *sum, int *cnt)
{
    memset(sum, 0, (size_t)sc->gw * sizeof *sum);
    memset(cnt, 0, (size_t)sc->gw * sizeof *cnt);
    double val;
    for (int j = 0; j < tui_series_len(s); j++) {
        tui_point p = tui_series_at(s, j);
        if (!shown(p, v, &val))
            continue;
        int gx = scale_x(sc, p.step);
        sum[gx] += scale_t(sc, val);
        cnt[gx]++;
    }
    int px = -1, py = 0, role = TUI_R_SERIES + s->group % TUI_NSERIES;
    for (int gx = 0; gx < sc->gw; gx++) {
        if (!cnt[gx])
            continue;
        int gy = scale_y(sc, sum[gx] / cnt[gx]);
        if (px < 0)
            dot(g, gx, gy, role);
        else
            line(g, px, py, gx, gy, role);
        px = gx;
        py = gy;
    }
}

/* Every train series as a line into the plot area at (x, y); -1 when out of memory. */
static int draw_lines(tui_canvas *c, int x, int y, const scale *sc, const tui_history *hist, const tui_plot_view *v,
                      int dw, int dh)
{
    grid g = {dw, dh, v->unicode ? 2 : 1, v->unicode ? 4 : 3, calloc((size_t)dw * (size_t)dh, 1),
              malloc((size_t)dw * (size_t)dh)};
    double *sum = calloc((size_t)sc->gw, sizeof *sum);
    int *cnt = calloc((size_t)sc->gw, sizeof *cnt);
    int rc = g.bits && g.role && sum && cnt ? 0 : -1;
    if (rc == 0) {
        memset(g.role, -1, (size_t)dw * (size_t)dh);
        for (int i = 0; i < hist->n; i++)
            if (hist->series[i]->phase == SINGA_PHASE_TRAIN)
                series_line(&g, sc, hist->series[i], v, sum, cnt);
        for (int cy = 0; cy < dh; cy++)
            for (int cx = 0; cx < dw; cx++) {
                size_t at = (size_t)cy * (size_t)dw + (size_t)cx;
                if (g.bits[at])
                    tui_canvas_put(c, x + cx, y + cy, v->unicode ? 0x2800u + g.bits[at] : ascii_cell(g.bits[at]),
                                   g.role[at], 0);
            }
    }
    free(g.bits), free(g.role), free(sum), free(cnt);
    return rc;
}

/* Test and validation results as marks over the lines, in the plot area at (x, y) whose cells
 * hold sx x sy dots. */
static void draw_marks(tui_canvas *c, int x, int y, int sx, int sy, const scale *sc, const tui_history *hist,
                       const tui_plot_view *v)
{
    double val;
    for (int i = 0; i < hist->n; i++) {
        const tui_series *s = hist->series[i];
        if (s->phase == SINGA_PHASE_TRAIN)
            continue;
        for (int j = 0; j < tui_series_len(s); j++) {
            tui_point p = tui_series_at(s, j);
            if (shown(p, v, &val))
                tui_canvas_put(c, x + scale_x(sc, p.step) / sx, y + scale_y(sc, scale_t(sc, val)) / sy,
                               tui_plot_mark(s->phase, v->unicode), TUI_R_SERIES + s->group % TUI_NSERIES, 1);
        }
    }
}

/* The y axis in column x (dh rows from y), labelled every 4 rows or so and always at the top
 * and bottom rows; the labels end left of it. */
static void draw_y_axis(tui_canvas *c, int x, int y, int dh, int sy, const scale *sc, bool unicode)
{
    uint32_t vbar = unicode ? 0x2502 : '|', tick = unicode ? 0x2524 : '+';
    int every = dh >= 12 ? 4 : dh >= 6 ? (dh - 1) / 2 : dh - 1;
    for (int r = 0; r < dh; r++) {
        bool label = r == 0 || r == dh - 1 || (every > 0 && r % every == 0 && dh - 1 - r >= 2);
        tui_canvas_put(c, x, y + r, label ? tick : vbar, TUI_R_DIM, 0);
        if (!label)
            continue;
        double t = sc->thi - (r * sy + sy / 2.0) / (sc->gh - 1) * (sc->thi - sc->tlo);
        char buf[16];
        tui_plot_num(buf, sizeof buf, sc->logy ? pow(10, t) : t);
        tui_canvas_text(c, x - (int)strlen(buf), y + r, buf, TUI_R_DIM, 0);
    }
}

/* The x axis in row y under the plot area (from x, dw wide, the rectangle's right edge at
 * right), with step labels below at the left, the middle and the right where they fit, and the
 * metric's name on it where it hides nothing. */
static void draw_x_axis(tui_canvas *c, int x, int y, int dw, int right, const tui_plot_view *v, const char *what)
{
    tui_canvas_put(c, x - 1, y, v->unicode ? 0x2514 : '+', TUI_R_DIM, 0);
    for (int cx = 0; cx < dw; cx++)
        tui_canvas_put(c, x + cx, y, v->unicode ? 0x2500 : '-', TUI_R_DIM, 0);
    if (dw > (int)strlen(what) + 4)
        tui_canvas_text(c, x + 1, y, what, TUI_R_TITLE, 0);
    if (v->no_steps)
        return;
    char lab[16];
    step_label(lab, sizeof lab, v->x0);
    tui_canvas_text(c, x, y + 1, lab, TUI_R_DIM, 0);
    int used = x + (int)strlen(lab); /* the first column past the labels so far */
    step_label(lab, sizeof lab, v->x0 + (v->x1 - v->x0) / 2);
    int mid = x + dw / 2 - (int)strlen(lab) / 2;
    if (mid > used + 1) {
        tui_canvas_text(c, mid, y + 1, lab, TUI_R_DIM, 0);
        tui_canvas_put(c, x + dw / 2, y, v->unicode ? 0x252C : '+', TUI_R_DIM, 0);
        used = mid + (int)strlen(lab);
    }
    step_label(lab, sizeof lab, v->x1);
    if (right - (int)strlen(lab) > used + 1)
        tui_canvas_text(c, right - (int)strlen(lab), y + 1, lab, TUI_R_DIM, 0);
}

/* The plot area is the rectangle less LABEL_W columns at the left (y labels and axis) and two
 * rows at the bottom (x axis and step labels; one without the labels). */
void tui_plot_draw(tui_canvas *c, int x, int y, int w, int h, const tui_history *hist, const tui_plot_view *v)
{
    const char *what = v->metric == TUI_LOSS ? (v->logy ? "loss (log)" : "loss") : "accuracy";
    if (w < 16 || h < 4) {
        tui_canvas_text(c, x, y, what, TUI_R_DIM, 0);
        return;
    }
    int dw = w - LABEL_W, dh = h - (v->no_steps ? 1 : 2), sx = v->unicode ? 2 : 1, sy = v->unicode ? 4 : 3;
    scale sc;
    if (!scale_fit(&sc, hist, v, dw * sx, dh * sy)) {
        char note[64];
        snprintf(note, sizeof note, "%s: no values yet", what);
        tui_canvas_text(c, x + (w - (int)strlen(note)) / 2, y + h / 2, note, TUI_R_DIM, 0);
        return;
    }
    if (draw_lines(c, x + LABEL_W, y, &sc, hist, v, dw, dh) < 0) {
        tui_canvas_text(c, x, y, "out of memory", TUI_R_ERROR, 0);
        return;
    }
    draw_marks(c, x + LABEL_W, y, sx, sy, &sc, hist, v);
    draw_y_axis(c, x + LABEL_W - 1, y, dh, sy, &sc, v->unicode);
    draw_x_axis(c, x + LABEL_W, y + dh, dw, x + w, v, what);
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

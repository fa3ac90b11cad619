/* Loss and accuracy curves as SVG, of a metrics file (metricsfile/metricsfile.h reads it) or of the
 * workbench's history.  The picture: the loss above, the accuracy below when any is reported, each
 * with labelled axes; per worker group and phase one <path>: training as a line, test and
 * validation as marks (a small square per result), so a plot has one path per series. */
#include <errno.h>
#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lua/lplot.h"
#include "metricsfile/metricsfile.h"

void singa_plot_free(singa_plot *p)
{
    for (int i = 0; i < p->n; i++) {
        free(p->s[i].step);
        for (int k = 0; k < SINGA_PLOT_METRICS; k++)
            free(p->s[i].v[k]);
    }
    free(p->s);
    *p = (singa_plot){0};
}

static singa_plot_series *series_of(singa_plot *p, int group, singa_phase phase)
{
    for (int i = 0; i < p->n; i++)
        if (p->s[i].group == group && p->s[i].phase == phase)
            return &p->s[i];
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 8;
        singa_plot_series *grown = realloc(p->s, (size_t)cap * sizeof *grown);
        if (!grown)
            return NULL;
        p->s = grown;
        p->cap = cap;
    }
    singa_plot_series *s = &p->s[p->n++];
    *s = (singa_plot_series){.group = group, .phase = phase};
    return s;
}

static int grow(double **a, int cap)
{
    double *g = realloc(*a, (size_t)cap * sizeof *g);
    if (!g)
        return -1;
    *a = g;
    return 0;
}

int singa_plot_add(singa_plot *p, int group, singa_phase phase, double step, double loss, double acc)
{
    singa_plot_series *s = series_of(p, group, phase);
    if (!s)
        return -1;
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 64;
        if (grow(&s->step, cap) < 0 || grow(&s->v[SINGA_PLOT_LOSS], cap) < 0 || grow(&s->v[SINGA_PLOT_ACC], cap) < 0)
            return -1;
        s->cap = cap;
    }
    s->step[s->n] = step;
    s->v[SINGA_PLOT_LOSS][s->n] = loss;
    s->v[SINGA_PLOT_ACC][s->n] = acc;
    s->n++;
    return 0;
}

/* ---- reading ---- */

static int add_record(void *ud, const singa_metrics_record *r, const char **why)
{
    if (singa_plot_add(ud, r->group, r->phase, r->step, r->loss, r->accuracy) < 0)
        return *why = "out of memory", -1;
    return 0;
}

int singa_plot_read(singa_plot *p, const char *path, singa_err *err)
{
    return singa_metrics_file_read(path, add_record, p, err);
}

/* ---- writing ---- */

enum { W = 800, PANEL_H = 300, LEFT = 70, RIGHT = 150, TOP = 40, BOTTOM = 45 };

static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

typedef struct range {
    double x0, x1, y0, y1;
} range;

static bool has_metric(const singa_plot_series *s, int k)
{
    for (int i = 0; i < s->n; i++)
        if (isfinite(s->v[k][i]))
            return true;
    return false;
}

static range range_of(const singa_plot *p, int k)
{
    range r = {INFINITY, -INFINITY, INFINITY, -INFINITY};
    for (int i = 0; i < p->n; i++)
        for (int j = 0; j < p->s[i].n; j++) {
            double x = p->s[i].step[j], y = p->s[i].v[k][j];
            if (!isfinite(y) || !isfinite(x))
                continue;
            r.x0 = fmin(r.x0, x), r.x1 = fmax(r.x1, x), r.y0 = fmin(r.y0, y), r.y1 = fmax(r.y1, y);
        }
    if (r.x1 <= r.x0)
        r.x0 -= 1, r.x1 += 1;
    if (r.y1 <= r.y0)
        r.y0 -= 0.5, r.y1 += 0.5;
    return r;
}

static const char *phase_name(singa_phase ph)
{
    return ph == SINGA_PHASE_TRAIN ? "train" : ph == SINGA_PHASE_TEST ? "test" : "validation";
}

/* One panel: frame, ticks and labels, then a path per series with values of metric k. */
static void panel(FILE *f, const singa_plot *p, int k, int top)
{
    range r = range_of(p, k);
    int pw = W - LEFT - RIGHT, ph = PANEL_H - BOTTOM - 10;
    double sx = pw / (r.x1 - r.x0), sy = ph / (r.y1 - r.y0);
    const char *name = k == SINGA_PLOT_LOSS ? "loss" : "accuracy";
    fprintf(f, "<g class=\"%s\">\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#444\"/>\n", name,
            LEFT, top, pw, ph);
    for (int t = 0; t <= 4; t++) {
        double x = r.x0 + (r.x1 - r.x0) * t / 4, y = r.y0 + (r.y1 - r.y0) * t / 4;
        int px = LEFT + (int)lround((x - r.x0) * sx), py = top + ph - (int)lround((y - r.y0) * sy);
        fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444\"/>", px, top + ph, px, top + ph + 5);
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%.0f</text>\n", px, top + ph + 18, x);
        fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444\"/>", LEFT - 5, py, LEFT, py);
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.4g</text>\n", LEFT - 8, py + 4, y);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">step</text>\n", LEFT + pw / 2, top + ph + 36);
    fprintf(f, "<text x=\"16\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 16 %d)\">%s</text>\n",
            top + ph / 2, top + ph / 2, name);
    int legend = 0;
    for (int i = 0; i < p->n; i++) {
        const singa_plot_series *s = &p->s[i];
        if (!has_metric(s, k))
            continue;
        const char *colour = colours[s->group % (int)(sizeof colours / sizeof *colours)];
        bool line = s->phase == SINGA_PHASE_TRAIN;
        fprintf(f, "<path class=\"series\" data-group=\"%d\" data-phase=\"%s\" data-metric=\"%s\" fill=\"%s\" stroke=\"%s\" d=\"",
                s->group, phase_name(s->phase), name, line ? "none" : colour, line ? colour : "none");
        bool pen = false;
        for (int j = 0; j < s->n; j++) {
            double x = s->step[j], y = s->v[k][j];
            if (!isfinite(y)) {
                pen = false; /* a gap in the line */
                continue;
            }
            double px = LEFT + (x - r.x0) * sx, py = top + ph - (y - r.y0) * sy;
            if (line)
                fprintf(f, "%s%.1f %.1f", pen ? " L" : " M", px, py);
            else /* test: a square; validation: a diamond */
                fprintf(f, s->phase == SINGA_PHASE_TEST ? " M%.1f %.1fh6v6h-6z" : " M%.1f %.1fl4 4l-4 4l-4 -4z",
                        s->phase == SINGA_PHASE_TEST ? px - 3 : px, py - (s->phase == SINGA_PHASE_TEST ? 3 : 4));
            pen = true;
        }
        fputs("\"/>\n", f);
        int ly = top + 12 + 16 * legend++;
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"%d\" fill=\"%s\"/>", W - RIGHT + 12, ly - 8,
                line ? 3 : 8, colour);
        fprintf(f, "<text x=\"%d\" y=\"%d\">%s g%d</text>\n", W - RIGHT + 30, ly, phase_name(s->phase), s->group);
    }
    fputs("</g>\n", f);
}

/* Text with XML's special characters escaped. */
static void escaped(FILE *f, const char *s)
{
    for (; *s; s++)
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '"')
            fputs("&quot;", f);
        else
            fputc(*s, f);
}

int singa_plot_svg(const singa_plot *p, const char *title, const char *path, singa_err *err)
{
    bool acc = false;
    for (int i = 0; i < p->n; i++)
        acc = acc || has_metric(&p->s[i], SINGA_PLOT_ACC);
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return singa_err_set(err, "%s: the path is too long", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return singa_err_set(err, "cannot write %s: %s", path, strerror(errno));
    int h = TOP + PANEL_H * (acc ? 2 : 1);
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" "
               "fill=\"white\"/>\n<text x=\"%d\" y=\"24\" font-size=\"15\">", W, h, W, h, LEFT);
    escaped(f, title);
    fputs("</text>\n", f);
    panel(f, p, SINGA_PLOT_LOSS, TOP);
    if (acc)
        panel(f, p, SINGA_PLOT_ACC, TOP + PANEL_H);
    fputs("</svg>\n", f);
    int rc = ferror(f) ? -1 : 0;
    if (fclose(f) != 0 || rc < 0 || rename(tmp, path) < 0) {
        int e = errno;
        unlink(tmp);
        return singa_err_set(err, "cannot write %s: %s", path, strerror(e));
    }
    return 0;
}

int singa_lua_plot(lua_State *L)
{
    const char *in = luaL_checkstring(L, 1), *out = luaL_checkstring(L, 2);
    singa_plot p = {0};
    singa_err err = {{0}};
    const char *base = strrchr(in, '/') ? strrchr(in, '/') + 1 : in;
    int rc = singa_plot_read(&p, in, &err);
    if (rc == 0)
        rc = singa_plot_svg(&p, base, out, &err);
    singa_plot_free(&p);
    if (rc < 0)
        return luaL_error(L, "singa.plot: %s", err.msg);
    return 0;
}

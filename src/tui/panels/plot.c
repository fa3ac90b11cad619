/* 1: the loss and accuracy of every group and phase over the steps, zoomed and panned. */
#include <math.h>
#include <stdio.h>

#include "tui/app.h"
#include "tui/draw.h"

void tui_plot_range(const tui_app *a, double *x0, double *x1)
{
    const tui_history *h = &a->history;
    double first = h->first_step <= h->last_step ? h->first_step : 0;
    double last = h->first_step <= h->last_step ? h->last_step : 1;
    if (last <= first)
        last = first + 1;
    double span = (last - first) / pow(2, a->zoom);
    if (span < 8)
        span = 8;
    double right = last - a->pan;
    if (right - span < first)
        right = first + span;
    if (right > last && last - first >= span)
        right = last;
    *x0 = right - span;
    *x1 = right;
}

static bool has_accuracy(const tui_history *h)
{
    for (int i = 0; i < h->n; i++)
        for (int j = 0; j < tui_series_len(h->series[i]); j++)
            if (!isnan(tui_series_at(h->series[i], j).v[TUI_ACC]))
                return true;
    return false;
}

void tui_draw_plots(tui_app *a, tui_canvas *c, int x, int y, int w, int h, bool unicode)
{
    tui_plot_legend(c, x, y, w, &a->history, unicode);
    tui_plot_view v = {.metric = TUI_LOSS, .logy = a->logy, .unicode = unicode};
    tui_plot_range(a, &v.x0, &v.x1);
    int ph = h - 1, top = y + 1;
    bool acc = has_accuracy(&a->history);
    if (a->plots == TUI_PLOTS_ACC && acc) {
        v.metric = TUI_ACC;
        v.logy = false;
        tui_plot_draw(c, x, top, w, ph, &a->history, &v);
    } else if (a->plots == TUI_PLOTS_BOTH && acc && ph >= 8) {
        /* Short (80x24), the loss leaves the steps to the accuracy below, to keep a row more. */
        int lh = ph >= 10 ? ph * 3 / 5 : ph / 2;
        v.no_steps = ph < 10;
        tui_plot_draw(c, x, top, w, lh, &a->history, &v);
        v.no_steps = false;
        v.metric = TUI_ACC;
        v.logy = false;
        tui_plot_draw(c, x, top + lh, w, ph - lh, &a->history, &v);
    } else {
        tui_plot_draw(c, x, top, w, ph, &a->history, &v);
    }
}

static void blit(tui_app *a, const tui_canvas *c, int x0, int y0)
{
    for (int y = 0; y < c->h; y++)
        for (int x = 0; x < c->w; x++) {
            const tui_cell *cell = &c->cells[(size_t)y * (size_t)c->w + (size_t)x];
            if (!cell->ch || cell->ch == ' ')
                continue;
            wchar_t w = (wchar_t)cell->ch;
            if (!a->term.unicode && w > 126)
                w = '?';
            attrset(a->term.attr[cell->role] | (cell->bold ? A_BOLD : 0));
            mvaddnwstr(y0 + y, x0 + x, &w, 1);
        }
    attrset(A_NORMAL);
}

static void draw(tui_app *a, tui_rect r)
{
    char extra[64] = "";
    if (a->zoom > 0 || a->pan > 0)
        snprintf(extra, sizeof extra, "(zoom %dx%s)", 1 << a->zoom, a->pan > 0 ? ", panned" : "");
    tui_frame(a, TUI_P_PLOT, r, extra);
    tui_rect in = {r.x + 1, r.y + 1, r.w - 2, r.h - 2};
    if (!a->status.info.seq) { /* a script may work a long time before (or without) a job */
        tui_text(a, in.y, in.x + 1, in.w - 1, TUI_R_DIM, "no metrics: the script has not started a job (singa.train)");
        if (in.h > 1)
            tui_text(a, in.y + 1, in.x + 1, in.w - 1, TUI_R_DIM, "what it prints shows in the log");
        return;
    }
    tui_canvas c;
    if (tui_canvas_init(&c, in.w, in.h) < 0)
        return;
    tui_draw_plots(a, &c, 0, 0, in.w, in.h, a->term.unicode);
    blit(a, &c, in.x, in.y);
    tui_canvas_free(&c);
}

/* Half the column, at least 8 rows. */
static int rows(const tui_app *a, tui_room room) { return room.column / 2 < 8 ? 8 : room.column / 2; }

static void reset(tui_app *a)
{
    a->zoom = 0;
    a->pan = 0;
}

/* The arrows and pages pan the steps. */
static void browse(tui_app *a, int key)
{
    int k = key & ~TUI_KEY_CODE(0);
    double x0, x1, full = a->history.last_step - a->history.first_step;
    tui_plot_range(a, &x0, &x1);
    double span = x1 - x0, step = k == KEY_PPAGE || k == KEY_NPAGE ? span : span / 4;
    if (k == KEY_LEFT || k == KEY_PPAGE || k == KEY_UP)
        a->pan += step;
    else if (k == KEY_RIGHT || k == KEY_NPAGE || k == KEY_DOWN)
        a->pan -= step;
    else if (k == KEY_HOME)
        a->pan = full;
    else if (k == KEY_END)
        a->pan = 0;
    if (a->pan > full - span)
        a->pan = full - span;
    if (a->pan < 0)
        a->pan = 0;
}

const tui_panel_class tui_panel_plot = {
    .name = "plot", .title = "Loss / accuracy", .key = '1',
    .column = 0, .order = 10, .min_rows = 4, .rows = rows,
    .draw = draw, .reset = reset, .browse = browse,
};

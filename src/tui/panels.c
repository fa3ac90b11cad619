/* Drawing: the layout of the seven panels, each panel's content, the title bar, the footer and
 * the overlays.  Everything is drawn into ncurses's virtual screen after erase(), and one
 * refresh() sends only the cells that changed, so redrawing the whole screen never flickers.
 *
 *   +-1 Loss / accuracy-------------------+-4 Progress--------+
 *   | legend, loss plot, accuracy plot     | step, speed, ETA  |
 *   +-2 Message traffic-------------------+-3 Topology--------+
 *   | per type and peer                    | processes, groups |
 *   |                                      +-7 Workers---------+
 *   |                                      | step times, slow  |
 *   +-5 Log-------------------------------+-6 Lua console-----+
 *   | the job's output                     | transcript, input |
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "singa/singa.h"
#include "tui/app.h"

#define MIN_W 60
#define MIN_H 16
#define MAX_TOO_SMALL_LINES 12

typedef struct rect {
    int x, y, w, h;
} rect;

static const char *const titles[TUI_P_COUNT] = {"Loss / accuracy", "Message traffic", "Topology",
                                                 "Progress", "Log", "Lua console", "Workers"};

/* ---- text ---- */

/* Writes UTF-8 text at (y, x) in at most maxw columns; returns the columns used.  Without a
 * UTF-8 locale, characters beyond ASCII become '?'. */
static int text(tui_app *a, int y, int x, int maxw, int role, const char *s)
{
    if (maxw <= 0)
        return 0;
    attrset(a->term.attr[role]);
    int used = 0;
    while (*s && used < maxw) {
        wchar_t w = (wchar_t)tui_utf8_next(&s);
        if (!a->term.unicode && w > 126)
            w = '?';
        int cw = w < 127 ? 1 : wcwidth(w);
        if (cw < 0) {
            w = '?';
            cw = 1;
        }
        if (used + cw > maxw)
            break;
        if (cw > 0)
            mvaddnwstr(y, x + used, &w, 1);
        used += cw;
    }
    attrset(A_NORMAL);
    return used;
}

static int textf(tui_app *a, int y, int x, int maxw, int role, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static int textf(tui_app *a, int y, int x, int maxw, int role, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return text(a, y, x, maxw, role, buf);
}

static void duration(char *buf, size_t len, double s)
{
    if (!isfinite(s) || s < 0) {
        snprintf(buf, len, "-");
        return;
    }
    long t = lround(s);
    if (t >= 3600)
        snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
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

/* ---- layout ---- */

/* worker_rows < 0: the job has no workers to time (no distributed runtime), and no Workers panel. */
static void layout(int W, int H, int traffic_rows, int worker_rows, rect r[TUI_P_COUNT])
{
    int top = 1, bh = H - 2; /* between the title bar and the footer */
    int lw = W * 62 / 100, rw = W - lw;
    int th = traffic_rows + 4;
    if (th > bh / 4)
        th = bh / 4;
    if (th < 4)
        th = 4;
    int ph = bh / 2;
    if (ph < 8)
        ph = 8;
    int lh = bh - ph - th;
    if (lh < 4) {
        ph -= 4 - lh;
        lh = 4;
    }
    r[TUI_P_PLOT] = (rect){0, top, lw, ph};
    r[TUI_P_TRAFFIC] = (rect){0, top + ph, lw, th};
    r[TUI_P_LOG] = (rect){0, top + ph + th, lw, lh};
    /* The right column: the console keeps at least its prompt and a line of transcript, the
     * topology a line, and the progress its five lines of numbers (MIN_H leaves room for all). */
    enum { CONSOLE_MIN = 4, TOPO_MIN = 3, PROGRESS_MIN = 7 };
    int gh = H >= 30 ? 10 : 9;
    if (gh > bh - TOPO_MIN - CONSOLE_MIN)
        gh = bh - TOPO_MIN - CONSOLE_MIN < PROGRESS_MIN ? PROGRESS_MIN : bh - TOPO_MIN - CONSOLE_MIN;
    int toph = (bh - gh) * 2 / 5;
    if (toph < 5)
        toph = 5;
    if (toph > bh - gh - CONSOLE_MIN)
        toph = bh - gh - CONSOLE_MIN < TOPO_MIN ? TOPO_MIN : bh - gh - CONSOLE_MIN;
    /* The workers, a line each, take up to half the console's room, when that gives them one;
     * the topology (it scrolls) gives a row when the console would keep fewer than 4 lines. */
    int ch = bh - gh - toph, wh = worker_rows < 0 ? 0 : worker_rows + 3 > 4 ? worker_rows + 3 : 4;
    if (wh > ch / 2)
        wh = ch / 2 >= 4 ? ch / 2 : 0;
    if (wh && ch - wh < 6 && toph > 4) {
        toph--;
        ch++;
    }
    r[TUI_P_PROGRESS] = (rect){lw, top, rw, gh};
    r[TUI_P_TOPOLOGY] = (rect){lw, top + gh, rw, toph};
    r[TUI_P_WORKERS] = (rect){lw, top + gh + toph, rw, wh};
    r[TUI_P_CONSOLE] = (rect){lw, top + gh + toph + wh, rw, ch - wh};
}

/* The line around r, in the current attributes. */
static void border_of(rect r)
{
    mvaddch(r.y, r.x, ACS_ULCORNER);
    mvhline(r.y, r.x + 1, ACS_HLINE, r.w - 2);
    mvaddch(r.y, r.x + r.w - 1, ACS_URCORNER);
    mvvline(r.y + 1, r.x, ACS_VLINE, r.h - 2);
    mvvline(r.y + 1, r.x + r.w - 1, ACS_VLINE, r.h - 2);
    mvaddch(r.y + r.h - 1, r.x, ACS_LLCORNER);
    mvhline(r.y + r.h - 1, r.x + 1, ACS_HLINE, r.w - 2);
    mvaddch(r.y + r.h - 1, r.x + r.w - 1, ACS_LRCORNER);
}

static void frame(tui_app *a, tui_panel p, rect r, const char *extra)
{
    bool focused = a->focus == p && a->dialog == TUI_DIALOG_NONE;
    attrset(focused ? a->term.attr[TUI_R_FOCUS] : a->term.attr[TUI_R_DIM]);
    border_of(r);
    attrset(A_NORMAL);
    char title[128];
    snprintf(title, sizeof title, " %d %s%s%s ", (int)p + 1, titles[p], extra && *extra ? " " : "", extra ? extra : "");
    text(a, r.y, r.x + 2, r.w - 4, focused ? TUI_R_FOCUS : TUI_R_TITLE, title);
}

static rect inner(rect r) { return (rect){r.x + 2, r.y + 1, r.w - 4, r.h - 2}; }

/* ---- 1: loss and accuracy ---- */

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

static void draw_plot(tui_app *a, rect r)
{
    char extra[64] = "";
    if (a->zoom > 0 || a->pan > 0)
        snprintf(extra, sizeof extra, "(zoom %dx%s)", 1 << a->zoom, a->pan > 0 ? ", panned" : "");
    frame(a, TUI_P_PLOT, r, extra);
    rect in = {r.x + 1, r.y + 1, r.w - 2, r.h - 2};
    if (!a->status.info.seq) { /* a script may work a long time before (or without) a job */
        text(a, in.y, in.x + 1, in.w - 1, TUI_R_DIM, "no metrics: the script has not started a job (singa.train)");
        if (in.h > 1)
            text(a, in.y + 1, in.x + 1, in.w - 1, TUI_R_DIM, "what it prints shows in the log");
        return;
    }
    tui_canvas c;
    if (tui_canvas_init(&c, in.w, in.h) < 0)
        return;
    tui_draw_plots(a, &c, 0, 0, in.w, in.h, a->term.unicode);
    blit(a, &c, in.x, in.y);
    tui_canvas_free(&c);
}

/* ---- 2: message traffic ---- */

static void human(char *buf, size_t len, double v)
{
    if (v >= 1e9)
        snprintf(buf, len, "%.1fG", v / 1e9);
    else if (v >= 1e6)
        snprintf(buf, len, "%.1fM", v / 1e6);
    else if (v >= 1e4)
        snprintf(buf, len, "%.1fk", v / 1e3);
    else
        snprintf(buf, len, "%.0f", v);
}

static void draw_traffic(tui_app *a, rect r)
{
    const tui_traffic *t = &a->traffic;
    rect in = inner(r);
    int shown = t->n < in.h - 1 ? t->n : in.h - 1;
    char extra[96] = "";
    if (a->traffic_total > shown && shown > 0)
        snprintf(extra, sizeof extra, "(%d of %d rows)", shown, a->traffic_total);
    if (a->dropped)
        singa_appendf(extra, sizeof extra, "%s%llu dropped", extra[0] ? " " : "", (unsigned long long)a->dropped);
    const singa_link *busiest = NULL; /* what a step moves on the wire, on the busiest link */
    for (int i = 0; i < a->nlinks && i < TUI_MAX_LINKS; i++)
        if (a->links[i].steps && (!busiest || a->links[i].bytes_sent + a->links[i].bytes_received >
                                                  busiest->bytes_sent + busiest->bytes_received))
            busiest = &a->links[i];
    if (busiest) {
        char v[16];
        human(v, sizeof v, (double)(busiest->bytes_sent + busiest->bytes_received) / (double)busiest->steps);
        singa_appendf(extra, sizeof extra, "%s%sprocess %d-%d %sB/step", extra[0] ? " " : "",
                      a->nlinks > 1 ? "busiest " : "", busiest->rank, busiest->peer, v);
    }
    frame(a, TUI_P_TRAFFIC, r, extra);
    bool multi = false;
    for (int i = 0; i < t->n; i++)
        multi = multi || t->rows[i].row.process != t->rows[0].row.process;
    /* The type and peer as wide as the longest (down to 12 columns each when room is short),
     * the rates (human() writes at most 6 characters), then the totals and the history when
     * they fit. */
    enum { RATES = 15, TOTALS = 16, QUEUE = 7, NAME_MIN = 12 };
    int tw = 4, pw = 4, avail = in.w - (multi ? 5 : 0);
    for (int i = 0; i < t->n; i++) {
        int a1 = (int)strlen(t->rows[i].row.type), a2 = (int)strlen(t->rows[i].row.peer);
        tw = a1 > tw ? a1 : tw;
        pw = a2 > pw ? a2 : pw;
    }
    tw = tw < NAME_MIN ? NAME_MIN : tw;
    pw = pw < NAME_MIN ? NAME_MIN : pw;
    int over = tw + 1 + pw + RATES + QUEUE - avail;
    for (; over > 0 && pw > NAME_MIN; over--)
        pw--;
    for (; over > 0 && tw > NAME_MIN; over--)
        tw--;
    int names = tw + 1 + pw;
    bool wide = avail >= names + RATES + TOTALS + QUEUE;
    int spark = avail - names - RATES - QUEUE - (wide ? TOTALS : 0); /* columns left after the numbers */
    if (spark > TUI_SPARK)
        spark = TUI_SPARK;
    char head[256];
    snprintf(head, sizeof head, "%s%-*s %-*s %6s %7s", multi ? "proc " : "", tw, "type", pw, "peer", "msg/s", "bytes/s");
    if (wide)
        singa_appendf(head, sizeof head, " %7s %7s", "sent", "recv");
    singa_appendf(head, sizeof head, " %5s%s", "queue", spark >= 7 ? " history" : "");
    text(a, in.y, in.x, in.w, TUI_R_DIM, head);
    if (t->n == 0) {
        text(a, in.y + 1, in.x, in.w, TUI_R_DIM,
             !a->status.info.seq ? "no job yet" : a->messages ? "no messages yet" : "no messages: the job has no cluster");
        return;
    }
    for (int i = 0; i < shown; i++) {
        const tui_traffic_stat *s = &t->rows[i];
        char rate[16], bytes[16], sent[16], recv[16], line[256] = "", sp[TUI_SPARK * 4 + 1] = "";
        human(rate, sizeof rate, s->msgs_per_sec);
        human(bytes, sizeof bytes, s->bytes_per_sec);
        human(sent, sizeof sent, (double)s->row.msgs_sent);
        human(recv, sizeof recv, (double)s->row.msgs_recv);
        if (multi)
            singa_appendf(line, sizeof line, "%-4d ", s->row.process);
        singa_appendf(line, sizeof line, "%-*.*s %-*.*s %6s %7s", tw, tw, s->row.type, pw, pw, s->row.peer, rate, bytes);
        if (wide)
            singa_appendf(line, sizeof line, " %7s %7s", sent, recv);
        singa_appendf(line, sizeof line, " %5d ", s->row.queue);
        if (spark >= 7)
            tui_traffic_spark(s, spark, a->term.unicode, sp, sizeof sp);
        int used = text(a, in.y + 1 + i, in.x, in.w, s->live ? TUI_R_DEFAULT : TUI_R_DIM, line);
        text(a, in.y + 1 + i, in.x + used, in.w - used, TUI_R_SERIES, sp);
    }
}

/* ---- 3: topology ---- */

static int state_role(tui_node_state s)
{
    return s == TUI_NODE_RUNNING ? TUI_R_OK : s == TUI_NODE_PAUSED || s == TUI_NODE_WAITING ? TUI_R_WARN
           : s == TUI_NODE_DEAD                                  ? TUI_R_ERROR
                                                                 : TUI_R_DIM;
}

/* The last step group g trained, from its train series (-1: none yet): asynchronous groups
 * drift apart, so each worker's line says where its group is. */
static int group_step(const tui_app *a, int g)
{
    for (int i = 0; i < a->history.n; i++) {
        const tui_series *s = a->history.series[i];
        int len = tui_series_len(s);
        if (s->group == g && s->phase == SINGA_PHASE_TRAIN && len > 0)
            return tui_series_at(s, len - 1).step;
    }
    return -1;
}

static void draw_topology(tui_app *a, rect r)
{
    frame(a, TUI_P_TOPOLOGY, r, NULL);
    rect in = inner(r);
    a->rows[TUI_P_TOPOLOGY] = in.h;
    const tui_job_info *info = &a->status.info;
    if (!info->seq) {
        text(a, in.y, in.x, in.w, TUI_R_DIM, "no job yet: the script has not called singa.train");
        return;
    }
    /* Lines first, so the panel can scroll through them; a node's state gets its colour. */
    enum { MAXL = TUI_MAX_NODES + TUI_MAX_LAYERS + 16 };
    typedef struct tline {
        char text[160];
        int role;
        char state[16];
        char after[24]; /* a worker's group's step, after its state */
    } tline;
    tline *l = calloc(MAXL, sizeof *l);
    if (!l)
        return;
    int n = 0;
#define LINE(r, ...) (n < MAXL ? (snprintf(l[n].text, sizeof l[n].text, __VA_ARGS__), l[n++].role = (r)) : 0)
    for (int i = 0; i < 2 && info->elastic[i][0]; i++)
        LINE(TUI_R_WARN, "%s", info->elastic[i]);
    const tui_rejoins *rj = &a->rejoins; /* an asynchronous job going on without lost processes */
    if (rj->lost[0])
        LINE(TUI_R_ERROR, "%s %s lost%s", strchr(rj->lost, ',') ? "ranks" : "rank", rj->lost,
             a->status.job == TUI_JOB_TRAINING ? ": the job goes on" : "");
    if (rj->count)
        LINE(TUI_R_WARN, "rank %d rejoined at step %d (%d rejoin%s)", rj->rank, rj->step, rj->count,
             rj->count == 1 ? "" : "s");
    int kept = a->nnodes < TUI_MAX_NODES ? a->nnodes : TUI_MAX_NODES;
    for (int i = 0; i < kept; i++) { /* the nodes first: they matter most when room is short */
        const tui_node *nd = &a->nodes[i];
        if (i == 0 || nd->process != a->nodes[i - 1].process)
            LINE(TUI_R_TITLE, "process %d on %s", nd->process, nd->host);
        if (LINE(state_role(nd->state), "%s %d, group %d: ", nd->role, nd->id, nd->group)) {
            snprintf(l[n - 1].state, sizeof l[n - 1].state, "%s", tui_node_state_name(nd->state));
            int step = strcmp(nd->role, "worker") == 0 ? group_step(a, nd->group) : -1;
            if (step >= 0)
                snprintf(l[n - 1].after, sizeof l[n - 1].after, "  step %d", step);
        }
    }
    if (a->nnodes > kept)
        LINE(TUI_R_DIM, "... and %d more workers and servers", a->nnodes - kept);
    if (info->batch) /* a run's file (--open) says neither batch nor updater */
        LINE(TUI_R_TITLE, "job %s: %d steps, batch %d", info->name, info->train_steps, info->batch);
    else
        LINE(TUI_R_TITLE, "job %s: %d steps", info->name, info->train_steps);
    char upd[sizeof info->updater];
    snprintf(upd, sizeof upd, "%s", info->updater);
    char *lr = strstr(upd, ", lr ");
    if (lr)
        *lr = 0;
    if (upd[0])
        LINE(TUI_R_DEFAULT, "  updater %s", upd);
    if (lr)
        LINE(TUI_R_DEFAULT, "  lr %s", lr + 5);
    if (info->nlayers)
        LINE(TUI_R_TITLE, "net of worker 0, group 0: %d layers", info->nlayers);
    for (int i = 0; i < info->nsummary; i++)
        LINE(i == 0 || i == info->nsummary - 1 ? TUI_R_DEFAULT : TUI_R_DIM, "  %s", info->summary[i]);
#undef LINE
    if (a->topo_scroll > n - in.h)
        a->topo_scroll = n - in.h > 0 ? n - in.h : 0;
    for (int i = 0; i < in.h && a->topo_scroll + i < n; i++) {
        const tline *t = &l[a->topo_scroll + i];
        if (t->state[0]) {
            int used = text(a, in.y + i, in.x, in.w, TUI_R_DEFAULT, t->text);
            used += text(a, in.y + i, in.x + used, in.w - used, t->role, t->state);
            text(a, in.y + i, in.x + used, in.w - used, TUI_R_DIM, t->after);
        } else {
            text(a, in.y + i, in.x, in.w, t->role, t->text);
        }
    }
    free(l);
}

/* ---- 7: workers ---- */

/* Each worker's step (singa/stats.h: means over its last SINGA_STEP_WINDOW steps): its work
 * (compute and send) and its waits, in ms; a straggler in the warning colour, with the share of
 * its group's step it costs.  Not drawn when the terminal has no room for it. */
static void draw_workers(tui_app *a, rect r)
{
    if (r.h < 4)
        return;
    int n = a->nworkers < TUI_MAX_WORKERS ? a->nworkers : TUI_MAX_WORKERS, slow = 0;
    for (int i = 0; i < n; i++)
        slow += a->workers[i].straggler;
    char extra[32] = "";
    if (slow)
        snprintf(extra, sizeof extra, "(%d slow)", slow);
    frame(a, TUI_P_WORKERS, r, extra);
    rect in = inner(r);
    a->rows[TUI_P_WORKERS] = in.h;
    bool host = in.w >= 50;
    textf(a, in.y, in.x, in.w, TUI_R_DIM, "%-7s %4s %8s %8s %8s%s", "worker", "proc", "work ms", "wait ms", "",
          host ? "  host" : "");
    if (n == 0) {
        text(a, in.y + 1, in.x, in.w, TUI_R_DIM,
             !a->status.info.seq ? "no job yet" : a->messages ? "no steps timed yet" : "no workers: the job has no cluster");
        return;
    }
    for (int i = 0; i < n && i < in.h - 1; i++) {
        const singa_worker_time *w = &a->workers[i];
        char who[16], flag[16] = "";
        snprintf(who, sizeof who, "%d.%d", w->group, w->id);
        if (w->straggler)
            snprintf(flag, sizeof flag, "slow %2.0f%%", 100 * w->share);
        textf(a, in.y + 1 + i, in.x, in.w, w->straggler ? TUI_R_WARN : TUI_R_DEFAULT, "%-7s %4d %8.2f %8.2f %8s%s%s", who,
              w->rank, 1e3 * w->work, 1e3 * (w->wait + w->bridge), flag, host ? "  " : "", host ? w->host : "");
    }
}

/* ---- 4: progress ---- */

static const char *state_word(const tui_app *a, int *role)
{
    const tui_status *s = &a->status;
    *role = TUI_R_WARN;
    if (a->quitting)
        return "stopping";
    if (s->script == TUI_SCRIPT_FAILED) {
        *role = TUI_R_ERROR;
        return "failed";
    }
    if (s->script == TUI_SCRIPT_STOPPED)
        return "stopped";
    if (s->job == TUI_JOB_LOADED)
        return "ready: r starts training";
    if (s->job == TUI_JOB_TRAINING) {
        if (atomic_load(&a->script.control.paused))
            return "paused";
        if (atomic_load(&a->script.control.pause))
            return "pausing";
        *role = TUI_R_OK;
        return "training";
    }
    if (s->script == TUI_SCRIPT_OK) {
        *role = TUI_R_OK;
        return "finished";
    }
    *role = TUI_R_DIM;
    return s->job == TUI_JOB_NONE ? "running the script: no job yet" : "running the script";
}

static void bar(char *buf, size_t len, int width, double frac, bool unicode)
{
    size_t o = 0;
    int full = (int)(frac * width + 0.5);
    for (int i = 0; i < width && o + 4 < len; i++)
        o += (size_t)tui_utf8_put(i < full ? (unicode ? 0x2588u : '#') : (unicode ? 0x2591u : '.'), buf + o);
    buf[o] = 0;
}

/* The first of n forms of a line that fits w columns with `more` after it (else the last, cut):
 * narrow panels (80x24) drop the padding, then the words, never the numbers. */
static const char *fitting(int w, int more, int n, char forms[][96])
{
    for (int i = 0; i < n - 1; i++)
        if ((int)strlen(forms[i]) + more <= w)
            return forms[i];
    return forms[n - 1];
}

/* "test   2.3199  acc 13.0%  @1500": the last test. */
static void progress_test(tui_app *a, int y, rect in, const tui_series *test)
{
    if (!test || tui_series_len(test) == 0) {
        text(a, y, in.x, in.w, TUI_R_DEFAULT, "test   -");
        return;
    }
    tui_point p = tui_series_at(test, tui_series_len(test) - 1);
    char loss[32], acc[32] = "", f[3][96];
    tui_plot_num(loss, sizeof loss, p.v[TUI_LOSS]);
    if (!isnan(p.v[TUI_ACC]))
        snprintf(acc, sizeof acc, "%.1f%%", 100 * p.v[TUI_ACC]);
    snprintf(f[0], sizeof f[0], "test   %s%s%s  @%d", loss, acc[0] ? "  acc " : "", acc, p.step);
    snprintf(f[1], sizeof f[1], "test   %s%s%s @%d", loss, acc[0] ? " acc " : "", acc, p.step);
    snprintf(f[2], sizeof f[2], "test %s%s%s @%d", loss, acc[0] ? " " : "", acc, p.step);
    text(a, y, in.x, in.w, TUI_R_DEFAULT, fitting(in.w, 0, 3, f));
}

/* "speed  42.4k img/s  lr 0.04 (x0.5)": "-" for what is not known (the warm-up step's speed,
 * the rate of a run's file). */
static void progress_speed(tui_app *a, int y, rect in, bool paused)
{
    const tui_sample *x = &a->latest;
    double scale = atomic_load(&a->script.control.lr_scale);
    char speed[32] = "-", lr[32] = "-", f[3][96], sc[32] = "";
    if (a->has_latest && isfinite(x->images_per_sec))
        human(speed, sizeof speed, x->images_per_sec);
    if (a->has_latest && isfinite(x->lr))
        tui_plot_num(lr, sizeof lr, x->lr);
    bool unit = !paused && strcmp(speed, "-") != 0;
    if (paused)
        snprintf(speed, sizeof speed, "paused");
    if (scale != 1)
        snprintf(sc, sizeof sc, " (x%g)", scale);
    snprintf(f[0], sizeof f[0], "speed  %s%s  lr %s", speed, unit ? " img/s" : "", lr);
    snprintf(f[1], sizeof f[1], "speed  %s%s  lr %s", speed, unit ? "/s" : "", lr);
    snprintf(f[2], sizeof f[2], "speed %s%s lr %s", speed, unit ? "/s" : "", lr);
    int used = text(a, y, in.x, in.w, TUI_R_DEFAULT, fitting(in.w, (int)strlen(sc), 3, f));
    text(a, y, in.x + used, in.w - used, TUI_R_WARN, sc);
}

static void draw_progress(tui_app *a, rect r)
{
    frame(a, TUI_P_PROGRESS, r, NULL);
    rect in = inner(r);
    const tui_sample *x = &a->latest;
    const tui_job_info *info = &a->status.info;
    int y = in.y, role;
    char b1[64], b2[64];
    const char *word = state_word(a, &role);
    int used;
    if (in.h >= 8) { /* the title bar says it too */
        used = text(a, y, in.x, in.w, TUI_R_DIM, "state  ");
        text(a, y++, in.x + used, in.w - used, role, word);
    }
    int step = a->has_latest ? x->step : 0, total = info->train_steps;
    if (info->seq)
        used = textf(a, y, in.x, in.w, TUI_R_DEFAULT, "step   %d/%d ", step, total);
    else
        used = text(a, y, in.x, in.w, TUI_R_DIM, "step   - (no job yet)");
    if (total > 0 && in.w - used >= 8) {
        double frac = step < total ? (double)step / total : 1;
        int bw = in.w - used - 5;
        bar(b1, sizeof b1, bw > 20 ? 20 : bw, frac, a->term.unicode);
        used += text(a, y, in.x + used, in.w - used, TUI_R_OK, b1);
        textf(a, y, in.x + used, in.w - used, TUI_R_DEFAULT, " %.0f%%", 100 * frac);
    }
    y++;
    /* the latest train values (mean over groups), then the last test */
    double loss = 0, acc = 0;
    int nl = 0, na = 0;
    const tui_series *test = NULL;
    for (int i = 0; i < a->history.n; i++) {
        const tui_series *s = a->history.series[i];
        if (s->phase == SINGA_PHASE_TEST && (!test || s->group == 0))
            test = s;
        if (s->phase != SINGA_PHASE_TRAIN)
            continue;
        float l = tui_series_recent(s, TUI_LOSS), c = tui_series_recent(s, TUI_ACC);
        if (!isnan(l)) {
            loss += l;
            nl++;
        }
        if (!isnan(c)) {
            acc += c;
            na++;
        }
    }
    tui_plot_num(b1, sizeof b1, nl ? loss / nl : NAN);
    used = textf(a, y, in.x, in.w, TUI_R_DEFAULT, "loss   %s", nl ? b1 : "-");
    if (na)
        textf(a, y, in.x + used, in.w - used, TUI_R_DEFAULT, "  acc %.1f%%", 100 * acc / na);
    y++;
    progress_test(a, y++, in, test);
    /* Paused, the last step's speed and ETA would go stale: they say so instead. */
    bool paused = a->status.job == TUI_JOB_TRAINING && atomic_load(&a->script.control.paused);
    progress_speed(a, y++, in, paused);
    char f[2][96];
    duration(b1, sizeof b1, a->has_latest ? x->elapsed : 0);
    duration(b2, sizeof b2, a->has_latest && a->status.job == TUI_JOB_TRAINING ? x->eta : NAN);
    if (paused)
        snprintf(b2, sizeof b2, "paused");
    snprintf(f[0], sizeof f[0], "time   %s  ETA %s", b1, b2);
    snprintf(f[1], sizeof f[1], "time %s ETA %s", b1, b2);
    text(a, y++, in.x, in.w, TUI_R_DEFAULT, fitting(in.w, 0, 2, f));
    if (y < in.y + in.h) {
        if (!info->ckpt_dir[0])
            text(a, y, in.x, in.w, TUI_R_DIM, "ckpt   no checkpoint_path");
        else if (a->status.ckpt_count == 0)
            text(a, y, in.x, in.w, TUI_R_DIM, "ckpt   none yet");
        else {
            duration(b1, sizeof b1, tui_now() - a->ckpt_time);
            textf(a, y, in.x, in.w, TUI_R_DEFAULT, "ckpt   step %d, %s ago", a->status.ckpt_step, b1);
        }
        y++;
    }
    if (y < in.y + in.h) {
        textf(a, y, in.x, in.w, TUI_R_DIM, "plugin %s", info->plugins[0] ? info->plugins : "-");
    }
}

/* ---- 5: log, 6: console ---- */

static int line_role(int kind)
{
    switch (kind) {
    case TUI_LINE_ERROR:
        return TUI_R_ERROR;
    case TUI_LINE_WARN:
        return TUI_R_WARN;
    case TUI_LINE_NOTE:
        return TUI_R_DIM;
    case TUI_LINE_INPUT:
        return TUI_R_INPUT;
    default:
        return TUI_R_DEFAULT;
    }
}

/* Where a line breaks to fit `width` columns: byte offsets of its pieces' starts (the first is
 * 0), after the last space that fits when there is one; continuation pieces are drawn indented
 * by two.  Returns the number of pieces. */
static int wrap(const char *s, int width, int *starts, int max)
{
    int n = 0, col = 0, space = -1, space_col = 0; /* the break after the piece's last space */
    starts[n++] = 0;
    for (const char *p = s; *p;) {
        const char *at = p;
        wchar_t w = (wchar_t)tui_utf8_next(&p);
        int cw = w < 127 ? 1 : wcwidth(w) > 0 ? wcwidth(w) : 1;
        if (col + cw > width - (n > 1 ? 2 : 0) && n < max) {
            if (space > starts[n - 1] && col - space_col < width / 2) {
                starts[n++] = space;
                col -= space_col;
            } else {
                starts[n++] = (int)(at - s);
                col = 0;
            }
            space = -1;
        }
        col += cw;
        if (w == ' ') {
            space = (int)(p - s);
            space_col = col;
        }
    }
    return n;
}

/* The lines of `log` ending `scroll` lines back from the newest, wrapped, in the last `rows`
 * rows of `in`; returns the scroll clamped to what the log holds. */
static int draw_lines(tui_app *a, tui_log *log, rect in, int rows, int scroll)
{
    uint64_t total = tui_log_total(log), first = tui_log_first(log);
    if ((uint64_t)scroll > total - first)
        scroll = (int)(total - first);
    if (scroll > 0 && total - first > 0 && (uint64_t)scroll >= total - first)
        scroll = (int)(total - first) - 1;
    char line[TUI_LINE_MAX], piece[TUI_LINE_MAX];
    int y = in.y + rows; /* drawing upwards from the bottom */
    for (uint64_t i = total - (uint64_t)scroll; i > first && y > in.y; i--) {
        int kind = tui_log_get(log, i - 1, line, sizeof line), starts[32];
        if (kind < 0)
            break;
        int n = wrap(line, in.w, starts, 32);
        for (int k = n - 1; k >= 0 && y > in.y; k--) {
            int end = k + 1 < n ? starts[k + 1] : (int)strlen(line);
            snprintf(piece, sizeof piece, "%s%.*s", k ? "  " : "", end - starts[k], line + starts[k]);
            text(a, --y, in.x, in.w, line_role(kind), piece);
        }
    }
    return scroll;
}

static void draw_log(tui_app *a, rect r)
{
    char extra[64] = "";
    if (a->log_scroll > 0)
        snprintf(extra, sizeof extra, "(%d lines back; End follows)", a->log_scroll);
    frame(a, TUI_P_LOG, r, extra);
    rect in = inner(r);
    a->rows[TUI_P_LOG] = in.h;
    a->log_scroll = draw_lines(a, a->log, in, in.h, a->log_scroll);
}

static void draw_console(tui_app *a, rect r)
{
    tui_console *c = &a->console;
    frame(a, TUI_P_CONSOLE, r, c->scroll > 0 ? "(scrolled)" : NULL);
    rect in = inner(r);
    a->rows[TUI_P_CONSOLE] = in.h;
    int rows = in.h - 1;
    if (c->nqueued && rows > 0) {
        text(a, in.y + rows - 1, in.x, in.w, TUI_R_WARN, "(waiting for the script to free the Lua state...)");
        rows--;
    }
    c->scroll = draw_lines(a, a->transcript, in, rows, c->scroll);
    /* the input line, scrolled sideways to keep the cursor in view */
    const char *prompt = tui_console_prompt(c);
    int y = in.y + in.h - 1, pw = (int)strlen(prompt), room = in.w - pw - 1;
    text(a, y, in.x, in.w, TUI_R_INPUT, prompt);
    int from = c->cursor > room ? c->cursor - room : 0;
    attrset(A_NORMAL);
    for (int i = from, col = 0; i < c->len && col < room + 1; i++, col++) {
        wchar_t w = c->input[i];
        if (!a->term.unicode && w > 126)
            w = '?';
        mvaddnwstr(y, in.x + pw + col, &w, 1);
    }
    if (a->focus == TUI_P_CONSOLE && c->len == 0 && !c->chunk[0] && room > 30 && tui_log_total(a->transcript) == 0)
        text(a, y, in.x + pw, room, TUI_R_DIM, "Lua, e.g. singa.lr_scale(0.5)");
    if (a->focus == TUI_P_CONSOLE && a->dialog == TUI_DIALOG_NONE) {
        move(y, in.x + pw + c->cursor - from);
        curs_set(1);
    }
}

/* ---- title, footer, overlays ---- */

static void draw_title(tui_app *a, int W)
{
    attrset(a->term.attr[TUI_R_KEY]);
    mvhline(0, 0, ' ', W);
    int role;
    const char *word = state_word(a, &role);
    char left[512];
    snprintf(left, sizeof left, " singa-tui %s | %s | %s", SINGA_VERSION, a->status.info.seq ? a->status.info.name : "-",
             a->file);
    char right[96];
    if (a->status.info.seq)
        snprintf(right, sizeof right, "%s  step %d/%d ", word, a->has_latest ? a->latest.step : 0, a->status.info.train_steps);
    else
        snprintf(right, sizeof right, "%s ", word);
    int rw = (int)strlen(right);
    text(a, 0, 0, W - rw - 1, TUI_R_KEY, left);
    text(a, 0, W - rw, rw, TUI_R_KEY, right);
}

static void draw_footer(tui_app *a, int W, int H)
{
    int n, x = 0, y = H - 1;
    const tui_key_help *k = tui_keys_footer(a, &n);
    bool note = a->note[0] && tui_now() < a->note_until;
    int limit = note ? W - (int)strlen(a->note) - 2 : W;
    for (int i = 0; i < n; i++) {
        int need = (int)strlen(k[i].keys) + (int)strlen(k[i].what) + 2;
        if (x + need > limit)
            break;
        x += text(a, y, x, W - x, TUI_R_KEY, k[i].keys);
        x += text(a, y, x, W - x, TUI_R_DEFAULT, " ");
        x += text(a, y, x, W - x, TUI_R_DEFAULT, k[i].what) + 1;
    }
    if (note)
        text(a, y, limit > x ? limit + 1 : x, W - x, TUI_R_WARN, a->note);
}

static rect dialog_box(tui_app *a, int w, int h, const char *title)
{
    int W = COLS, H = LINES;
    if (w > W - 2)
        w = W - 2;
    if (h > H - 2)
        h = H - 2;
    rect r = {(W - w) / 2, (H - h) / 2, w, h};
    attrset(A_NORMAL);
    for (int y = r.y; y < r.y + r.h; y++)
        mvhline(y, r.x, ' ', r.w);
    attrset(a->term.attr[TUI_R_FOCUS]);
    border_of(r);
    textf(a, r.y, r.x + 2, r.w - 4, TUI_R_FOCUS, " %s ", title);
    return inner(r);
}

static void draw_help(tui_app *a)
{
    int n = 0;
    while (tui_keys_help(n))
        n++;
    rect in = dialog_box(a, 74, n + 6, "Keys (any key closes)");
    for (int i = 0; i < n && i < in.h; i++) {
        const tui_key_help *k = tui_keys_help(i);
        text(a, in.y + i, in.x, 18, TUI_R_KEY, k->keys);
        text(a, in.y + i, in.x + 19, in.w - 19, TUI_R_DEFAULT, k->what);
    }
    if (in.h > n + 1)
        text(a, in.y + n + 1, in.x, in.w, TUI_R_DIM, "In the console: Enter runs, Up/Down recall, Esc leaves.");
    if (in.h > n + 2)
        text(a, in.y + n + 2, in.x, in.w, TUI_R_DIM, "singa.pause() resume() checkpoint() lr_scale(x) steer the job.");
}

static void draw_quit(tui_app *a)
{
    bool ckpt = a->status.info.ckpt_dir[0] != 0;
    rect in = dialog_box(a, 52, ckpt ? 7 : 6, "Quit while training?");
    int y = in.y;
    text(a, y++, in.x, in.w, TUI_R_DEFAULT, "The job is still training.");
    y++;
    if (ckpt) {
        int used = text(a, y, in.x, in.w, TUI_R_KEY, " c ");
        text(a, y++, in.x + used + 1, in.w - used - 1, TUI_R_DEFAULT, "write a checkpoint, then quit");
    }
    int used = text(a, y, in.x, in.w, TUI_R_KEY, " y ");
    text(a, y++, in.x + used + 1, in.w - used - 1, TUI_R_DEFAULT, "quit now");
    used = text(a, y, in.x, in.w, TUI_R_KEY, " n ");
    text(a, y, in.x + used + 1, in.w - used - 1, TUI_R_DEFAULT, "keep training (Esc)");
}

/* The size needed comes first and the words wrap, so it shows on the smallest terminal. */
static void draw_too_small(tui_app *a, int W, int H)
{
    char msg[128];
    snprintf(msg, sizeof msg, "singa-tui needs %dx%d; this terminal is %dx%d. q quits", MIN_W, MIN_H, W, H);
    char line[MAX_TOO_SMALL_LINES][128];
    int n = 0, len = 0;
    line[0][0] = 0;
    char *save;
    for (char *w = strtok_r(msg, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        int wl = (int)strlen(w);
        if (len > 0 && len + 1 + wl > W) {
            if (++n == MAX_TOO_SMALL_LINES)
                break;
            len = 0;
            line[n][0] = 0;
        }
        len += snprintf(line[n] + len, sizeof line[n] - (size_t)len, "%s%s", len ? " " : "", w);
    }
    if (n < MAX_TOO_SMALL_LINES && len > 0)
        n++;
    int y = n < H ? (H - n) / 2 : 0;
    for (int i = 0; i < n && y + i < H; i++)
        text(a, y + i, 0, W, TUI_R_WARN, line[i]);
}

static void draw_replace(tui_app *a)
{
    const tui_job_info *info = &a->status.info;
    rect in = dialog_box(a, 64, 10, "Replace an earlier run's checkpoints?");
    char msg[768];
    snprintf(msg, sizeof msg, "%s holds %d checkpoint%s of an earlier run (newest: step %llu). This run does not "
             "resume them (resume = true would) and replaces them once it writes its first checkpoint.",
             info->ckpt_dir, info->stale, info->stale == 1 ? "" : "s", info->stale_newest);
    int starts[8], n = wrap(msg, in.w, starts, 8), y = in.y;
    for (int k = 0; k < n && y < in.y + in.h - 3; k++) {
        int end = k + 1 < n ? starts[k + 1] : (int)strlen(msg);
        textf(a, y++, in.x, in.w, TUI_R_DEFAULT, "%.*s", end - starts[k], msg + starts[k]);
    }
    y = in.y + in.h - 2;
    int used = text(a, y, in.x, in.w, TUI_R_KEY, " y ");
    text(a, y++, in.x + used + 1, in.w - used - 1, TUI_R_DEFAULT, "train, replacing them");
    used = text(a, y, in.x, in.w, TUI_R_KEY, " n ");
    text(a, y, in.x + used + 1, in.w - used - 1, TUI_R_DEFAULT, "do not train (Esc); q quits");
}

void tui_draw(tui_app *a)
{
    int W = COLS, H = LINES;
    erase();
    curs_set(0);
    if (W < MIN_W || H < MIN_H) {
        draw_too_small(a, W, H);
        refresh();
        return;
    }
    rect r[TUI_P_COUNT];
    int workers = a->nworkers < TUI_MAX_WORKERS ? a->nworkers : TUI_MAX_WORKERS;
    layout(W, H, a->traffic.n, workers || a->messages ? workers : -1, r);
    draw_title(a, W);
    draw_plot(a, r[TUI_P_PLOT]);
    draw_traffic(a, r[TUI_P_TRAFFIC]);
    draw_topology(a, r[TUI_P_TOPOLOGY]);
    draw_progress(a, r[TUI_P_PROGRESS]);
    draw_log(a, r[TUI_P_LOG]);
    draw_workers(a, r[TUI_P_WORKERS]);
    draw_footer(a, W, H);
    draw_console(a, r[TUI_P_CONSOLE]); /* last: it places the cursor */
    if (a->dialog == TUI_DIALOG_HELP)
        draw_help(a);
    else if (a->dialog == TUI_DIALOG_QUIT)
        draw_quit(a);
    else if (a->dialog == TUI_DIALOG_REPLACE)
        draw_replace(a);
    if (a->dialog != TUI_DIALOG_NONE)
        curs_set(0);
    refresh();
}

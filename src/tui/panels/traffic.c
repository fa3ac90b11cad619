/* 2: the messages the runtime counts, per type and peer: rates, totals, queues and a history
 * of each, and what a step moves on the busiest link. */
#include <stdio.h>
#include <string.h>

#include "tui/app.h"
#include "tui/draw.h"

/* The columns: the type and peer as wide as the longest (down to 12 columns each when room is
 * short), the rates (tui_human writes at most 6 characters), then the totals and the history
 * when they fit. */
enum { RATES = 15, TOTALS = 16, QUEUE = 7, NAME_MIN = 12 };

typedef struct columns {
    bool multi; /* rows of several processes: a process column first */
    bool wide;  /* room for the totals */
    int tw, pw, spark;
} columns;

static columns fit(const tui_traffic *t, int width)
{
    columns c = {.tw = 4, .pw = 4};
    for (int i = 0; i < t->n; i++)
        c.multi = c.multi || t->rows[i].row.process != t->rows[0].row.process;
    int avail = width - (c.multi ? 5 : 0);
    for (int i = 0; i < t->n; i++) {
        int a1 = (int)strlen(t->rows[i].row.type), a2 = (int)strlen(t->rows[i].row.peer);
        c.tw = a1 > c.tw ? a1 : c.tw;
        c.pw = a2 > c.pw ? a2 : c.pw;
    }
    c.tw = c.tw < NAME_MIN ? NAME_MIN : c.tw;
    c.pw = c.pw < NAME_MIN ? NAME_MIN : c.pw;
    int over = c.tw + 1 + c.pw + RATES + QUEUE - avail;
    for (; over > 0 && c.pw > NAME_MIN; over--)
        c.pw--;
    for (; over > 0 && c.tw > NAME_MIN; over--)
        c.tw--;
    int names = c.tw + 1 + c.pw;
    c.wide = avail >= names + RATES + TOTALS + QUEUE;
    c.spark = avail - names - RATES - QUEUE - (c.wide ? TOTALS : 0); /* columns left after the numbers */
    if (c.spark > TUI_SPARK)
        c.spark = TUI_SPARK;
    return c;
}

/* The title's note: rows not shown, messages dropped, bytes a step on the busiest link. */
static void title_note(const tui_app *a, int shown, char *extra, size_t len)
{
    if (a->traffic_total > shown && shown > 0)
        snprintf(extra, len, "(%d of %d rows)", shown, a->traffic_total);
    if (a->dropped)
        singa_appendf(extra, len, "%s%llu dropped", extra[0] ? " " : "", (unsigned long long)a->dropped);
    const singa_link *busiest = NULL; /* what a step moves on the wire, on the busiest link */
    for (int i = 0; i < a->nlinks && i < TUI_MAX_LINKS; i++)
        if (a->links[i].steps && (!busiest || a->links[i].bytes_sent + a->links[i].bytes_received >
                                                  busiest->bytes_sent + busiest->bytes_received))
            busiest = &a->links[i];
    if (busiest) {
        char v[16];
        tui_human(v, sizeof v, (double)(busiest->bytes_sent + busiest->bytes_received) / (double)busiest->steps);
        singa_appendf(extra, len, "%s%sprocess %d-%d %sB/step", extra[0] ? " " : "", a->nlinks > 1 ? "busiest " : "",
                      busiest->rank, busiest->peer, v);
    }
}

static void draw_row(tui_app *a, int y, tui_rect in, const tui_traffic_stat *s, const columns *c)
{
    char rate[16], bytes[16], sent[16], recv[16], line[256] = "", sp[TUI_SPARK * 4 + 1] = "";
    tui_human(rate, sizeof rate, s->msgs_per_sec);
    tui_human(bytes, sizeof bytes, s->bytes_per_sec);
    tui_human(sent, sizeof sent, (double)s->row.msgs_sent);
    tui_human(recv, sizeof recv, (double)s->row.msgs_recv);
    if (c->multi)
        singa_appendf(line, sizeof line, "%-4d ", s->row.process);
    singa_appendf(line, sizeof line, "%-*.*s %-*.*s %6s %7s", c->tw, c->tw, s->row.type, c->pw, c->pw, s->row.peer, rate,
                  bytes);
    if (c->wide)
        singa_appendf(line, sizeof line, " %7s %7s", sent, recv);
    singa_appendf(line, sizeof line, " %5d ", s->row.queue);
    if (c->spark >= 7)
        tui_traffic_spark(s, c->spark, a->term.unicode, sp, sizeof sp);
    int used = tui_text(a, y, in.x, in.w, s->live ? TUI_R_DEFAULT : TUI_R_DIM, line);
    tui_text(a, y, in.x + used, in.w - used, TUI_R_SERIES, sp);
}

static void draw(tui_app *a, tui_rect r)
{
    const tui_traffic *t = &a->traffic;
    tui_rect in = tui_inner(r);
    int shown = t->n < in.h - 1 ? t->n : in.h - 1;
    char extra[96] = "";
    title_note(a, shown, extra, sizeof extra);
    tui_frame(a, TUI_P_TRAFFIC, r, extra);
    columns c = fit(t, in.w);
    char head[256];
    snprintf(head, sizeof head, "%s%-*s %-*s %6s %7s", c.multi ? "proc " : "", c.tw, "type", c.pw, "peer", "msg/s",
             "bytes/s");
    if (c.wide)
        singa_appendf(head, sizeof head, " %7s %7s", "sent", "recv");
    singa_appendf(head, sizeof head, " %5s%s", "queue", c.spark >= 7 ? " history" : "");
    tui_text(a, in.y, in.x, in.w, TUI_R_DIM, head);
    if (t->n == 0) {
        tui_text(a, in.y + 1, in.x, in.w, TUI_R_DIM,
                 !a->status.info.seq ? "no job yet" : a->messages ? "no messages yet" : "no messages: the job has no cluster");
        return;
    }
    for (int i = 0; i < shown; i++)
        draw_row(a, in.y + 1 + i, in, &t->rows[i], &c);
}

/* A row a message row, up to a quarter of the column, at least 4. */
static int rows(const tui_app *a, tui_room room)
{
    int h = a->traffic.n + 4;
    if (h > room.column / 4)
        h = room.column / 4;
    return h < 4 ? 4 : h;
}

static void feed(tui_app *a, double now)
{
    tui_traffic_row rows[TUI_TRAFFIC_ROWS];
    int n = tui_stats_traffic(&a->script.stats, rows, TUI_TRAFFIC_ROWS, &a->dropped);
    a->messages = n >= 0;
    a->traffic_total = n > 0 ? n : 0;
    int kept = a->traffic_total < TUI_TRAFFIC_ROWS ? a->traffic_total : TUI_TRAFFIC_ROWS;
    tui_traffic_update(&a->traffic, rows, kept, now);
    a->nlinks = tui_stats_links(&a->script.stats, a->links, TUI_MAX_LINKS);
}

static void reset(tui_app *a) { tui_traffic_init(&a->traffic); /* its counters start over */ }

const tui_panel_class tui_panel_traffic = {
    .name = "traffic", .title = "Message traffic", .key = '2',
    .column = 0, .order = 20, .min_rows = 4, .rows = rows,
    .draw = draw, .feed = feed, .reset = reset,
};

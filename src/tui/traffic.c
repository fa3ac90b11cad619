/* Rates come from differences of totals between two updates, so a source only keeps counters;
 * a counter that goes backwards (a restarted process) restarts the row's rate at zero.  Rows
 * with messages now come first: a job makes many rows (every type with every peer), most of
 * them idle after the start, and a panel too short for all of them shows the busy ones. */
#include <string.h>

#include "tui/canvas.h"
#include "tui/traffic.h"

void tui_traffic_init(tui_traffic *t)
{
    memset(t, 0, sizeof *t);
    t->last = -1;
}

static tui_traffic_stat *find(tui_traffic *t, const tui_traffic_row *r)
{
    for (int i = 0; i < t->n; i++) {
        const tui_traffic_row *o = &t->rows[i].row;
        if (o->process == r->process && strcmp(o->type, r->type) == 0 && strcmp(o->peer, r->peer) == 0)
            return &t->rows[i];
    }
    if (t->n == TUI_TRAFFIC_ROWS)
        return NULL;
    tui_traffic_stat *s = &t->rows[t->n++];
    memset(s, 0, sizeof *s);
    s->row = *r;
    return s;
}

static double delta(uint64_t now, uint64_t before) { return now >= before ? (double)(now - before) : 0; }

static bool busy(const tui_traffic_stat *s) { return s->live && s->msgs_per_sec > 0; }

/* A stable partition, so that rows keep their places while they stay busy (or idle). */
static void busy_first(tui_traffic *t)
{
    int k = 0; /* the rows before k are busy */
    for (int i = 0; i < t->n; i++) {
        if (!busy(&t->rows[i]))
            continue;
        if (i != k) {
            tui_traffic_stat s = t->rows[i];
            memmove(&t->rows[k + 1], &t->rows[k], (size_t)(i - k) * sizeof s);
            t->rows[k] = s;
        }
        k++;
    }
}

void tui_traffic_update(tui_traffic *t, const tui_traffic_row *rows, int n, double now)
{
    double dt = t->last >= 0 ? now - t->last : 0;
    for (int i = 0; i < t->n; i++)
        t->rows[i].live = false;
    for (int i = 0; i < n; i++) {
        tui_traffic_stat *s = find(t, &rows[i]);
        if (!s)
            continue;
        const tui_traffic_row *r = &rows[i], *o = &s->row;
        if (dt > 0 && !s->live) { /* (a row listed twice counts once) */
            s->msgs_per_sec = (delta(r->msgs_sent, o->msgs_sent) + delta(r->msgs_recv, o->msgs_recv)) / dt;
            s->bytes_per_sec = (delta(r->bytes_sent, o->bytes_sent) + delta(r->bytes_recv, o->bytes_recv)) / dt;
            if (s->nspark == TUI_SPARK) {
                memmove(s->spark, s->spark + 1, (TUI_SPARK - 1) * sizeof *s->spark);
                s->nspark--;
            }
            s->spark[s->nspark++] = (float)s->msgs_per_sec;
        }
        s->row = *r;
        s->live = true;
    }
    busy_first(t);
    t->last = now;
}

void tui_traffic_spark(const tui_traffic_stat *s, int width, bool unicode, char *out, size_t len)
{
    static const char ascii[] = " .:-=+*#";
    float hi = 0;
    int from = s->nspark > width ? s->nspark - width : 0;
    for (int i = from; i < s->nspark; i++)
        hi = s->spark[i] > hi ? s->spark[i] : hi;
    size_t o = 0;
    for (int i = from; i < s->nspark && o + 5 < len; i++) {
        int level = hi > 0 ? (int)(s->spark[i] / hi * 7 + 0.5f) : 0;
        if (unicode)
            o += (size_t)tui_utf8_put(0x2581u + (unsigned)level, out + o);
        else
            out[o++] = ascii[level];
    }
    out[o] = 0;
}

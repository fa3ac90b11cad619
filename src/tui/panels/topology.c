/* 3: the job's processes, their workers and servers and each one's state, lost ranks and
 * rejoins, the job, its updater and its net; it scrolls. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/app.h"
#include "tui/draw.h"

/* Lines first, so the panel can scroll through them; a node's state gets its colour. */
enum { MAXL = TUI_MAX_NODES + TUI_MAX_LAYERS + 16 };

typedef struct tline {
    char text[160];
    int role;
    char state[16];
    char after[24]; /* a worker's group's step, after its state */
} tline;

typedef struct lines {
    tline *l;
    int n;
} lines;

static tline *add(lines *ls, int role, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static tline *add(lines *ls, int role, const char *fmt, ...)
{
    if (ls->n >= MAXL)
        return NULL;
    tline *t = &ls->l[ls->n++];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->text, sizeof t->text, fmt, ap);
    va_end(ap);
    t->role = role;
    return t;
}

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

/* s in lines of `width` columns, the later ones indented by two. */
static void add_wrapped(lines *ls, int role, const char *s, int width)
{
    int starts[8], n = tui_wrap(s, width, starts, 8);
    for (int i = 0; i < n; i++) {
        int end = i + 1 < n ? starts[i + 1] : (int)strlen(s);
        add(ls, role, "%s%.*s", i ? "  " : "", end - starts[i], s + starts[i]);
    }
}

/* Elastic notes, lost ranks and rejoins and what a synchronous group is after them, then the
 * processes and their nodes (they matter most when room is short). */
static void add_nodes(const tui_app *a, lines *ls, int width)
{
    const tui_job_info *info = &a->status.info;
    for (int i = 0; i < 2 && info->elastic[i][0]; i++)
        add(ls, TUI_R_WARN, "%s", info->elastic[i]);
    const tui_rejoins *rj = &a->rejoins; /* an asynchronous job going on without lost processes */
    if (rj->lost[0])
        add(ls, TUI_R_ERROR, "%s %s lost%s", strchr(rj->lost, ',') ? "ranks" : "rank", rj->lost,
            a->status.job == TUI_JOB_TRAINING ? ": the job goes on" : "");
    if (rj->count)
        add(ls, TUI_R_WARN, "rank %d rejoined at step %d (%d rejoin%s)", rj->rank, rj->step, rj->count,
            rj->count == 1 ? "" : "s");
    if (rj->group[0])
        add_wrapped(ls, TUI_R_WARN, rj->group, width);
    int kept = a->nnodes < TUI_MAX_NODES ? a->nnodes : TUI_MAX_NODES;
    for (int i = 0; i < kept; i++) {
        const tui_node *nd = &a->nodes[i];
        if (i == 0 || nd->process != a->nodes[i - 1].process)
            add(ls, TUI_R_TITLE, "process %d on %s", nd->process, nd->host);
        tline *t = add(ls, state_role(nd->state), "%s %d, group %d: ", nd->role, nd->id, nd->group);
        if (t) {
            snprintf(t->state, sizeof t->state, "%s", tui_node_state_name(nd->state));
            int step = strcmp(nd->role, "worker") == 0 ? group_step(a, nd->group) : -1;
            if (step >= 0)
                snprintf(t->after, sizeof t->after, "  step %d", step);
        }
    }
    if (a->nnodes > kept)
        add(ls, TUI_R_DIM, "... and %d more workers and servers", a->nnodes - kept);
}

/* The job, its updater and learning rate, and the summary of its net. */
static void add_job(const tui_app *a, lines *ls)
{
    const tui_job_info *info = &a->status.info;
    if (info->batch) /* a run's file (--open) says neither batch nor updater */
        add(ls, TUI_R_TITLE, "job %s: %d steps, batch %d", info->name, info->train_steps, info->batch);
    else
        add(ls, TUI_R_TITLE, "job %s: %d steps", info->name, info->train_steps);
    char upd[sizeof info->updater];
    snprintf(upd, sizeof upd, "%s", info->updater);
    char *lr = strstr(upd, ", lr ");
    if (lr)
        *lr = 0;
    if (upd[0])
        add(ls, TUI_R_DEFAULT, "  updater %s", upd);
    if (lr)
        add(ls, TUI_R_DEFAULT, "  lr %s", lr + 5);
    if (info->nlayers)
        add(ls, TUI_R_TITLE, "net of worker 0, group 0: %d layers", info->nlayers);
    for (int i = 0; i < info->nsummary; i++)
        add(ls, i == 0 || i == info->nsummary - 1 ? TUI_R_DEFAULT : TUI_R_DIM, "  %s", info->summary[i]);
}

static void draw(tui_app *a, tui_rect r)
{
    tui_frame(a, TUI_P_TOPOLOGY, r, NULL);
    tui_rect in = tui_inner(r);
    a->rows[TUI_P_TOPOLOGY] = in.h;
    if (!a->status.info.seq) {
        tui_text(a, in.y, in.x, in.w, TUI_R_DIM, "no job yet: the script has not called singa.train");
        return;
    }
    lines ls = {calloc(MAXL, sizeof *ls.l), 0};
    if (!ls.l)
        return;
    add_nodes(a, &ls, in.w);
    add_job(a, &ls);
    if (a->topo_scroll > ls.n - in.h)
        a->topo_scroll = ls.n - in.h > 0 ? ls.n - in.h : 0;
    for (int i = 0; i < in.h && a->topo_scroll + i < ls.n; i++) {
        const tline *t = &ls.l[a->topo_scroll + i];
        if (t->state[0]) {
            int used = tui_text(a, in.y + i, in.x, in.w, TUI_R_DEFAULT, t->text);
            used += tui_text(a, in.y + i, in.x + used, in.w - used, t->role, t->state);
            tui_text(a, in.y + i, in.x + used, in.w - used, TUI_R_DIM, t->after);
        } else {
            tui_text(a, in.y + i, in.x, in.w, t->role, t->text);
        }
    }
    free(ls.l);
}

/* Two fifths of what the progress leaves, at least 5 rows. */
static int rows(const tui_app *a, tui_room room) { return room.left * 2 / 5 < 5 ? 5 : room.left * 2 / 5; }

static void feed(tui_app *a, double now)
{
    a->nnodes = tui_stats_topology(&a->script.stats, tui_script_node_state(&a->status, atomic_load(&a->script.control.paused)),
                                   a->nodes, TUI_MAX_NODES);
    a->rejoins = tui_stats_rejoins(&a->script.stats);
}

/* Down from the top (clamped when drawn). */
static void browse(tui_app *a, int key) { tui_scroll_lines(a, &a->topo_scroll, -1, key); }

const tui_panel_class tui_panel_topology = {
    .name = "topology", .title = "Topology", .key = '3',
    .column = 1, .order = 20, .min_rows = 3, .rows = rows, .lend_rows = 4,
    .draw = draw, .feed = feed, .browse = browse,
};

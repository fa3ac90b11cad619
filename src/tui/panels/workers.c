/* 7: each worker's step (singa/stats.h: means over its last SINGA_STEP_WINDOW steps): its work
 * (compute and send) and its waits, in ms; a straggler in the warning colour, with the share of
 * its group's step it costs; with cluster.plan = "auto", the predicted step against the longest
 * measured one in the frame.  Not drawn when the terminal has no room for it. */
#include <stdio.h>

#include "tui/app.h"
#include "tui/draw.h"

static void draw(tui_app *a, tui_rect r)
{
    if (r.h < 4)
        return;
    int n = a->nworkers < TUI_MAX_WORKERS ? a->nworkers : TUI_MAX_WORKERS, slow = 0;
    double step = 0;
    for (int i = 0; i < n; i++)
        slow += a->workers[i].straggler, step = a->workers[i].step > step ? a->workers[i].step : step;
    char extra[80] = "";
    if (slow)
        snprintf(extra, sizeof extra, "(%d slow)", slow);
    if (a->predicted_step > 0 && n)
        singa_appendf(extra, sizeof extra, "%s(%.2g ms, plan %.2g ms)", slow ? " " : "", 1e3 * step,
                      1e3 * a->predicted_step);
    tui_frame(a, TUI_P_WORKERS, r, extra);
    tui_rect in = tui_inner(r);
    a->rows[TUI_P_WORKERS] = in.h;
    bool host = in.w >= 50;
    tui_textf(a, in.y, in.x, in.w, TUI_R_DIM, "%-7s %4s %8s %8s %8s%s", "worker", "proc", "work ms", "wait ms", "",
              host ? "  host" : "");
    if (n == 0) {
        tui_text(a, in.y + 1, in.x, in.w, TUI_R_DIM,
                 !a->status.info.seq ? "no job yet" : a->messages ? "no steps timed yet" : "no workers: the job has no cluster");
        return;
    }
    for (int i = 0; i < n && i < in.h - 1; i++) {
        const singa_worker_time *w = &a->workers[i];
        char who[16], flag[16] = "";
        snprintf(who, sizeof who, "%d.%d", w->group, w->id);
        if (w->straggler)
            snprintf(flag, sizeof flag, "slow %2.0f%%", 100 * w->share);
        tui_textf(a, in.y + 1 + i, in.x, in.w, w->straggler ? TUI_R_WARN : TUI_R_DEFAULT, "%-7s %4d %8.2f %8.2f %8s%s%s",
                  who, w->rank, 1e3 * w->work, 1e3 * (w->wait + w->bridge), flag, host ? "  " : "", host ? w->host : "");
    }
}

/* A line a worker, up to half the rows left (none when that is fewer than 4); none at all
 * when the job has no distributed runtime. */
static int rows(const tui_app *a, tui_room room)
{
    int n = a->nworkers < TUI_MAX_WORKERS ? a->nworkers : TUI_MAX_WORKERS;
    if (!n && !a->messages)
        return 0;
    int h = n + 3 > 4 ? n + 3 : 4;
    if (h > room.left / 2)
        h = room.left / 2 >= 4 ? room.left / 2 : 0;
    return h;
}

static void feed(tui_app *a, double now)
{
    a->nworkers = tui_stats_workers(&a->script.stats, a->workers, TUI_MAX_WORKERS);
    a->predicted_step = tui_stats_predicted(&a->script.stats);
}

const tui_panel_class tui_panel_workers = {
    .name = "workers", .title = "Workers", .key = '7',
    .column = 1, .order = 30, .min_rows = 0, .rows = rows,
    .draw = draw, .feed = feed,
};

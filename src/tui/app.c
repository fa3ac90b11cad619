/* The workbench's life cycle and event loop.
 *
 * Threads: this one (the UI) owns ncurses and every view state; the script thread runs the job
 * script and, inside singa.train, the training loop whose hooks push samples into a lock-free
 * ring; the capture thread moves the job's output into the log.  The UI sleeps in poll() on
 * the terminal for at most 100 ms, then drains the ring, reads the script's status, lets the
 * console run a waiting chunk, and redraws when something changed, at most ten times a second.
 * A slow terminal only delays this thread.
 *
 * Ending: q (after asking, while training) sets the job's stop request and a hook that ends the
 * script; the loop goes on drawing until the script thread is done, then everything is torn
 * down in the reverse order and the terminal restored.  A job that does not stop in time
 * (stuck in a long C call) is left behind: the terminal is restored and the process exits. */
#include <poll.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lua/lplot.h"
#include "tui/app.h"
#include "tui/runfile.h"
#include "tui/state.h"

#define QUIT_SECONDS 30 /* how long quitting waits for the job (a checkpoint may be on its way) */

double tui_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void tui_app_note(tui_app *a, bool log, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->note, sizeof a->note, fmt, ap);
    va_end(ap);
    a->note_until = tui_now() + 4;
    a->dirty = true;
    if (log)
        tui_log_add(a->log, TUI_LINE_NOTE, a->note);
}

bool tui_app_training(const tui_app *a)
{
    return a->status.job == TUI_JOB_TRAINING && a->status.script == TUI_SCRIPT_RUNNING;
}

void tui_app_quit(tui_app *a, bool checkpoint)
{
    if (a->quitting)
        return;
    a->quitting = true;
    a->quit_deadline = tui_now() + QUIT_SECONDS;
    tui_script_quit(&a->script, checkpoint);
    tui_app_note(a, false, a->attach ? "detaching (the job goes on)" : checkpoint ? "writing a checkpoint, then quitting..." : "stopping...");
}

/* "fmnist-mlp" from the job's name (or the script's), safe as a file name. */
static void export_base(const tui_app *a, char *buf, size_t len)
{
    const char *name = a->status.info.seq ? a->status.info.name : strrchr(a->file, '/') ? strrchr(a->file, '/') + 1 : a->file;
    size_t o = 0;
    for (const char *p = name; *p && o + 1 < len; p++)
        buf[o++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.'
                       ? *p
                       : '_';
    buf[o] = 0;
    if (!o)
        snprintf(buf, len, "job");
}

/* The history's curves as SVG (lua/lplot.h). */
static int export_svg(const tui_app *a, const char *title, const char *path, singa_err *err)
{
    singa_plot p = {0};
    int rc = 0;
    for (int i = 0; i < a->history.n && rc == 0; i++) {
        const tui_series *s = a->history.series[i];
        for (int j = 0; j < tui_series_len(s) && rc == 0; j++) {
            tui_point pt = tui_series_at(s, j);
            if (singa_plot_add(&p, s->group, s->phase, pt.step, pt.v[TUI_LOSS], pt.v[TUI_ACC]) < 0)
                rc = singa_err_set(err, "out of memory");
        }
    }
    if (rc == 0)
        rc = singa_plot_svg(&p, title, path, err);
    singa_plot_free(&p);
    return rc;
}

void tui_app_export(tui_app *a)
{
    char base[128], csv[160], txt[160], svg[160];
    export_base(a, base, sizeof base);
    snprintf(csv, sizeof csv, "%s-metrics.csv", base);
    snprintf(txt, sizeof txt, "%s-plot.txt", base);
    snprintf(svg, sizeof svg, "%s-plot.svg", base);
    FILE *f = fopen(csv, "w");
    int rc = f ? tui_history_write_csv(&a->history, f) : -1;
    if (f && fclose(f) != 0)
        rc = -1;
    if (rc < 0) {
        tui_app_note(a, true, "cannot write %s", csv);
        return;
    }
    tui_canvas c;
    if (tui_canvas_init(&c, 100, 34) < 0)
        return;
    char head[256];
    snprintf(head, sizeof head, "singa-tui %s: %s, step %d/%d", a->file, a->status.info.seq ? a->status.info.name : "-",
             a->has_latest ? a->latest.step : 0, a->status.info.train_steps);
    tui_canvas_text(&c, 0, 0, head, TUI_R_DEFAULT, 0);
    tui_draw_plots(a, &c, 0, 2, c.w, c.h - 2, false);
    f = fopen(txt, "w");
    rc = f ? tui_canvas_write(&c, f) : -1;
    if (f && fclose(f) != 0)
        rc = -1;
    tui_canvas_free(&c);
    singa_err err = {{0}};
    if (rc < 0)
        tui_app_note(a, true, "cannot write %s", txt);
    else if (export_svg(a, head, svg, &err) < 0)
        tui_app_note(a, true, "%s", err.msg);
    else
        tui_app_note(a, true, "wrote %s, %s and %s", csv, txt, svg);
}

/* The panels forget the last job's view (and set theirs up at the start). */
static void reset_panels(tui_app *a)
{
    for (int p = 0; p < TUI_P_COUNT; p++)
        if (tui_panels[p]->reset)
            tui_panels[p]->reset(a);
}

static void new_job(tui_app *a, int seq)
{
    tui_history_clear(&a->history);
    a->has_latest = false;
    a->job_seen = seq;
    a->ckpt_seen = 0;
    reset_panels(a);
}

/* The ring's samples into the history; the progress panel's numbers: the newest step of any
 * group (the queue may have dropped the last ones when the UI fell behind; the snapshots never
 * do). */
static void take_samples(tui_app *a)
{
    tui_sample x;
    while (tui_ring_pop(a->ring, &x)) {
        if (x.job < a->job_seen)
            continue; /* an earlier job's */
        if (x.job > a->job_seen || x.kind == TUI_SAMPLE_RESET)
            new_job(a, x.job);
        tui_history_add_sample(&a->history, &x);
        a->dirty = true;
    }
    for (int g = 0; g < TUI_MAX_GROUPS; g++) {
        if (tui_snapshot_read(&a->script.latest[g], &x) && x.job == a->job_seen &&
            (!a->has_latest || x.step > a->latest.step)) {
            a->latest = x;
            a->has_latest = true;
            a->dirty = true;
        }
    }
}

/* Everything that arrived since the last tick; the panels take what they show from the job's
 * stats once a second. */
static void pump(tui_app *a)
{
    tui_status before = a->status;
    tui_script_status(&a->script, &a->status);
    if (a->status.info.seq > a->job_seen)
        new_job(a, a->status.info.seq);
    take_samples(a);
    if (a->status.ckpt_count != a->ckpt_seen) {
        a->ckpt_seen = a->status.ckpt_count;
        a->ckpt_time = tui_now();
    }
    if (tui_console_poll(&a->console))
        a->dirty = true;
    double t = tui_now();
    if (t - a->stats_time >= 1 || before.job != a->status.job || before.script != a->status.script) {
        for (int p = 0; p < TUI_P_COUNT; p++)
            if (tui_panels[p]->feed)
                tui_panels[p]->feed(a, t);
        a->stats_time = t;
        a->dirty = true;
    }
    if (a->status.lost && !a->quitting) { /* `--procs` starts the job again, this workbench with it */
        tui_log_add(a->log, TUI_LINE_NOTE, "a process was lost: the workbench ends, and the job starts again on the "
                                           "processes left");
        tui_app_quit(a, false);
    }
    /* --run starts every job at once, but one that would replace an earlier run's checkpoints
     * asks first. */
    if (a->args->run && a->status.job == TUI_JOB_LOADED && a->status.info.stale &&
        a->asked_seq != a->status.info.seq && a->dialog == TUI_DIALOG_NONE) {
        a->asked_seq = a->status.info.seq;
        a->dialog = TUI_DIALOG_REPLACE;
        a->dirty = true;
    }
    if (memcmp(&before, &a->status, offsetof(tui_status, error)) != 0) /* the fields a frame shows */
        a->dirty = true;
}

static void loop(tui_app *a)
{
    int fd = tui_term_fd(&a->term);
    uint64_t log_seen = 0, transcript_seen = 0;
    bool note_shown = false;
    while (!a->done) {
        double t = tui_now(), wait = a->dirty ? a->last_draw + TUI_REDRAW_SECONDS - t : 0.1;
        if (wait > 0.1)
            wait = 0.1;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        poll(&p, 1, wait > 0 ? (int)(wait * 1000) + 1 : 0);
        wint_t ch;
        int r;
        while ((r = get_wch(&ch)) != ERR)
            tui_keys_handle(a, r == KEY_CODE_YES, ch);
        pump(a);
        uint64_t lt = tui_log_total(a->log), tt = tui_log_total(a->transcript);
        bool note = a->note[0] && tui_now() < a->note_until;
        if (lt != log_seen || tt != transcript_seen || note != note_shown) {
            log_seen = lt;
            transcript_seen = tt;
            note_shown = note;
            a->dirty = true;
        }
        t = tui_now();
        if (a->dirty && t - a->last_draw >= TUI_REDRAW_SECONDS) {
            tui_draw(a);
            a->last_draw = t;
            a->dirty = false;
        }
        if (a->quitting && (tui_script_done(&a->script) || t > a->quit_deadline))
            a->done = true;
    }
}

/* --open: the file's records are the history of a finished job (seq 1, which pump keeps). */
static int open_run(tui_app *a, const char *path, singa_err *err)
{
    tui_sample last;
    if (tui_runfile_load(path, &a->history, &last, err) < 0)
        return -1;
    a->latest = last;
    a->has_latest = last.step > 0;
    a->job_seen = 1;
    tui_status *st = &a->script.st;
    st->info.seq = 1;
    st->info.train_steps = a->history.last_step; /* the file does not say how many were planned */
    st->job = TUI_JOB_DONE;
    st->script = TUI_SCRIPT_OK;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    snprintf(st->info.name, sizeof st->info.name, "%.*s", (int)strcspn(base, "."), base);
    tui_log_addf(a->log, TUI_LINE_NOTE, "-- %s: a finished run's metrics, steps %d to %d (read-only; q leaves)", path,
                 a->history.first_step, a->history.last_step);
    return 0;
}

static int setup(tui_app *a, lua_State *L, singa_lua_opts *opts, const singa_tui_args *args, singa_err *err)
{
    a->L = L;
    a->opts = opts;
    a->args = args;
    tui_history_init(&a->history);
    reset_panels(a);
    a->stats_time = -1;
    if (!(a->log = tui_log_new(5000)) || !(a->transcript = tui_log_new(2000)) || !(a->ring = tui_ring_new(1 << 14)))
        return singa_err_set(err, "out of memory");
    tui_script_init(&a->script, L, opts, a->ring, a->log);
    a->script.go = args->run;
    if (args->attach && tui_attach_open(&a->attach, args->attach, args->control, args->curve_key, err) < 0)
        return -1;
    if (args->open && open_run(a, args->open, err) < 0)
        return -1;
    if (tui_term_open(&a->term, err) < 0 || tui_capture_start(&a->capture, a->log, err) < 0)
        return -1;
    /* After the capture: loading singa scans the plugin folders, and what it skips goes to the log. */
    if (tui_console_init(&a->console, L, opts->lock, a->transcript) < 0)
        return singa_err_set(err, "out of memory");
    return 0;
}

static void teardown(tui_app *a)
{
    tui_attach_close(a->attach); /* it feeds the ring and log */
    a->attach = NULL;
    tui_capture_stop(a->capture);
    a->capture = NULL;
    tui_term_close(&a->term);
    tui_console_free(&a->console);
    if (a->script.L)
        tui_script_destroy(&a->script);
    tui_history_clear(&a->history);
    tui_ring_free(a->ring);
    tui_log_free(a->log);
    tui_log_free(a->transcript);
    a->opts->host = NULL;
}

/* --attach or --open: the workbench shows a job that does not run here. */
static void watch(tui_app *a)
{
    singa_err err = {{0}};
    snprintf(a->file, sizeof a->file, "%s", a->attach ? tui_attach_addr(a->attach) : a->args->open);
    tui_log_add(a->transcript, TUI_LINE_NOTE, a->attach ? "the console is off when attached: the job's Lua state is in its process"
                                                        : "the console is off: no job runs here (--open)");
    if (a->attach && tui_attach_start(a->attach, &a->script, a->ring, a->log, &err) < 0)
        tui_log_add(a->log, TUI_LINE_ERROR, err.msg);
    else if (a->attach)
        tui_log_addf(a->log, TUI_LINE_NOTE, "-- attached to %s (%s; q detaches, the job goes on)", a->file,
                     tui_attach_control(a->attach) ? "p, c steer it" : "read-only");
    a->focus = TUI_P_PLOT;
    loop(a);
}

int singa_tui_main(lua_State *L, singa_lua_opts *opts, const singa_tui_args *args)
{
    tui_app *a = calloc(1, sizeof *a);
    singa_err err = {{0}};
    if (!a) {
        fprintf(stderr, "singa-tui: out of memory\n");
        return 1;
    }
    if (setup(a, L, opts, args, &err) < 0) {
        pthread_mutex_unlock(opts->lock); /* the console's teardown takes it */
        teardown(a);
        pthread_mutex_lock(opts->lock);
        free(a);
        fprintf(stderr, "singa-tui: %s\n", err.msg);
        return 1;
    }
    pthread_mutex_unlock(opts->lock); /* the script thread and the console take it from now on */
    int rc = 0;
    if (a->attach || args->open) {
        watch(a);
    } else if (args->file) {
        snprintf(a->file, sizeof a->file, "%s", args->file);
    } else if (tui_start_screen(a, a->file, sizeof a->file) < 0) {
        a->file[0] = 0;
    }
    if (a->file[0] && !a->attach && !args->open) {
        tui_recent_add(a->file);
        tui_log_addf(a->log, TUI_LINE_NOTE, "-- %s%s", a->file,
                     args->run ? "" : " (a job waits for r before it trains; --run starts it at once)");
        if (tui_script_start(&a->script, a->file, args->argc, args->argv, args->file ? args->first_arg : args->argc, &err) < 0)
            tui_log_add(a->log, TUI_LINE_ERROR, err.msg);
        a->focus = TUI_P_PLOT;
        loop(a);
    }
    if (!tui_script_done(&a->script)) {
        /* The job ignored the stop: give the terminal back and leave it behind. */
        tui_capture_stop(a->capture);
        tui_term_close(&a->term);
        fprintf(stderr, "singa-tui: the job did not stop within %d s; exiting without it\n", QUIT_SECONDS);
        _exit(1);
    }
    tui_script_join(&a->script);
    tui_status st;
    tui_script_status(&a->script, &st);
    teardown(a);
    pthread_mutex_lock(opts->lock);
    if (st.script == TUI_SCRIPT_FAILED) {
        fprintf(stderr, "singa-tui: %s\n", st.error);
        rc = 1;
    }
    free(a);
    return rc;
}

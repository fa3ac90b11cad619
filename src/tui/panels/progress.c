/* 4: where training is: its state, step and bar, the latest loss and accuracy, the last test,
 * speed and learning rate, time and ETA, the last checkpoint and the plugins loaded. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tui/app.h"
#include "tui/draw.h"

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

/* "step   1200/3000 ████░░ 40%" */
static void progress_step(tui_app *a, int y, tui_rect in)
{
    const tui_job_info *info = &a->status.info;
    int step = a->has_latest ? a->latest.step : 0, total = info->train_steps, used;
    if (info->seq)
        used = tui_textf(a, y, in.x, in.w, TUI_R_DEFAULT, "step   %d/%d ", step, total);
    else
        used = tui_text(a, y, in.x, in.w, TUI_R_DIM, "step   - (no job yet)");
    if (total > 0 && in.w - used >= 8) {
        char b[64];
        double frac = step < total ? (double)step / total : 1;
        int bw = in.w - used - 5;
        bar(b, sizeof b, bw > 20 ? 20 : bw, frac, a->term.unicode);
        used += tui_text(a, y, in.x + used, in.w - used, TUI_R_OK, b);
        tui_textf(a, y, in.x + used, in.w - used, TUI_R_DEFAULT, " %.0f%%", 100 * frac);
    }
}

/* "loss   0.3124  acc 91.2%": the latest train values (mean over groups); returns the test
 * series shown below (group 0's when there are several). */
static const tui_series *progress_loss(tui_app *a, int y, tui_rect in)
{
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
    char b[64];
    tui_plot_num(b, sizeof b, nl ? loss / nl : NAN);
    int used = tui_textf(a, y, in.x, in.w, TUI_R_DEFAULT, "loss   %s", nl ? b : "-");
    if (na)
        tui_textf(a, y, in.x + used, in.w - used, TUI_R_DEFAULT, "  acc %.1f%%", 100 * acc / na);
    return test;
}

/* "test   2.3199  acc 13.0%  @1500": the last test. */
static void progress_test(tui_app *a, int y, tui_rect in, const tui_series *test)
{
    if (!test || tui_series_len(test) == 0) {
        tui_text(a, y, in.x, in.w, TUI_R_DEFAULT, "test   -");
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
    tui_text(a, y, in.x, in.w, TUI_R_DEFAULT, fitting(in.w, 0, 3, f));
}

/* "speed  42.4k img/s  lr 0.04 (x0.5)": "-" for what is not known (the warm-up step's speed,
 * the rate of a run's file). */
static void progress_speed(tui_app *a, int y, tui_rect in, bool paused)
{
    const tui_sample *x = &a->latest;
    double scale = atomic_load(&a->script.control.lr_scale);
    char speed[32] = "-", lr[32] = "-", f[3][96], sc[32] = "";
    if (a->has_latest && isfinite(x->images_per_sec))
        tui_human(speed, sizeof speed, x->images_per_sec);
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
    int used = tui_text(a, y, in.x, in.w, TUI_R_DEFAULT, fitting(in.w, (int)strlen(sc), 3, f));
    tui_text(a, y, in.x + used, in.w - used, TUI_R_WARN, sc);
}

/* "time   1:02  ETA 3:04" */
static void progress_time(tui_app *a, int y, tui_rect in, bool paused)
{
    char b1[64], b2[64], f[2][96];
    tui_duration(b1, sizeof b1, a->has_latest ? a->latest.elapsed : 0);
    tui_duration(b2, sizeof b2, a->has_latest && a->status.job == TUI_JOB_TRAINING ? a->latest.eta : NAN);
    if (paused)
        snprintf(b2, sizeof b2, "paused");
    snprintf(f[0], sizeof f[0], "time   %s  ETA %s", b1, b2);
    snprintf(f[1], sizeof f[1], "time %s ETA %s", b1, b2);
    tui_text(a, y, in.x, in.w, TUI_R_DEFAULT, fitting(in.w, 0, 2, f));
}

static void progress_ckpt(tui_app *a, int y, tui_rect in)
{
    if (!a->status.info.ckpt_dir[0]) {
        tui_text(a, y, in.x, in.w, TUI_R_DIM, "ckpt   no checkpoint_path");
    } else if (a->status.ckpt_count == 0) {
        tui_text(a, y, in.x, in.w, TUI_R_DIM, "ckpt   none yet");
    } else {
        char b[64];
        tui_duration(b, sizeof b, tui_now() - a->ckpt_time);
        tui_textf(a, y, in.x, in.w, TUI_R_DEFAULT, "ckpt   step %d, %s ago", a->status.ckpt_step, b);
    }
}

static void draw(tui_app *a, tui_rect r)
{
    tui_frame(a, TUI_P_PROGRESS, r, NULL);
    tui_rect in = tui_inner(r);
    int y = in.y, role;
    if (in.h >= 8) { /* the title bar says it too */
        const char *word = tui_state_word(a, &role);
        int used = tui_text(a, y, in.x, in.w, TUI_R_DIM, "state  ");
        tui_text(a, y++, in.x + used, in.w - used, role, word);
    }
    progress_step(a, y++, in);
    const tui_series *test = progress_loss(a, y++, in);
    progress_test(a, y++, in, test);
    /* Paused, the last step's speed and ETA would go stale: they say so instead. */
    bool paused = a->status.job == TUI_JOB_TRAINING && atomic_load(&a->script.control.paused);
    progress_speed(a, y++, in, paused);
    progress_time(a, y++, in, paused);
    if (y < in.y + in.h)
        progress_ckpt(a, y++, in);
    if (y < in.y + in.h)
        tui_textf(a, y, in.x, in.w, TUI_R_DIM, "plugin %s", a->status.info.plugins[0] ? a->status.info.plugins : "-");
}

/* 10 rows on a tall terminal, else 9 (at least 7: step to time). */
static int rows(const tui_app *a, tui_room room) { return room.lines >= 30 ? 10 : 9; }

const tui_panel_class tui_panel_progress = {
    .name = "progress", .title = "Progress", .key = '4',
    .column = 1, .order = 10, .min_rows = 7, .rows = rows,
    .draw = draw,
};

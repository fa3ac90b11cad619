/* The overlays drawn over the panels: the help (?), asking before quitting while training,
 * asking before replacing an earlier run's checkpoints, and the terminal-too-small notice. */
#include <stdio.h>
#include <string.h>

#include "tui/app.h"
#include "tui/draw.h"

#define MAX_TOO_SMALL_LINES 12

static tui_rect dialog_box(tui_app *a, int w, int h, const char *title)
{
    int W = COLS, H = LINES;
    if (w > W - 2)
        w = W - 2;
    if (h > H - 2)
        h = H - 2;
    tui_rect r = {(W - w) / 2, (H - h) / 2, w, h};
    attrset(A_NORMAL);
    for (int y = r.y; y < r.y + r.h; y++)
        mvhline(y, r.x, ' ', r.w);
    attrset(a->term.attr[TUI_R_FOCUS]);
    tui_border(r);
    tui_textf(a, r.y, r.x + 2, r.w - 4, TUI_R_FOCUS, " %s ", title);
    return tui_inner(r);
}

static void draw_help(tui_app *a)
{
    tui_key_help k;
    char buf[32];
    int n = 0;
    while (tui_keys_help(n, &k, buf, sizeof buf))
        n++;
    tui_rect in = dialog_box(a, 74, n + 6, "Keys (any key closes)");
    for (int i = 0; i < n && i < in.h && tui_keys_help(i, &k, buf, sizeof buf); i++) {
        tui_text(a, in.y + i, in.x, 18, TUI_R_KEY, k.keys);
        tui_text(a, in.y + i, in.x + 19, in.w - 19, TUI_R_DEFAULT, k.what);
    }
    if (in.h > n + 1)
        tui_text(a, in.y + n + 1, in.x, in.w, TUI_R_DIM, "In the console: Enter runs, Up/Down recall, Esc leaves.");
    if (in.h > n + 2)
        tui_text(a, in.y + n + 2, in.x, in.w, TUI_R_DIM, "singa.pause() resume() checkpoint() lr_scale(x) steer the job.");
}

/* " y  what it does" */
static void choice(tui_app *a, int y, tui_rect in, const char *key, const char *what)
{
    int used = tui_text(a, y, in.x, in.w, TUI_R_KEY, key);
    tui_text(a, y, in.x + used + 1, in.w - used - 1, TUI_R_DEFAULT, what);
}

static void draw_quit(tui_app *a)
{
    bool ckpt = a->status.info.ckpt_dir[0] != 0;
    tui_rect in = dialog_box(a, 52, ckpt ? 7 : 6, "Quit while training?");
    int y = in.y;
    tui_text(a, y++, in.x, in.w, TUI_R_DEFAULT, "The job is still training.");
    y++;
    if (ckpt)
        choice(a, y++, in, " c ", "write a checkpoint, then quit");
    choice(a, y++, in, " y ", "quit now");
    choice(a, y, in, " n ", "keep training (Esc)");
}

static void draw_replace(tui_app *a)
{
    const tui_job_info *info = &a->status.info;
    tui_rect in = dialog_box(a, 64, 10, "Replace an earlier run's checkpoints?");
    char msg[768];
    snprintf(msg, sizeof msg, "%s holds %d checkpoint%s of an earlier run (newest: step %llu). This run does not "
             "resume them (resume = true would) and replaces them once it writes its first checkpoint.",
             info->ckpt_dir, info->stale, info->stale == 1 ? "" : "s", info->stale_newest);
    int starts[8], n = tui_wrap(msg, in.w, starts, 8), y = in.y;
    for (int k = 0; k < n && y < in.y + in.h - 3; k++) {
        int end = k + 1 < n ? starts[k + 1] : (int)strlen(msg);
        tui_textf(a, y++, in.x, in.w, TUI_R_DEFAULT, "%.*s", end - starts[k], msg + starts[k]);
    }
    y = in.y + in.h - 2;
    choice(a, y++, in, " y ", "train, replacing them");
    choice(a, y, in, " n ", "do not train (Esc); q quits");
}

void tui_draw_dialog(tui_app *a)
{
    if (a->dialog == TUI_DIALOG_HELP)
        draw_help(a);
    else if (a->dialog == TUI_DIALOG_QUIT)
        draw_quit(a);
    else if (a->dialog == TUI_DIALOG_REPLACE)
        draw_replace(a);
}

/* The size needed comes first and the words wrap, so it shows on the smallest terminal. */
void tui_draw_too_small(tui_app *a, int W, int H)
{
    char msg[128];
    snprintf(msg, sizeof msg, "singa-tui needs %dx%d; this terminal is %dx%d. q quits", TUI_MIN_W, TUI_MIN_H, W, H);
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
        tui_text(a, y + i, 0, W, TUI_R_WARN, line[i]);
}

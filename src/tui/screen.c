/* A frame of the workbench: the title bar, the panels of the table where the layout puts
 * them, the footer's key hints, and a dialog over them.  The focused panel may ask for the
 * terminal's cursor; it is placed once everything is drawn. */
#include <stdio.h>
#include <string.h>

#include "singa/singa.h"
#include "tui/app.h"
#include "tui/draw.h"

#define TUI_PANEL_ROW(id, name) [TUI_P_##id] = &tui_panel_##name,
const tui_panel_class *const tui_panels[TUI_P_COUNT] = {TUI_PANELS(TUI_PANEL_ROW)};
#undef TUI_PANEL_ROW

const char *tui_state_word(const tui_app *a, int *role)
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

static void draw_title(tui_app *a, int W)
{
    attrset(a->term.attr[TUI_R_KEY]);
    mvhline(0, 0, ' ', W);
    int role;
    const char *word = tui_state_word(a, &role);
    char left[512];
    snprintf(left, sizeof left, " singa-tui %s | %s | %s", SINGA_VERSION, a->status.info.seq ? a->status.info.name : "-",
             a->file);
    char right[96];
    if (a->status.info.seq)
        snprintf(right, sizeof right, "%s  step %d/%d ", word, a->has_latest ? a->latest.step : 0, a->status.info.train_steps);
    else
        snprintf(right, sizeof right, "%s ", word);
    int rw = (int)strlen(right);
    tui_text(a, 0, 0, W - rw - 1, TUI_R_KEY, left);
    tui_text(a, 0, W - rw, rw, TUI_R_KEY, right);
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
        x += tui_text(a, y, x, W - x, TUI_R_KEY, k[i].keys);
        x += tui_text(a, y, x, W - x, TUI_R_DEFAULT, " ");
        x += tui_text(a, y, x, W - x, TUI_R_DEFAULT, k[i].what) + 1;
    }
    if (note)
        tui_text(a, y, limit > x ? limit + 1 : x, W - x, TUI_R_WARN, a->note);
}

void tui_draw(tui_app *a)
{
    int W = COLS, H = LINES;
    erase();
    curs_set(0);
    if (W < TUI_MIN_W || H < TUI_MIN_H) {
        tui_draw_too_small(a, W, H);
        refresh();
        return;
    }
    tui_rect r[TUI_P_COUNT];
    tui_layout(a, W, H, r);
    draw_title(a, W);
    a->cursor_y = -1;
    for (int p = 0; p < TUI_P_COUNT; p++)
        tui_panels[p]->draw(a, r[p]);
    draw_footer(a, W, H);
    if (a->cursor_y >= 0) {
        move(a->cursor_y, a->cursor_x);
        curs_set(1);
    }
    tui_draw_dialog(a);
    if (a->dialog != TUI_DIALOG_NONE)
        curs_set(0);
    refresh();
}

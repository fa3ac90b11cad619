/* 5: the job's output and the workbench's notes, wrapped; it scrolls back. */
#include <stdio.h>

#include "tui/app.h"
#include "tui/draw.h"

static void draw(tui_app *a, tui_rect r)
{
    char extra[64] = "";
    if (a->log_scroll > 0)
        snprintf(extra, sizeof extra, "(%d lines back; End follows)", a->log_scroll);
    tui_frame(a, TUI_P_LOG, r, extra);
    tui_rect in = tui_inner(r);
    a->rows[TUI_P_LOG] = in.h;
    a->log_scroll = tui_draw_lines(a, a->log, in, in.h, a->log_scroll);
}

/* Back from the newest line (clamped when drawn). */
static void browse(tui_app *a, int key) { tui_scroll_lines(a, &a->log_scroll, 1, key); }

const tui_panel_class tui_panel_log = {
    .name = "log", .title = "Log", .key = '5',
    .column = 0, .order = 30, .min_rows = 4,
    .draw = draw, .browse = browse,
};

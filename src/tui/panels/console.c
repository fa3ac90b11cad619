/* 6: the Lua console (console.c): its transcript, and the input line scrolled sideways to keep
 * the cursor in view.  While it has the focus it takes the keys first, but for Tab, Shift-Tab
 * and F1; Esc clears the line, or leaves.  Off when attached or with --open. */
#include <string.h>

#include "tui/app.h"
#include "tui/draw.h"

static void draw(tui_app *a, tui_rect r)
{
    tui_console *c = &a->console;
    tui_frame(a, TUI_P_CONSOLE, r, c->scroll > 0 ? "(scrolled)" : NULL);
    tui_rect in = tui_inner(r);
    a->rows[TUI_P_CONSOLE] = in.h;
    int rows = in.h - 1;
    if (c->nqueued && rows > 0) {
        tui_text(a, in.y + rows - 1, in.x, in.w, TUI_R_WARN, "(waiting for the script to free the Lua state...)");
        rows--;
    }
    c->scroll = tui_draw_lines(a, a->transcript, in, rows, c->scroll);
    const char *prompt = tui_console_prompt(c);
    int y = in.y + in.h - 1, pw = (int)strlen(prompt), room = in.w - pw - 1;
    tui_text(a, y, in.x, in.w, TUI_R_INPUT, prompt);
    int from = c->cursor > room ? c->cursor - room : 0;
    attrset(A_NORMAL);
    for (int i = from, col = 0; i < c->len && col < room + 1; i++, col++) {
        wchar_t w = c->input[i];
        if (!a->term.unicode && w > 126)
            w = '?';
        mvaddnwstr(y, in.x + pw + col, &w, 1);
    }
    if (a->focus == TUI_P_CONSOLE && c->len == 0 && !c->chunk[0] && room > 30 && tui_log_total(a->transcript) == 0)
        tui_text(a, y, in.x + pw, room, TUI_R_DIM, "Lua, e.g. singa.lr_scale(0.5)");
    if (a->focus == TUI_P_CONSOLE && a->dialog == TUI_DIALOG_NONE) {
        a->cursor_y = y;
        a->cursor_x = in.x + pw + c->cursor - from;
    }
}

static bool input(tui_app *a, int key, bool is_key_code, wint_t ch)
{
    if (a->attach || a->args->open)
        return false;
    if (key == 27) { /* Esc: clear the line, or leave */
        if (a->console.len || a->console.chunk[0])
            tui_console_key(&a->console, 0, 3 /* ^C */);
        else
            a->focus = a->before_console;
        return true;
    }
    return key != '\t' && key != TUI_KEY_CODE(KEY_BTAB) && key != TUI_KEY_CODE(KEY_F(1)) &&
           tui_console_key(&a->console, is_key_code, ch);
}

const tui_panel_class tui_panel_console = {
    .name = "console", .title = "Lua console", .key = '6',
    .column = 1, .order = 40, .min_rows = 4,
    .draw = draw, .input = input,
};

/* What the panels, the title bar, the footer and the dialogs draw with: text cut to a width
 * (UTF-8, '?' beyond ASCII without a UTF-8 locale), frames, canvases, wrapped logs, numbers. */
#ifndef SINGA_TUI_DRAW_H
#define SINGA_TUI_DRAW_H

#include <stddef.h>

#include "tui/log.h"
#include "tui/panel.h"

/* Writes s at (y, x) in at most maxw columns in a role's colours; returns the columns used. */
int tui_text(tui_app *a, int y, int x, int maxw, int role, const char *s);
int tui_textf(tui_app *a, int y, int x, int maxw, int role, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* The line around r, in the current attributes. */
void tui_border(tui_rect r);
/* Panel p's frame, " 1 Title extra ", in the focus colour when it has the focus. */
void tui_frame(tui_app *a, tui_panel p, tui_rect r, const char *extra);
/* Inside a frame, a column of margin each side. */
tui_rect tui_inner(tui_rect r);
/* "1:02:03" or "2:03"; "-" when s is not a time. */
void tui_duration(char *buf, size_t len, double s);
/* 12345 -> "12.3k": at most 6 characters. */
void tui_human(char *buf, size_t len, double v);
/* Where s breaks to fit `width` columns: byte offsets of its pieces' starts (continuation
 * pieces are drawn indented by two); returns how many (at most max). */
int tui_wrap(const char *s, int width, int *starts, int max);
/* The lines of `log` ending `scroll` lines back from the newest, wrapped, in the last `rows`
 * rows of `in`; returns the scroll clamped to what the log holds. */
int tui_draw_lines(tui_app *a, tui_log *log, tui_rect in, int rows, int scroll);

#endif

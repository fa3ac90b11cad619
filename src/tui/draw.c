/* Everything is drawn into ncurses's virtual screen after erase(), and one refresh() sends
 * only the cells that changed, so redrawing the whole screen never flickers. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

#include "tui/app.h"
#include "tui/draw.h"

int tui_text(tui_app *a, int y, int x, int maxw, int role, const char *s)
{
    if (maxw <= 0)
        return 0;
    attrset(a->term.attr[role]);
    int used = 0;
    while (*s && used < maxw) {
        wchar_t w = (wchar_t)tui_utf8_next(&s);
        if (!a->term.unicode && w > 126)
            w = '?';
        int cw = w < 127 ? 1 : wcwidth(w);
        if (cw < 0) {
            w = '?';
            cw = 1;
        }
        if (used + cw > maxw)
            break;
        if (cw > 0)
            mvaddnwstr(y, x + used, &w, 1);
        used += cw;
    }
    attrset(A_NORMAL);
    return used;
}

int tui_textf(tui_app *a, int y, int x, int maxw, int role, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return tui_text(a, y, x, maxw, role, buf);
}

void tui_duration(char *buf, size_t len, double s)
{
    if (!isfinite(s) || s < 0) {
        snprintf(buf, len, "-");
        return;
    }
    long t = lround(s);
    if (t >= 3600)
        snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

void tui_human(char *buf, size_t len, double v)
{
    if (v >= 1e9)
        snprintf(buf, len, "%.1fG", v / 1e9);
    else if (v >= 1e6)
        snprintf(buf, len, "%.1fM", v / 1e6);
    else if (v >= 1e4)
        snprintf(buf, len, "%.1fk", v / 1e3);
    else
        snprintf(buf, len, "%.0f", v);
}

void tui_border(tui_rect r)
{
    mvaddch(r.y, r.x, ACS_ULCORNER);
    mvhline(r.y, r.x + 1, ACS_HLINE, r.w - 2);
    mvaddch(r.y, r.x + r.w - 1, ACS_URCORNER);
    mvvline(r.y + 1, r.x, ACS_VLINE, r.h - 2);
    mvvline(r.y + 1, r.x + r.w - 1, ACS_VLINE, r.h - 2);
    mvaddch(r.y + r.h - 1, r.x, ACS_LLCORNER);
    mvhline(r.y + r.h - 1, r.x + 1, ACS_HLINE, r.w - 2);
    mvaddch(r.y + r.h - 1, r.x + r.w - 1, ACS_LRCORNER);
}

void tui_frame(tui_app *a, tui_panel p, tui_rect r, const char *extra)
{
    bool focused = a->focus == p && a->dialog == TUI_DIALOG_NONE;
    attrset(focused ? a->term.attr[TUI_R_FOCUS] : a->term.attr[TUI_R_DIM]);
    tui_border(r);
    attrset(A_NORMAL);
    char title[128];
    snprintf(title, sizeof title, " %c %s%s%s ", tui_panels[p]->key, tui_panels[p]->title, extra && *extra ? " " : "",
             extra ? extra : "");
    tui_text(a, r.y, r.x + 2, r.w - 4, focused ? TUI_R_FOCUS : TUI_R_TITLE, title);
}

tui_rect tui_inner(tui_rect r) { return (tui_rect){r.x + 2, r.y + 1, r.w - 4, r.h - 2}; }

int tui_wrap(const char *s, int width, int *starts, int max)
{
    int n = 0, col = 0, space = -1, space_col = 0; /* the break after the piece's last space */
    starts[n++] = 0;
    for (const char *p = s; *p;) {
        const char *at = p;
        wchar_t w = (wchar_t)tui_utf8_next(&p);
        int cw = w < 127 ? 1 : wcwidth(w) > 0 ? wcwidth(w) : 1;
        if (col + cw > width - (n > 1 ? 2 : 0) && n < max) {
            if (space > starts[n - 1] && col - space_col < width / 2) {
                starts[n++] = space;
                col -= space_col;
            } else {
                starts[n++] = (int)(at - s);
                col = 0;
            }
            space = -1;
        }
        col += cw;
        if (w == ' ') {
            space = (int)(p - s);
            space_col = col;
        }
    }
    return n;
}

static int line_role(int kind)
{
    switch (kind) {
    case TUI_LINE_ERROR:
        return TUI_R_ERROR;
    case TUI_LINE_WARN:
        return TUI_R_WARN;
    case TUI_LINE_NOTE:
        return TUI_R_DIM;
    case TUI_LINE_INPUT:
        return TUI_R_INPUT;
    default:
        return TUI_R_DEFAULT;
    }
}

int tui_draw_lines(tui_app *a, tui_log *log, tui_rect in, int rows, int scroll)
{
    uint64_t total = tui_log_total(log), first = tui_log_first(log);
    if ((uint64_t)scroll > total - first)
        scroll = (int)(total - first);
    if (scroll > 0 && total - first > 0 && (uint64_t)scroll >= total - first)
        scroll = (int)(total - first) - 1;
    char line[TUI_LINE_MAX], piece[TUI_LINE_MAX];
    int y = in.y + rows; /* drawing upwards from the bottom */
    for (uint64_t i = total - (uint64_t)scroll; i > first && y > in.y; i--) {
        int kind = tui_log_get(log, i - 1, line, sizeof line), starts[32];
        if (kind < 0)
            break;
        int n = tui_wrap(line, in.w, starts, 32);
        for (int k = n - 1; k >= 0 && y > in.y; k--) {
            int end = k + 1 < n ? starts[k + 1] : (int)strlen(line);
            snprintf(piece, sizeof piece, "%s%.*s", k ? "  " : "", end - starts[k], line + starts[k]);
            tui_text(a, --y, in.x, in.w, line_role(kind), piece);
        }
    }
    return scroll;
}

/* Cell grids and the UTF-8 coding the TUI needs (Lua and the log speak UTF-8; ncursesw wants
 * code points). */
#include <stdlib.h>
#include <string.h>

#include "tui/canvas.h"

int tui_canvas_init(tui_canvas *c, int w, int h)
{
    c->w = w > 0 ? w : 0;
    c->h = h > 0 ? h : 0;
    c->cells = calloc((size_t)c->w * (size_t)c->h + 1, sizeof *c->cells);
    return c->cells ? 0 : -1;
}

void tui_canvas_free(tui_canvas *c)
{
    free(c->cells);
    c->cells = NULL;
}

void tui_canvas_clear(tui_canvas *c) { memset(c->cells, 0, (size_t)c->w * (size_t)c->h * sizeof *c->cells); }

tui_cell *tui_canvas_at(tui_canvas *c, int x, int y)
{
    if (x < 0 || y < 0 || x >= c->w || y >= c->h)
        return NULL;
    return &c->cells[(size_t)y * (size_t)c->w + (size_t)x];
}

void tui_canvas_put(tui_canvas *c, int x, int y, uint32_t ch, int role, int bold)
{
    tui_cell *cell = tui_canvas_at(c, x, y);
    if (cell)
        *cell = (tui_cell){ch, (uint8_t)role, (uint8_t)bold};
}

uint32_t tui_utf8_next(const char **s)
{
    const unsigned char *p = (const unsigned char *)*s;
    uint32_t cp = p[0];
    int n = cp < 0x80 ? 0 : (cp & 0xE0) == 0xC0 ? 1 : (cp & 0xF0) == 0xE0 ? 2 : (cp & 0xF8) == 0xF0 ? 3 : -1;
    if (n < 0) {
        *s += 1;
        return '?';
    }
    if (n > 0)
        cp &= 0x3Fu >> n;
    for (int i = 1; i <= n; i++) {
        if ((p[i] & 0xC0) != 0x80) {
            *s += i;
            return '?';
        }
        cp = cp << 6 | (p[i] & 0x3F);
    }
    *s += n + 1;
    return cp;
}

int tui_utf8_put(uint32_t cp, char *out)
{
    int n;
    if (cp < 0x80) {
        out[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        out[0] = (char)(0xF0 | cp >> 18);
        out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
        out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    out[n] = 0;
    return n;
}

int tui_canvas_text(tui_canvas *c, int x, int y, const char *s, int role, int bold)
{
    while (*s && x < c->w) {
        tui_canvas_put(c, x, y, tui_utf8_next(&s), role, bold);
        x++;
    }
    return x;
}

int tui_canvas_write(const tui_canvas *c, FILE *f)
{
    for (int y = 0; y < c->h; y++) {
        const tui_cell *row = &c->cells[(size_t)y * (size_t)c->w];
        int end = c->w;
        while (end > 0 && (row[end - 1].ch == 0 || row[end - 1].ch == ' '))
            end--;
        char buf[8];
        for (int x = 0; x < end; x++) {
            tui_utf8_put(row[x].ch ? row[x].ch : ' ', buf);
            fputs(buf, f);
        }
        fputc('\n', f);
    }
    return ferror(f) ? -1 : 0;
}

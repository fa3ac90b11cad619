/* A grid of character cells with a colour role each: the plot draws into one, which the
 * workbench copies to the screen and `w` writes out as plain text. */
#ifndef SINGA_TUI_CANVAS_H
#define SINGA_TUI_CANVAS_H

#include <stdint.h>
#include <stdio.h>

/* What a cell is, not how it looks: term.c maps roles to colours (or to none, with NO_COLOR). */
typedef enum tui_role {
    TUI_R_DEFAULT,
    TUI_R_DIM,    /* axes, hints */
    TUI_R_TITLE,  /* panel titles */
    TUI_R_FOCUS,  /* the focused panel's frame and title */
    TUI_R_ERROR,
    TUI_R_WARN,
    TUI_R_OK,     /* running */
    TUI_R_KEY,    /* key names in the footer and help */
    TUI_R_INPUT,  /* console input echoed */
    TUI_R_SERIES, /* TUI_R_SERIES + (group % TUI_NSERIES): one colour per worker group */
} tui_role;
#define TUI_NSERIES 6
#define TUI_R_COUNT (TUI_R_SERIES + TUI_NSERIES)

typedef struct tui_cell {
    uint32_t ch; /* a Unicode code point; 0 is a blank */
    uint8_t role;
    uint8_t bold;
} tui_cell;

typedef struct tui_canvas {
    int w, h;
    tui_cell *cells;
} tui_canvas;

/* A blank w x h canvas; -1 when out of memory. */
int tui_canvas_init(tui_canvas *c, int w, int h);
void tui_canvas_free(tui_canvas *c);
void tui_canvas_clear(tui_canvas *c);
/* Cells outside the canvas are ignored. */
void tui_canvas_put(tui_canvas *c, int x, int y, uint32_t ch, int role, int bold);
tui_cell *tui_canvas_at(tui_canvas *c, int x, int y);
/* Writes UTF-8 text from (x, y) on one row, clipped at the right edge; returns the next x. */
int tui_canvas_text(tui_canvas *c, int x, int y, const char *utf8, int role, int bold);
/* The canvas as UTF-8 lines without trailing blanks. */
int tui_canvas_write(const tui_canvas *c, FILE *f);
/* Decodes one UTF-8 code point at *s and advances *s (invalid bytes become '?'). */
uint32_t tui_utf8_next(const char **s);
/* Encodes cp into out (at least 5 bytes, NUL-terminated); returns its length. */
int tui_utf8_put(uint32_t cp, char *out);

#endif

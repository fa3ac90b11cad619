/* A panel of the workbench as a small class (as htop's): its name and title, the key that
 * focuses it, where it sits and how tall it wants to be, and its functions.  Each lives in a
 * file of its own under panels/; TUI_PANELS lists them, and the layout (layout.c), the drawing
 * (screen.c), the focus keys and the help (keys.c) loop over that one table.
 *
 * Adding a panel: a file panels/NAME.c defining `const tui_panel_class tui_panel_NAME`, a row
 * X(NAME_IN_CAPITALS, NAME) at the end of TUI_PANELS, and the file in Makefile.am. */
#ifndef SINGA_TUI_PANEL_H
#define SINGA_TUI_PANEL_H

#include <stdbool.h>
#include <wchar.h>

/* The panels in the order of their numbers (their keys, Tab's order): X(ID, name) declares
 * TUI_P_ID and tui_panel_name. */
#define TUI_PANELS(X)                                                                               \
    X(PLOT, plot)                                                                                   \
    X(TRAFFIC, traffic)                                                                             \
    X(TOPOLOGY, topology)                                                                           \
    X(PROGRESS, progress)                                                                           \
    X(LOG, log)                                                                                     \
    X(CONSOLE, console)                                                                             \
    X(WORKERS, workers)

#define TUI_PANEL_ID(id, name) TUI_P_##id,
typedef enum tui_panel { TUI_PANELS(TUI_PANEL_ID) TUI_P_COUNT } tui_panel;
#undef TUI_PANEL_ID

typedef struct tui_app tui_app;

typedef struct tui_rect {
    int x, y, w, h;
} tui_rect;

/* Where a panel is asked for its height: its column's rows (between the title bar and the
 * footer), the rows still free from its top down, and the terminal's lines. */
typedef struct tui_room {
    int column, left, lines;
} tui_room;

typedef struct tui_panel_class {
    const char *name;  /* as in TUI_PANELS */
    const char *title; /* on its frame, after its key */
    int key;           /* focuses it; its number on the frame */
    /* Layout: the left column (0) takes 62% of the width, the right (1) the rest.  A column's
     * panels stack by `order`, top first; the last takes the rows left.  A panel gets the rows
     * it asks (`rows`; NULL: its min_rows), but keeps those below at least their min_rows. */
    int column, order, min_rows;
    int (*rows)(const tui_app *a, tui_room room);
    /* > 0: a panel that scrolls, which gives a row (down to lend_rows) to its column's last
     * when a panel below it leaves that one fewer than TUI_LAST_ROWS. */
    int lend_rows;
    void (*draw)(tui_app *a, tui_rect r);
    /* Optional.  feed: takes what it shows from the job's stats (once a second, and when the
     * job's state changes); reset: a new job starts; browse: arrows, PgUp/PgDn, Home/End while
     * it has the focus; input: takes every key first while it has the focus (true: used). */
    void (*feed)(tui_app *a, double now);
    void (*reset)(tui_app *a);
    void (*browse)(tui_app *a, int key);
    bool (*input)(tui_app *a, int key, bool is_key_code, wint_t ch);
} tui_panel_class;

#define TUI_LAST_ROWS 6

/* ncurses key codes (KEY_UP ...) as keys, apart from characters. */
#define TUI_KEY_CODE(k) ((k) | 0x1000000)

#define TUI_PANEL_CLASS(id, name) extern const tui_panel_class tui_panel_##name;
TUI_PANELS(TUI_PANEL_CLASS)
#undef TUI_PANEL_CLASS

/* screen.c: the table, indexed by tui_panel. */
extern const tui_panel_class *const tui_panels[TUI_P_COUNT];

/* layout.c: each panel's rectangle on a W x H screen (height 0: no room for it). */
void tui_layout(const tui_app *a, int W, int H, tui_rect r[TUI_P_COUNT]);

#endif

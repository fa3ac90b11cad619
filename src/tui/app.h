/* The workbench's state, shared by its parts: app.c (life cycle and event loop), keys.c (the
 * key table), screen.c (a frame), the panels (panel.h, panels/), start.c (the start screen). */
#ifndef SINGA_TUI_APP_H
#define SINGA_TUI_APP_H

#include "tui/attach.h"
#include "tui/canvas.h"
#include "tui/capture.h"
#include "tui/console.h"
#include "tui/log.h"
#include "tui/panel.h"
#include "tui/plot.h"
#include "tui/ring.h"
#include "tui/script.h"
#include "tui/series.h"
#include "tui/stats.h"
#include "tui/term.h"
#include "tui/traffic.h"
#include "tui/tui.h"

/* REPLACE: a fresh run would replace an earlier run's checkpoints; train anyway? */
typedef enum tui_dialog { TUI_DIALOG_NONE, TUI_DIALOG_HELP, TUI_DIALOG_QUIT, TUI_DIALOG_REPLACE } tui_dialog;

/* Which plots the loss panel shows (`m` cycles). */
typedef enum tui_plots { TUI_PLOTS_BOTH, TUI_PLOTS_LOSS, TUI_PLOTS_ACC } tui_plots;

#define TUI_REDRAW_SECONDS 0.1 /* at most ten frames a second */
#define TUI_MIN_W 60             /* smaller, the screen only says so */
#define TUI_MIN_H 16

struct tui_app {
    tui_term term;
    tui_capture *capture;
    tui_log *log;          /* the job's log */
    tui_log *transcript;   /* the console's */
    tui_ring *ring;
    tui_script script;
    tui_console console;
    lua_State *L;
    singa_lua_opts *opts;
    const singa_tui_args *args;
    char file[4096];       /* the script open (attached: the job's address; --open: the file) */
    tui_attach *attach;    /* --attach: the job's stream feeds the state, no script runs */

    /* what the UI knows, refreshed every tick */
    tui_status status;
    tui_history history;
    tui_sample latest;     /* the newest step sample */
    bool has_latest;
    int job_seen;          /* tui_job_info.seq the history belongs to */
    tui_traffic traffic;
    bool messages;         /* the job counts messages (it has a distributed runtime) */
    int traffic_total;     /* rows the runtime counts (the model keeps TUI_TRAFFIC_ROWS) */
    uint64_t dropped;      /* messages the runtime dropped */
    tui_node nodes[TUI_MAX_NODES];
    int nnodes;            /* how many the job has (at most TUI_MAX_NODES kept) */
    tui_rejoins rejoins;   /* its lost processes and rejoins */
    singa_worker_time workers[TUI_MAX_WORKERS]; /* their step times, stragglers flagged */
    int nworkers;          /* how many the job has (at most TUI_MAX_WORKERS kept) */
    double predicted_step; /* cluster.plan = "auto"'s predicted step, seconds (0: none) */
    singa_link links[TUI_MAX_LINKS]; /* rank 0's bytes to and from the other processes */
    int nlinks;
    double stats_time;     /* when the stats were last asked */
    double ckpt_time;      /* when the last checkpoint was seen */
    int ckpt_seen;

    /* the view */
    tui_panel focus, before_console;
    tui_dialog dialog;
    tui_plots plots;
    bool logy;
    int zoom;              /* the plot shows 1/2^zoom of the steps */
    double pan;            /* steps the view's right edge is left of the newest */
    int log_scroll;        /* lines back from the newest (0: follow) */
    int topo_scroll;
    int rows[TUI_P_COUNT]; /* each panel's inner height at the last draw (page size) */
    int cursor_y, cursor_x; /* where the focused panel wants the cursor (-1: hidden) */
    char note[256];        /* a message in the footer for a few seconds */
    double note_until;

    bool dirty;
    double last_draw;
    int asked_seq;         /* the last job --run asked about replacing checkpoints */
    bool quitting;         /* the user quit; waiting for the script to end */
    double quit_deadline;
    bool done;
};

double tui_now(void);
/* Shows msg in the footer for a few seconds (and in the log when `log`). */
void tui_app_note(tui_app *a, bool log, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* q: quits, asking first while a job trains. */
void tui_app_quit(tui_app *a, bool checkpoint);
bool tui_app_training(const tui_app *a);
/* w: the metrics as CSV and the plot as text, in the current folder. */
void tui_app_export(tui_app *a);

/* keys.c: one key press; the footer's hints and the help's lines. */
void tui_keys_handle(tui_app *a, int is_key_code, wint_t ch);
typedef struct tui_key_help {
    const char *keys, *what;
} tui_key_help;
/* The help's i-th row (its keys may be written in buf); false past the last. */
bool tui_keys_help(int i, tui_key_help *row, char *buf, size_t len);
/* The footer's hints for the focused panel, "key what" pairs. */
const tui_key_help *tui_keys_footer(const tui_app *a, int *n);

/* Arrows, PgUp/PgDn (a page: the panel's rows at the last draw), Home/End on a panel's scroll
 * of lines, which counts up (sign 1: the log, back from the newest) or down (-1). */
void tui_scroll_lines(tui_app *a, int *scroll, int sign, int key);

/* screen.c: draws a frame; the job's state in a word, in its role's colour (*role). */
void tui_draw(tui_app *a);
const char *tui_state_word(const tui_app *a, int *role);
/* dialogs.c: the dialog open (a->dialog); the notice that the terminal is too small. */
void tui_draw_dialog(tui_app *a);
void tui_draw_too_small(tui_app *a, int W, int H);

/* panels/plot.c: the plot's step range under the current zoom and pan. */
void tui_plot_range(const tui_app *a, double *x0, double *x1);
/* Renders the plots as they are on screen into c (ASCII when !unicode): `w` uses it. */
void tui_draw_plots(tui_app *a, tui_canvas *c, int x, int y, int w, int h, bool unicode);

/* start.c: the start screen; fills `file` and returns 0, or -1 when the user quits. */
int tui_start_screen(tui_app *a, char *file, size_t len);

#endif

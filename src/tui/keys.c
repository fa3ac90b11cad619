/* The workbench's keys as one table (as tmux declares its commands): a row binds keys to a
 * command and says what it does, and the help overlay is made from the same rows, so adding a
 * key is adding a row.  The focused panel's class may take keys first (the console does, but
 * for Tab, Shift-Tab and F1); then each panel's key focuses it, and the rows run. */
#include <stdio.h>
#include <string.h>

#include "tui/app.h"

#define CODE(k) TUI_KEY_CODE(k)
#define CTRL(c) ((c) & 0x1f)

typedef struct binding {
    int keys[5];       /* 0 ends the list */
    tui_key_help help; /* {NULL}: a row the help does not show */
    void (*run)(tui_app *a, int key);
} binding;

static bool job_running(const tui_app *a) { return a->status.job == TUI_JOB_TRAINING; }

/* An attached workbench steers the job only with --control and the job's consent; a finished
 * run's file (--open) not at all.  Says why when it may not. */
static bool read_only(tui_app *a)
{
    if (a->args->open)
        tui_app_note(a, false, "a finished run (--open): nothing to steer");
    else if (a->attach && !tui_attach_control(a->attach))
        tui_app_note(a, false, a->args->control ? "read-only: the job does not allow control (--listen ADDR --control, "
                                                  "or cluster.monitor's control = true)"
                                                : "read-only: attach with --control to steer the job");
    return a->args->open || (a->attach && !tui_attach_control(a->attach));
}

static void cmd_quit(tui_app *a, int key)
{
    if (a->attach || a->args->open)
        tui_app_quit(a, false); /* detaching leaves the job running */
    else if (tui_app_training(a))
        a->dialog = TUI_DIALOG_QUIT;
    else
        tui_app_quit(a, false);
}

static void cmd_pause(tui_app *a, int key)
{
    singa_job_control *c = &a->script.control;
    if (read_only(a))
        return;
    if (a->attach) { /* the job's state comes back with its status */
        bool pause = !atomic_load(&c->paused);
        tui_attach_request(a->attach, pause ? TUI_CONTROL_PAUSE : TUI_CONTROL_RESUME, 1);
        tui_app_note(a, false, pause ? "asked the job to pause" : "asked the job to resume");
        return;
    }
    bool pause = !atomic_load(&c->pause);
    atomic_store(&c->pause, pause);
    if (job_running(a))
        tui_app_note(a, false, pause ? "pausing before the next step" : "resumed");
    else
        tui_app_note(a, false, pause ? "the next job will start paused" : "no longer paused");
}

static void cmd_checkpoint(tui_app *a, int key)
{
    if (read_only(a))
        return;
    if (!job_running(a))
        tui_app_note(a, false, "no job is training");
    else if (!a->status.info.ckpt_dir[0])
        tui_app_note(a, false, "this job has no checkpoint_path");
    else {
        if (a->attach)
            tui_attach_request(a->attach, TUI_CONTROL_CHECKPOINT, 1);
        else
            atomic_store(&a->script.control.checkpoint, true);
        tui_app_note(a, false, "checkpoint requested");
    }
}

/* S: an attached workbench with --control stops the job (here q does that). */
static void cmd_stop(tui_app *a, int key)
{
    if (!a->attach && !a->args->open)
        tui_app_note(a, false, "q stops the job here (S is for a workbench attached with --control)");
    else if (!read_only(a)) {
        tui_attach_request(a->attach, TUI_CONTROL_STOP, 1);
        tui_app_note(a, false, "asked the job to stop");
    }
}

/* [ and ]: halve or double the learning rate's scale (as singa.lr_scale does). */
static void cmd_lr(tui_app *a, int key)
{
    if (read_only(a))
        return;
    double scale = atomic_load(&a->script.control.lr_scale) * (key == ']' ? 2 : 0.5);
    if (a->attach)
        tui_attach_request(a->attach, TUI_CONTROL_LR_SCALE, scale);
    else
        atomic_store(&a->script.control.lr_scale, scale);
    tui_app_note(a, false, "learning rate scale %g", scale);
}

static void cmd_run(tui_app *a, int key)
{
    if (a->attach || a->args->open)
        tui_app_note(a, false, a->attach ? "the job runs on its own" : "a finished run (--open)");
    else if (a->status.job == TUI_JOB_LOADED && a->status.info.stale) {
        a->dialog = TUI_DIALOG_REPLACE;
    } else if (a->status.job == TUI_JOB_LOADED) {
        tui_script_go(&a->script);
        tui_app_note(a, false, "training");
    } else {
        tui_app_note(a, false, a->status.job == TUI_JOB_TRAINING ? "already training" : "no job waits to start");
    }
}

static void focus(tui_app *a, tui_panel p)
{
    if (p == TUI_P_CONSOLE && a->focus != TUI_P_CONSOLE)
        a->before_console = a->focus;
    a->focus = p;
}

/* Tab and Shift-Tab go round the panels in the table's order; a panel's key focuses it. */
static void cmd_focus(tui_app *a, int key)
{
    if (key == CODE(KEY_BTAB))
        focus(a, (tui_panel)((a->focus + TUI_P_COUNT - 1) % TUI_P_COUNT));
    else
        focus(a, (tui_panel)((a->focus + 1) % TUI_P_COUNT));
}

static void cmd_console(tui_app *a, int key)
{
    if (a->attach || a->args->open)
        tui_app_note(a, false, a->attach ? "the Lua console is off when attached: the job's Lua state is in its process"
                                         : "the Lua console is off: no job runs here (--open)");
    else
        focus(a, TUI_P_CONSOLE);
}

static void cmd_help(tui_app *a, int key) { a->dialog = TUI_DIALOG_HELP; }

static void cmd_logy(tui_app *a, int key)
{
    a->logy = !a->logy;
    tui_app_note(a, false, a->logy ? "loss on a log scale" : "loss on a linear scale");
}

static void cmd_zoom(tui_app *a, int key)
{
    bool in = key == '+' || key == '=';
    if (in && a->zoom < 20)
        a->zoom++;
    else if (!in && a->zoom > 0)
        a->zoom--;
    if (a->zoom == 0)
        a->pan = 0;
}

static void cmd_plots(tui_app *a, int key) { a->plots = (tui_plots)((a->plots + 1) % 3); }

static void cmd_export(tui_app *a, int key) { tui_app_export(a); }

/* Arrows, PgUp/PgDn, Home/End: whatever the focused panel scrolls. */
static void cmd_scroll(tui_app *a, int key)
{
    if (tui_panels[a->focus]->browse)
        tui_panels[a->focus]->browse(a, key);
}

void tui_scroll_lines(tui_app *a, int *scroll, int sign, int key)
{
    int page = a->rows[a->focus] > 2 ? a->rows[a->focus] - 1 : 1;
    switch (key & ~CODE(0)) {
    case KEY_UP:
        *scroll += sign;
        break;
    case KEY_DOWN:
        *scroll -= sign;
        break;
    case KEY_PPAGE:
        *scroll += sign * page;
        break;
    case KEY_NPAGE:
        *scroll -= sign * page;
        break;
    case KEY_HOME:
        *scroll = sign > 0 ? 1 << 30 : 0; /* clamped when drawn */
        break;
    case KEY_END:
        *scroll = sign > 0 ? 0 : 1 << 30;
        break;
    }
    if (*scroll < 0)
        *scroll = 0;
}

static const binding bindings[] = {
    {{'q', CTRL('c')}, {"q", "quit (asks first while training)"}, cmd_quit},
    {{'p'}, {"p", "pause / resume training"}, cmd_pause},
    {{'c'}, {"c", "write a checkpoint now"}, cmd_checkpoint},
    {{'r'}, {"r", "start training (a job waits for it without --run)"}, cmd_run},
    {{'\t', CODE(KEY_BTAB)}, {"Tab", "move the focus (Shift-Tab: back)"}, cmd_focus}, /* + the panels' keys */
    {{':', '`'}, {": `", "the Lua console"}, cmd_console},
    {{CODE(KEY_UP), CODE(KEY_DOWN), CODE(KEY_LEFT), CODE(KEY_RIGHT)}, {"arrows", "scroll the focused panel (the plot: pan)"},
     cmd_scroll},
    {{CODE(KEY_PPAGE), CODE(KEY_NPAGE), CODE(KEY_HOME), CODE(KEY_END)}, {"PgUp PgDn Home End", "scroll by pages, to the ends"},
     cmd_scroll},
    {{'l'}, {"l", "loss on a log / linear scale"}, cmd_logy},
    {{'+', '=', '-', '_'}, {"+ -", "zoom the plot's steps in / out"}, cmd_zoom},
    {{'m'}, {"m", "plots: loss and accuracy / loss / accuracy"}, cmd_plots},
    {{'w'}, {"w", "write the metrics (CSV) and the plot (text and SVG) here"}, cmd_export},
    {{'?', CODE(KEY_F(1))}, {"? F1", "this help"}, cmd_help},
    {{'S'}, {"S", "attached with --control: stop the job"}, cmd_stop},
    {{'[', ']'}, {"[ ]", "learning rate scale x0.5 / x2 (as singa.lr_scale)"}, cmd_lr},
};
#define NBINDINGS (int)(sizeof bindings / sizeof *bindings)

bool tui_keys_help(int i, tui_key_help *row, char *buf, size_t len)
{
    for (int k = 0; k < NBINDINGS; k++)
        if (bindings[k].help.keys && i-- == 0) {
            *row = bindings[k].help;
            if (bindings[k].run == cmd_focus) { /* the panels' keys, first to last */
                snprintf(buf, len, "Tab %c-%c", tui_panels[0]->key, tui_panels[TUI_P_COUNT - 1]->key);
                row->keys = buf;
            }
            return true;
        }
    return false;
}

const tui_key_help *tui_keys_footer(const tui_app *a, int *n)
{
    static const tui_key_help console[] = {{"Enter", "run"}, {"Up/Dn", "history"}, {"Esc", "leave"},
                                           {"Tab", "focus"}, {"F1", "help"}, {"^C", "cancel"}};
    static const tui_key_help waiting[] = {{"r", "run"}, {"q", "quit"}, {"?", "help"}, {":", "console"},
                                           {"Tab", "focus"}, {"l", "log"}, {"+-", "zoom"}, {"w", "export"}};
    static const tui_key_help plot[] = {{"q", "quit"}, {"?", "help"}, {"p", "pause"}, {"c", "ckpt"},
                                        {":", "console"}, {"Tab", "focus"}, {"l", "log"}, {"+-", "zoom"},
                                        {"<>", "pan"}, {"m", "plots"}, {"w", "export"}};
    static const tui_key_help other[] = {{"q", "quit"}, {"?", "help"}, {"p", "pause"}, {"c", "ckpt"},
                                         {":", "console"}, {"Tab", "focus"}, {"arrows", "scroll"}, {"w", "export"}};
#define PICK(t) (*n = (int)(sizeof t / sizeof *t), t)
    if (a->focus == TUI_P_CONSOLE)
        return PICK(console);
    if (a->status.job == TUI_JOB_LOADED)
        return PICK(waiting);
    if (a->focus == TUI_P_PLOT)
        return PICK(plot);
    return PICK(other);
#undef PICK
}

static bool dialog_key(tui_app *a, int key)
{
    if (a->dialog == TUI_DIALOG_HELP) {
        a->dialog = TUI_DIALOG_NONE;
        return true;
    }
    if (a->dialog == TUI_DIALOG_REPLACE) {
        if (key == 'y' && a->status.job == TUI_JOB_LOADED) {
            a->dialog = TUI_DIALOG_NONE;
            tui_script_replace(&a->script, a->status.info.seq);
            tui_app_note(a, true, "training: this run replaces the checkpoints in %s with its first one",
                         a->status.info.ckpt_dir);
        } else if (key == 'n' || key == 27) {
            a->dialog = TUI_DIALOG_NONE;
            tui_app_note(a, false, "not started: r asks again, q quits");
        } else if (key == 'q') {
            a->dialog = TUI_DIALOG_NONE;
            tui_app_quit(a, false);
        }
        return true;
    }
    if (a->dialog != TUI_DIALOG_QUIT)
        return false;
    if (key == 'c' && a->status.info.ckpt_dir[0]) {
        a->dialog = TUI_DIALOG_NONE;
        tui_app_quit(a, true);
    } else if (key == 'y' || key == 'q') {
        a->dialog = TUI_DIALOG_NONE;
        tui_app_quit(a, false);
    } else if (key == 'n' || key == 27) {
        a->dialog = TUI_DIALOG_NONE;
    }
    return true;
}

void tui_keys_handle(tui_app *a, int is_key_code, wint_t ch)
{
    int key = is_key_code ? CODE((int)ch) : (int)ch;
    a->dirty = true;
    if (is_key_code && ch == KEY_RESIZE)
        return;
    if (dialog_key(a, key))
        return;
    const tui_panel_class *focused = tui_panels[a->focus];
    if (focused->input && focused->input(a, key, is_key_code, ch))
        return;
    for (int p = 0; p < TUI_P_COUNT; p++)
        if (tui_panels[p]->key == key) {
            focus(a, (tui_panel)p);
            return;
        }
    for (int i = 0; i < NBINDINGS; i++)
        for (int k = 0; k < 5 && bindings[i].keys[k]; k++)
            if (bindings[i].keys[k] == key) {
                bindings[i].run(a, key);
                return;
            }
}

/* singa-tui's interactive workbench (issue 6): live panels for a job's metrics, progress,
 * log, topology and message traffic, and a Lua console in the job's state. */
#ifndef SINGA_TUI_TUI_H
#define SINGA_TUI_TUI_H

#include <lua.h>
#include <stdbool.h>

#include "lua/lsinga.h"

typedef struct singa_tui_args {
    const char *file; /* the job script, or NULL for the start screen */
    int argc;         /* the script's arguments are argv[first_arg..argc-1] */
    char **argv;
    int first_arg;
    bool run;         /* --run: train at once, without waiting for the start key */
    const char *attach; /* --attach ADDR: the panels of the job listening there, no script */
    bool control;     /* --control: ask that job to let this workbench steer it */
    const char *curve_key; /* --curve-key FILE: the secret key of a CURVE job's pair */
    const char *open; /* --open FILE: a finished run's metrics file, no script */
} singa_tui_args;

/* Runs the workbench on the terminal (stdin and stdout must be one); --attach and --open fail
 * before taking the terminal (nothing listens, a bad file), with the error on stderr.  L is the job's state,
 * prepared as for -e (package paths, opts); the caller holds opts->lock, which the workbench
 * lets go while it runs and holds again when it returns.  Returns the exit status: 0 when the
 * user quit, 1 when the script failed (or the terminal could not be used). */
int singa_tui_main(lua_State *L, singa_lua_opts *opts, const singa_tui_args *args);

#endif

/* singa-tui: runs Lua jobs.  `-e FILE` runs a script headless (unlike the `lua` program, where
 * -e runs a string); without -e, `singa-tui [FILE]` opens the interactive workbench (src/tui/).
 * The command line is cli.c's table; the modes that replace singa.train (--test ...) are
 * modes.c's.  Script errors are reported with file:line and a traceback, the engine's
 * (singa.core's) with file:line alone (singa_lua_traceback). */
#include <lauxlib.h>
#include <lualib.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/blas_core.h"
#include "app/cli.h"
#include "app/crash.h"
#include "app/plugin_cli.h"
#include "app/procs.h"
#include "lua/lsinga.h"
#include "metricsfile/metricsfile.h"
#include "paths.h"
#include "singa/singa.h"
#include "tui/monitor.h"
#include "tui/tui.h"

/* package.path gains the lua/ folder beside the program, $SINGA_LUA_PATH and the installed one. */
static void set_paths(lua_State *L)
{
    char dir[PATH_MAX];
    singa_tui_program_dir(dir, sizeof dir);
    const char *env = getenv("SINGA_LUA_PATH");
    lua_getglobal(L, "package");
    lua_pushfstring(L, "%s%s%s/lua/?.lua;%s/?.lua;", env ? env : "", env ? "/?.lua;" : "", dir,
                    SINGA_LUADIR);
    lua_getfield(L, -2, "path");
    lua_concat(L, 2);
    lua_setfield(L, -2, "path");
    lua_getfield(L, -1, "preload");
    lua_pushcfunction(L, luaopen_singa_core);
    lua_setfield(L, -2, "singa.core");
    lua_pop(L, 2);
}

/* Progress redrawn in place (\r, ESC[K) only on a terminal of this process's own: under a
 * launcher (mpirun, srun, --procs) the ranks' outputs are merged into one stream, often a log,
 * even when each rank's stdout is a pty the launcher forwards. */
static bool own_terminal(void)
{
    int rank, size;
    const char *from;
    singa_err err;
    return isatty(STDOUT_FILENO) && singa_launch_rank(&rank, &size, &from, &err) == 0 &&
           strcmp(from, "no launcher") == 0;
}

static int run_script(lua_State *L, const char *file, int argc, char **argv, int first)
{
    lua_createtable(L, argc - first, 1);
    lua_pushstring(L, file);
    lua_rawseti(L, -2, 0);
    for (int i = first; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i - first + 1);
    }
    lua_setglobal(L, "arg");
    lua_pushcfunction(L, singa_lua_traceback);
    int base = lua_gettop(L);
    int rc = singa_lua_load_job(L, file);
    if (rc == LUA_OK) {
        for (int i = first; i < argc; i++)
            lua_pushstring(L, argv[i]);
        rc = lua_pcall(L, argc - first, 0, base);
    }
    if (rc != LUA_OK && singa_lua_finished(L, -1))
        rc = LUA_OK;
    if (rc != LUA_OK) {
        fflush(stdout);
        fprintf(stderr, "singa-tui: %s\n", lua_tostring(L, -1));
        return 1;
    }
    return 0;
}

/* The script's Lua state, its opts set as the command line asks; 0, or the exit status. */
static int prepare(lua_State **L, singa_lua_opts *opts, const singa_cli *c)
{
    if (c->metrics) {
        if (!(opts->metrics = fopen(c->metrics, "w"))) {
            perror(c->metrics);
            return 2;
        }
        opts->metrics_path = c->metrics;
        size_t len = strlen(c->metrics);
        opts->metrics_csv = len > 4 && strcmp(c->metrics + len - 4, ".csv") == 0;
        singa_metrics_file_header(opts->metrics, opts->metrics_csv);
    }
    if (!(*L = luaL_newstate())) {
        fprintf(stderr, "singa-tui: cannot create a Lua state (out of memory)\n");
        return 1;
    }
    luaL_openlibs(*L);
    set_paths(*L);
    singa_lua_set_opts(*L, opts);
    return 0;
}

/* Runs what the command line asks for on L, with opts->lock held: the script headless
 * (*monitor listening for workbenches when asked), its conversion, or the workbench; the exit
 * status. */
static int run(lua_State *L, singa_lua_opts *opts, singa_cli *c, tui_monitor **monitor)
{
    singa_err err;
    if (c->script && !c->convert && !opts->mode.run &&
        tui_monitor_new(monitor, L, opts, c->listen, c->tui.control, &err) < 0) {
        fprintf(stderr, "singa-tui: %s\n", err.msg);
        return 1;
    }
    return c->convert  ? singa_lua_convert(L, c->script)
           : c->script ? run_script(L, c->script, c->argc, c->argv, c->first_arg)
                       : singa_tui_main(L, opts, &c->tui);
}

int main(int argc, char **argv)
{
    singa_tui_blas_core(argv);
    singa_tui_crash_handlers();
    singa_cli c;
    int rc = singa_cli_parse(&c, argc, argv);
    if (rc >= 0)
        return rc;
    if (c.procs > 1) /* the ranks run this program again, without --procs */
        return singa_tui_procs(c.procs, c.procs_at, c.elastic, c.elastic_at, c.script ? 0 : c.tui.first_arg - 1,
                               argc, argv);
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    singa_lua_opts opts = {.progress_line = own_terminal(), .mode = singa_cli_mode(&c), .lock = &lock,
                           .trace = c.trace, .trace_steps = c.trace_steps};
    char plugin_path[4 * PATH_MAX + 64];
    singa_tui_plugin_path(plugin_path, sizeof plugin_path);
    opts.plugin_path = plugin_path;
    lua_State *L = NULL;
    if ((rc = prepare(&L, &opts, &c)) != 0)
        return rc;
    tui_monitor *monitor = NULL; /* a headless job listens for workbenches when asked */
    pthread_mutex_lock(&lock);
    rc = run(L, &opts, &c, &monitor);
    pthread_mutex_unlock(&lock);
    if (rc != 0 && opts.lost)
        rc = opts.lost == SINGA_JOB_HUNG ? SINGA_EXIT_HUNG : SINGA_EXIT_LOST;
    tui_monitor_free(monitor, rc != 0); /* without the lock: its thread may wait for it */
    lua_close(L);
    if (opts.metrics && fclose(opts.metrics) != 0) {
        perror(c.metrics);
        rc = 1;
    }
    return rc;
}

/* The Lua binding of libsinga (module "singa.core"; lua/singa.lua builds `singa` on it). */
#ifndef SINGA_LUA_LSINGA_H
#define SINGA_LUA_LSINGA_H

#include <lua.h>
#include <pthread.h>
#include <stdio.h>

/* How the program wants training reported; kept in the Lua registry. */
typedef struct singa_lua_opts {
    FILE *metrics;     /* one record per display/test/validation result, or NULL */
    int metrics_csv;   /* CSV instead of JSON lines */
    int progress_line; /* stdout is a terminal: redraw one progress line */
    int test_only;     /* --test: singa.train evaluates the job's checkpoint, then ends the script */
    /* Which OS thread may run Lua code on the state: the host holds it while its script runs;
     * singa.train lets it go for the length of the job, and the job's callbacks (kLua updaters
     * and schedules, called from worker and server threads) take it for each call, as does an
     * interactive console.  NULL when only one thread ever touches the state. */
    pthread_mutex_t *lock;
    /* Folders (colon-separated) whose plugins are loaded when the module opens, or NULL. */
    const char *plugin_path;
} singa_lua_opts;

int luaopen_singa_core(lua_State *L);
/* Stores opts (which must outlive L) for singa.train to use. */
void singa_lua_set_opts(lua_State *L, singa_lua_opts *opts);
/* Whether the error value at idx is the one that ends a script after singa.train ran in
 * test_only mode (a success, not an error). */
int singa_lua_finished(lua_State *L, int idx);

#endif

#ifndef SINGA_LUA_LUACONF_H
#define SINGA_LUA_LUACONF_H

#include <lua.h>
#include <pthread.h>
#include "singa/conf.h"

/* Registry field holding the state's lock (singa_lua_opts.lock) as a light userdata: Lua
 * functions in a converted tree take it for each call, since the engine calls them from its
 * own threads. */
#define SINGA_LUA_LOCK_KEY "singa.lock"

/* Registry field holding the running job (a light userdata) while singa.train runs: a Lua
 * function it calls is interrupted once the job is abandoned (singa_job_abandoned). */
#define SINGA_LUA_LIVE_JOB_KEY "singa.job.live"
/* Registry field set to true when such a function was interrupted. */
#define SINGA_LUA_INTERRUPTED_KEY "singa.job.interrupted"

/* Converts the Lua value at idx; `path` names it in messages ("job"). */
singa_conf *singa_lua_toconf(lua_State *L, int idx, const char *path, singa_err *err);

#endif

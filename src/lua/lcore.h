/* What the files of singa.core share: its registry and errors, the job table as the engine's
 * objects (ljob.c), and the module's functions, which lsinga.c's table lists. */
#ifndef SINGA_LUA_LCORE_H
#define SINGA_LUA_LCORE_H

#include <lua.h>

#include "lua/lsinga.h"
#include "singa/singa.h"

#define SINGA_LUA_LIVE_STATS_KEY "singa.stats.live" /* the running job's counters */
#define SINGA_LUA_LAST_STATS_KEY "singa.stats.last" /* the last job's, as a table */

/* The layer registry of the state (its plugins loaded into it). */
singa_registry *singa_lua_registry(lua_State *L);
/* Marks the program's opts: a job ended because it lost a process (how: 1), or this process
 * was the hung one (SINGA_JOB_HUNG). */
void singa_lua_set_lost(lua_State *L, int how);
/* Raises msg as a Lua error with the caller's position, as luaL_error does. */
int singa_lua_raise(lua_State *L, const char *msg);
/* t[field] = { name = mean, ... } of m, for the table on top of the stack. */
void singa_lua_push_metrics(lua_State *L, const singa_metrics *m, const char *field);
/* A new table { name, type } for layer l, with room for `fields` fields in all (lgraph.c). */
void singa_lua_push_layer_row(lua_State *L, const singa_layer *l, int fields);
/* singa.stats()'s table of st (NULL: empty lists) (lstats.c). */
void singa_lua_push_stats(lua_State *L, const singa_stats *st);

/* ljob.c: the job table at index `job` (1 for the rest), its plugins loaded first; each raises
 * the engine's error. */
void singa_lua_job_plugins(lua_State *L, int job);
/* As a conf, *reg the state's registry. */
singa_conf *singa_lua_job_conf(lua_State *L, int idx, singa_registry **reg);
singa_job *singa_lua_create_job(lua_State *L);
/* The caller frees the model before it next calls anything that may raise. */
singa_model *singa_lua_load_model(lua_State *L, const singa_job_hooks *hooks);

/* The module's functions, by file. */
int singa_lua_train(lua_State *L);         /* ltrain.c */
int singa_lua_params(lua_State *L);
int singa_lua_load(lua_State *L);          /* lmodel.c (and singa_lua_test, lsinga.h) */
int singa_lua_predict(lua_State *L);
int singa_lua_stats(lua_State *L);         /* lstats.c */
int singa_lua_rank(lua_State *L);
int singa_lua_graph(lua_State *L);         /* lgraph.c (and singa_lua_summary, lsinga.h) */
int singa_lua_gradcheck(lua_State *L);     /* lprobe.c */
int singa_lua_gradcheck_net(lua_State *L);
int singa_lua_forward(lua_State *L);
int singa_lua_load_plugin(lua_State *L);   /* lplugin.c */
int singa_lua_plugins(lua_State *L);
int singa_lua_layer_types(lua_State *L);
/* Ends the script after a program's mode (lsinga.h's singa_lua_mode): raises the marker that
 * singa_lua_finished knows. */
int singa_lua_finish(lua_State *L);
/* singa.pause, singa.resume, singa.checkpoint and singa.lr_scale (lcontrol.c): sets them in the
 * table on top of the stack. */
void singa_lua_control_open(lua_State *L);
/* singa.read_idx and singa.read_csv (ldata.c): sets them in the table on top of the stack. */
void singa_lua_data_open(lua_State *L);
/* singa.core.read_pbtext and singa.core.suggest (lconf.c): sets them in the table on top. */
void singa_lua_conf_open(lua_State *L);

#endif

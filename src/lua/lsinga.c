/* singa.core: the module table of the Lua binding of libsinga, and what its files share: the
 * layer registry, the program's opts and the errors it reports.  The layer registry lives in a
 * userdata owned by the Lua state, so two states never share mutable engine state; the plugins
 * loaded into it go with it. */
#include <lauxlib.h>
#include <math.h>
#include <stdio.h>

#include "lua/lcore.h"
#include "lua/lplot.h"
#include "lua/ltensor.h"
#include "lua/luaconf.h"

#define REGISTRY_KEY "singa.registry"
#define OPTS_KEY "singa.opts"

static int registry_gc(lua_State *L)
{
    singa_registry **reg = luaL_checkudata(L, 1, REGISTRY_KEY);
    singa_registry_free(*reg);
    *reg = NULL;
    return 0;
}

singa_registry *singa_lua_registry(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, REGISTRY_KEY "#");
    singa_registry **reg = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return *reg;
}

void singa_lua_set_opts(lua_State *L, singa_lua_opts *opts)
{
    lua_pushlightuserdata(L, opts);
    lua_setfield(L, LUA_REGISTRYINDEX, OPTS_KEY);
    lua_pushlightuserdata(L, opts->lock); /* for luaconf.c's functions */
    lua_setfield(L, LUA_REGISTRYINDEX, SINGA_LUA_LOCK_KEY);
}

const singa_lua_opts *singa_lua_get_opts(lua_State *L)
{
    static const singa_lua_opts none; /* nothing extra reported */
    lua_getfield(L, LUA_REGISTRYINDEX, OPTS_KEY);
    const singa_lua_opts *o = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return o ? o : &none;
}

void singa_lua_set_lost(lua_State *L, int how)
{
    lua_getfield(L, LUA_REGISTRYINDEX, OPTS_KEY);
    singa_lua_opts *opts = lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (opts)
        opts->lost = how;
}

/* Raises a Lua error with the caller's position, as luaL_error does. */
int singa_lua_raise(lua_State *L, const char *msg)
{
    luaL_where(L, 1);
    lua_pushstring(L, msg);
    lua_concat(L, 2);
    return lua_error(L);
}

void singa_lua_push_metrics(lua_State *L, const singa_metrics *m, const char *field)
{
    lua_newtable(L);
    for (int i = 0; i < m->n; i++) {
        lua_pushnumber(L, m->count[i] ? m->sum[i] / (double)m->count[i] : NAN);
        lua_setfield(L, -2, m->name[i]);
    }
    lua_setfield(L, -2, field);
}

static const char finished_key = 0; /* its address is the error value that ends a script after a mode */

int singa_lua_finished(lua_State *L, int idx) { return lua_touserdata(L, idx) == &finished_key; }

int singa_lua_finish(lua_State *L)
{
    lua_pushlightuserdata(L, (void *)&finished_key);
    return lua_error(L);
}

/* The registry key of the set of singa.core's functions (the engine's). */
static const char engine_key = 0;

/* Whether the error being handled was raised by one of singa.core's functions: a job the engine
 * refuses or a failure while it runs, whose message says all there is (with the caller's line). */
static bool raised_by_engine(lua_State *L)
{
    lua_Debug ar;
    if (!lua_getstack(L, 1, &ar) || !lua_getinfo(L, "f", &ar))
        return false;
    bool engine = false;
    if (lua_iscfunction(L, -1) && lua_rawgetp(L, LUA_REGISTRYINDEX, &engine_key) == LUA_TTABLE) {
        lua_pushvalue(L, -2);
        engine = lua_rawget(L, -2) == LUA_TBOOLEAN;
    }
    lua_settop(L, 1);
    return engine;
}

int singa_lua_traceback(lua_State *L)
{
    if (singa_lua_finished(L, 1))
        return 1;
    const char *msg = lua_tostring(L, 1);
    if (msg && raised_by_engine(L))
        return 1;
    if (!msg)
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    luaL_traceback(L, L, msg, 1);
    return 1;
}

/* Marks every function of the module at the top of the stack as the engine's. */
static void mark_engine(lua_State *L)
{
    lua_newtable(L);
    lua_pushnil(L);
    while (lua_next(L, -3)) {
        if (lua_iscfunction(L, -1)) {
            lua_pushboolean(L, 1);
            lua_rawset(L, -4);
        } else {
            lua_pop(L, 1);
        }
    }
    lua_rawsetp(L, LUA_REGISTRYINDEX, &engine_key);
}

/* A plugin found by scanning the plugin folders that fails to load is reported and skipped. */
static void warn_plugin(void *ud, const char *msg)
{
    fflush(stdout);
    fprintf(stderr, "singa-tui: %s (skipped)\n", msg);
}

int luaopen_singa_core(lua_State *L)
{
    static const luaL_Reg funcs[] = {
        {"train", singa_lua_train},
        {"stats", singa_lua_stats},
        {"rank", singa_lua_rank},
        {"gradcheck", singa_lua_gradcheck},
        {"gradcheck_net", singa_lua_gradcheck_net},
        {"forward", singa_lua_forward},
        {"layer_types", singa_lua_layer_types},
        {"test", singa_lua_test},
        {"predict", singa_lua_predict},
        {"load", singa_lua_load},
        {"tensor", singa_lua_tensor_ctor},
        {"load_plugin", singa_lua_load_plugin},
        {"plugins", singa_lua_plugins},
        {"graph", singa_lua_graph},
        {"params", singa_lua_params},
        {"summary", singa_lua_summary},
        {"export_onnx", singa_lua_export_onnx},
        {"plot", singa_lua_plot},
        {NULL, NULL},
    };
    singa_registry **reg = lua_newuserdatauv(L, sizeof *reg, 0);
    *reg = NULL;
    if (luaL_newmetatable(L, REGISTRY_KEY)) {
        lua_pushcfunction(L, registry_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    if (!(*reg = singa_registry_new()))
        return luaL_error(L, "out of memory");
    if (singa_lua_get_opts(L)->plugin_path)
        singa_plugin_load_path(*reg, singa_lua_get_opts(L)->plugin_path, warn_plugin, NULL);
    lua_setfield(L, LUA_REGISTRYINDEX, REGISTRY_KEY "#");
    singa_lua_tensor_open(L);
    luaL_newlib(L, funcs);
    singa_lua_control_open(L);
    singa_lua_data_open(L);
    singa_lua_conf_open(L);
    lua_pushstring(L, SINGA_VERSION);
    lua_setfield(L, -2, "version");
    lua_pushfstring(L, "%d.%d", SINGA_PLUGIN_ABI_MAJOR, SINGA_PLUGIN_ABI_MINOR);
    lua_setfield(L, -2, "plugin_abi");
    /* The cluster's field names, so the presets (lua/singa/cluster.lua) pass every one through. */
    lua_newtable(L);
    for (int i = 0; singa_cluster_fields[i].name; i++) {
        lua_pushstring(L, singa_cluster_fields[i].name);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "cluster_fields");
    mark_engine(L);
    return 1;
}

/* SINGA's job.conf in Lua: the text-format reader (core/pbtext.c through singa/conf.h) as
 * singa.core.read_pbtext, the "did you mean" helper for the importer (lua/singa/jobconf.lua,
 * which maps the tree to a job), and the loader that lets `-e job.conf` and the workbench run a
 * conf as a script calling singa.train(singa.import_conf(file)). */
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua/lcore.h"
#include "singa/conf.h"

static void push_conf(lua_State *L, const singa_conf *c)
{
    luaL_checkstack(L, 4, "job.conf nested too deep");
    switch (c->kind) {
    case SINGA_CONF_BOOL: lua_pushboolean(L, c->b); break;
    case SINGA_CONF_NUM: lua_pushnumber(L, c->num); break;
    case SINGA_CONF_STR: lua_pushstring(L, c->str); break;
    case SINGA_CONF_LIST:
    case SINGA_CONF_TABLE:
        lua_createtable(L, c->kind == SINGA_CONF_LIST ? (int)c->n : 0, c->kind == SINGA_CONF_TABLE ? (int)c->n : 0);
        for (size_t i = 0; i < c->n; i++) {
            push_conf(L, c->items[i]);
            if (c->kind == SINGA_CONF_LIST)
                lua_rawseti(L, -2, (lua_Integer)i + 1);
            else
                lua_setfield(L, -2, c->keys[i]);
        }
        break;
    default: lua_pushnil(L); /* the reader makes no functions */
    }
}

/* singa.core.read_pbtext(path) -> the tree of pbtext.h as Lua tables. */
static int l_read_pbtext(lua_State *L)
{
    singa_err err;
    singa_conf *tree = singa_conf_read_pbtext(luaL_checkstring(L, 1), &err);
    if (!tree) {
        lua_pushstring(L, err.msg); /* already "file:line:col: ...", no Lua position */
        return lua_error(L);
    }
    push_conf(L, tree);
    singa_conf_free(tree);
    return 1;
}

/* singa.core.suggest(name, { candidates }) -> the closest candidate or nil. */
static int l_suggest(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    size_t n = (size_t)luaL_len(L, 2);
    const char **cands = lua_newuserdatauv(L, (n ? n : 1) * sizeof *cands, 0);
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 2, (lua_Integer)i + 1);
        cands[i] = luaL_checkstring(L, -1);
        lua_pop(L, 1); /* the table keeps the string alive */
    }
    const char *s = singa_suggest(name, cands, n);
    if (s)
        lua_pushstring(L, s);
    else
        lua_pushnil(L);
    return 1;
}

/* singa.core.conf_error(msg): raises msg, which names the conf's file and line, as the engine's
 * error (reported without a traceback through the importer). */
static int l_conf_error(lua_State *L)
{
    luaL_checkstring(L, 1);
    lua_settop(L, 1);
    return lua_error(L);
}

void singa_lua_conf_open(lua_State *L)
{
    static const luaL_Reg funcs[] = {
        {"read_pbtext", l_read_pbtext},
        {"suggest", l_suggest},
        {"conf_error", l_conf_error},
        {NULL, NULL},
    };
    luaL_setfuncs(L, funcs, 0);
}

/* The chunk that runs a conf: singa.train(singa.import_conf(file)), the file an upvalue, by
 * singa.jobconf.run, which names the conf's line in the engine's errors. */
static int run_conf(lua_State *L)
{
    lua_getglobal(L, "require");
    lua_pushliteral(L, "singa.jobconf");
    lua_call(L, 1, 1);
    lua_getfield(L, -1, "run");
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_call(L, 1, 0);
    return 0;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

int singa_lua_load_job(lua_State *L, const char *file)
{
    if (!ends_with(file, ".conf")) {
        int rc = luaL_loadfilex(L, file, "t");
        if (rc != LUA_ERRSYNTAX)
            return rc;
        /* Not Lua: a conf under another name when it reads as protobuf text. */
        singa_err err;
        singa_conf *tree = singa_conf_read_pbtext(file, &err);
        if (!tree)
            return rc;
        singa_conf_free(tree);
        lua_pop(L, 1);
    }
    lua_pushstring(L, file);
    lua_pushcclosure(L, run_conf, 1);
    return LUA_OK;
}

static int convert(lua_State *L)
{
    lua_getglobal(L, "require");
    lua_pushliteral(L, "singa.jobconf");
    lua_call(L, 1, 1);
    lua_getfield(L, -1, "to_lua");
    lua_pushvalue(L, 1);
    lua_call(L, 1, 1);
    return 1;
}

int singa_lua_convert(lua_State *L, const char *file)
{
    lua_pushcfunction(L, convert);
    lua_pushstring(L, file);
    size_t len;
    const char *text;
    if (lua_pcall(L, 1, 1, 0) != LUA_OK || !(text = lua_tolstring(L, -1, &len))) {
        fprintf(stderr, "singa-tui: %s\n", lua_tostring(L, -1) ? lua_tostring(L, -1) : "--convert failed");
        return 1;
    }
    if (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0) {
        perror("singa-tui: --convert");
        return 1;
    }
    return 0;
}

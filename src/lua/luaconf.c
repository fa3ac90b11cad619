/* Lua tables to configuration trees: sequences become lists, string-keyed tables become tables;
 * anything else (functions, mixed keys) is refused with the path of the offending field. */
#include <lauxlib.h>
#include <stdio.h>
#include <string.h>

#include "lua/luaconf.h"

static singa_conf *convert(lua_State *L, int idx, const char *path, singa_err *err, int depth);

static singa_conf *convert_table(lua_State *L, int idx, const char *path, singa_err *err, int depth)
{
    luaL_checkstack(L, 4, "job table nested too deeply");
    lua_Integer len = (lua_Integer)lua_rawlen(L, idx);
    size_t nkeys = 0;
    bool named = false;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        nkeys++;
        if (lua_type(L, -2) == LUA_TSTRING) {
            named = true;
        } else if (!lua_isinteger(L, -2) || lua_tointeger(L, -2) < 1 || lua_tointeger(L, -2) > len) {
            lua_pop(L, 2);
            singa_err_set(err, "%s: keys must be names or list positions 1..n", path);
            return NULL;
        }
        lua_pop(L, 1);
    }
    if (named && len > 0) {
        singa_err_set(err, "%s: mixes list items and named fields", path);
        return NULL;
    }
    singa_conf *c = singa_conf_new(named || nkeys == 0 ? SINGA_CONF_TABLE : SINGA_CONF_LIST);
    if (!c) {
        singa_err_set(err, "out of memory");
        return NULL;
    }
    char sub[512];
    if (!named) {
        for (lua_Integer i = 1; i <= len; i++) {
            lua_rawgeti(L, idx, i);
            snprintf(sub, sizeof sub, "%s[%lld]", path, (long long)i);
            singa_conf *item = convert(L, lua_gettop(L), sub, err, depth + 1);
            lua_pop(L, 1);
            if (!item || singa_conf_add(c, NULL, item) < 0) {
                singa_conf_free(item);
                singa_conf_free(c);
                return NULL;
            }
        }
        return c;
    }
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        const char *key = lua_tostring(L, -2);
        snprintf(sub, sizeof sub, "%s.%s", path, key);
        singa_conf *item = convert(L, lua_gettop(L), sub, err, depth + 1);
        if (!item || singa_conf_add(c, key, item) < 0) {
            lua_pop(L, 2);
            singa_conf_free(item);
            singa_conf_free(c);
            return NULL;
        }
        lua_pop(L, 1);
    }
    return c;
}

static singa_conf *convert(lua_State *L, int idx, const char *path, singa_err *err, int depth)
{
    if (depth > 32) {
        singa_err_set(err, "%s: nested too deeply (a table that contains itself?)", path);
        return NULL;
    }
    switch (lua_type(L, idx)) {
    case LUA_TBOOLEAN:
        return singa_conf_new_bool(lua_toboolean(L, idx));
    case LUA_TNUMBER:
        return singa_conf_new_num(lua_tonumber(L, idx));
    case LUA_TSTRING:
        return singa_conf_new_str(lua_tostring(L, idx));
    case LUA_TTABLE:
        return convert_table(L, idx, path, err, depth);
    default:
        singa_err_set(err, "%s: a %s is not allowed here", path, luaL_typename(L, idx));
        return NULL;
    }
}

singa_conf *singa_lua_toconf(lua_State *L, int idx, const char *path, singa_err *err)
{
    return convert(L, lua_absindex(L, idx), path, err, 0);
}

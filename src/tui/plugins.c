/* The progress panel's "plugin" line: the plugins loaded into the job's Lua state (from the
 * plugin folders, by singa.load_plugin or by the job's `plugins`) with their layer types, e.g.
 * "prelu (kPReLU), swish (kSwish)".  The layer registry belongs to the Lua state and changes
 * only under its lock, so it is read through singa.plugins() with that lock held. */
#include <lauxlib.h>
#include <stdio.h>

#include "singa/error.h"
#include "tui/script.h"

/* Appends the strings of the list at the top of the stack, joined by ", ". */
static void append_list(lua_State *L, char *buf, size_t len)
{
    lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, -1, i);
        singa_appendf(buf, len, "%s%s", i > 1 ? ", " : "", lua_isstring(L, -1) ? lua_tostring(L, -1) : "?");
        lua_pop(L, 1);
    }
}

void tui_plugins_describe(lua_State *L, char *buf, size_t len)
{
    snprintf(buf, len, "?");
    if (!lua_checkstack(L, 6))
        return;
    int top = lua_gettop(L);
    lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    if (lua_getfield(L, -1, "singa.core") != LUA_TTABLE || lua_getfield(L, -1, "plugins") != LUA_TFUNCTION ||
        lua_pcall(L, 0, 1, 0) != LUA_OK || !lua_istable(L, -1)) {
        lua_settop(L, top);
        return;
    }
    lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
    snprintf(buf, len, "%s", n ? "" : "none loaded");
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, -1, i);
        lua_getfield(L, -1, "name");
        singa_appendf(buf, len, "%s%s (", i > 1 ? ", " : "", lua_isstring(L, -1) ? lua_tostring(L, -1) : "?");
        lua_pop(L, 1);
        if (lua_getfield(L, -1, "types") == LUA_TTABLE)
            append_list(L, buf, len);
        singa_appendf(buf, len, ")");
        lua_pop(L, 2);
    }
    lua_settop(L, top);
}

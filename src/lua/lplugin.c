/* singa.load_plugin, singa.plugins and singa.layer_types: the registry's plugins and layer
 * types (singa/plugin.h). */
#include <lauxlib.h>

#include "lua/lcore.h"

/* A plugin as Lua sees it: { name, version, description, path, abi = "1.0", types = {...} } */
static void push_plugin(lua_State *L, const singa_plugin *p)
{
    size_t n = singa_plugin_types(p, NULL, 0);
    const singa_layer_type **types = lua_newuserdatauv(L, (n ? n : 1) * sizeof *types, 0);
    singa_plugin_types(p, types, n);
    int major, minor;
    singa_plugin_abi(p, &major, &minor);
    lua_createtable(L, 0, 6);
    lua_pushstring(L, singa_plugin_name(p));
    lua_setfield(L, -2, "name");
    lua_pushstring(L, singa_plugin_version(p));
    lua_setfield(L, -2, "version");
    lua_pushstring(L, singa_plugin_description(p));
    lua_setfield(L, -2, "description");
    lua_pushstring(L, singa_plugin_path(p));
    lua_setfield(L, -2, "path");
    lua_pushfstring(L, "%d.%d", major, minor);
    lua_setfield(L, -2, "abi");
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_pushstring(L, types[i]->name);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "types");
    lua_remove(L, -2); /* the types' userdata */
}

/* singa.load_plugin(path) -> the plugin (as in singa.plugins()); a file already loaded is not
 * loaded again. */
int singa_lua_load_plugin(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    const singa_plugin *p;
    singa_err err = {{0}};
    if (singa_plugin_load(singa_lua_registry(L), path, &p, &err) < 0)
        return singa_lua_raise(L, err.msg);
    push_plugin(L, p);
    return 1;
}

/* singa.plugins() -> the loaded plugins in load order */
int singa_lua_plugins(lua_State *L)
{
    const singa_registry *reg = singa_lua_registry(L);
    size_t n = singa_registry_plugins(reg, NULL, 0);
    const singa_plugin **ps = lua_newuserdatauv(L, (n ? n : 1) * sizeof *ps, 0);
    singa_registry_plugins(reg, ps, n);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        push_plugin(L, ps[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

int singa_lua_layer_types(lua_State *L)
{
    const char *names[512];
    size_t n = singa_registry_names(singa_lua_registry(L), names, 512);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_pushstring(L, names[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

#ifndef SINGA_LUA_LUACONF_H
#define SINGA_LUA_LUACONF_H

#include <lua.h>
#include "singa/conf.h"

/* Converts the Lua value at idx; `path` names it in messages ("job"). */
singa_conf *singa_lua_toconf(lua_State *L, int idx, const char *path, singa_err *err);

#endif

/* The modes of singa-tui that take the place of singa.train: each runs in singa.train's frame
 * (luaL_error names the script's line) on the job table at index 1. */
#include <lauxlib.h>
#include <stdio.h>

#include "app/modes.h"
#include "lua/lsinga.h"

void singa_tui_mode_test(lua_State *L, const char *arg)
{
    (void)arg;
    singa_lua_test(L);
}

void singa_tui_mode_dot(lua_State *L, const char *arg)
{
    (void)arg;
    singa_graph g;
    singa_lua_graph_build(L, &g, "kTrain");
    int rc = singa_graph_dot(&g, stdout);
    singa_graph_free(&g);
    if (rc < 0 || fflush(stdout) != 0)
        luaL_error(L, "%s", "singa-tui --dot: cannot write the graph to standard output");
}

void singa_tui_mode_summary(lua_State *L, const char *arg)
{
    (void)arg;
    singa_lua_summary(L);
    if (fputs(lua_tostring(L, -2), stdout) < 0 || fflush(stdout) != 0)
        luaL_error(L, "%s", "singa-tui --summary: cannot write to standard output");
}

static const char *field(lua_State *L, const char *name)
{
    lua_getfield(L, -1, name);
    const char *s = lua_tostring(L, -1);
    lua_pop(L, 1); /* the string stays in the result table */
    return s;
}

static lua_Integer integer(lua_State *L, const char *name)
{
    lua_getfield(L, -1, name);
    lua_Integer v = lua_tointeger(L, -1);
    lua_pop(L, 1);
    return v;
}

void singa_tui_mode_export_onnx(lua_State *L, const char *arg)
{
    lua_settop(L, 1);
    lua_pushstring(L, arg);
    singa_lua_export_onnx(L);
    printf("wrote %s: %d ONNX nodes (opset 13), %zu bytes; input '%s', output '%s'; params of %s (step %llu)\n", arg,
           (int)integer(L, "nodes"), (size_t)integer(L, "bytes"), field(L, "input"), field(L, "output"),
           field(L, "checkpoint"), (unsigned long long)integer(L, "step"));
    if (fflush(stdout) != 0)
        luaL_error(L, "singa-tui --export-onnx: cannot write to standard output");
}

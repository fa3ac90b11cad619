/* singa.export_onnx(job, path [, checkpoint]): a trained job's kTest net as an ONNX model
 * (src/train/onnx.c). */
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>

#include "lua/lcore.h"
#include "singa/onnx.h"

/* Exports the job at index 1; raises on failure. */
static void export(lua_State *L, const char *path, const char *checkpoint, singa_onnx_info *info)
{
    singa_registry *reg;
    singa_conf *conf = singa_lua_job_conf(L, 1, &reg);
    singa_err err = {{0}};
    int rc = singa_onnx_export(conf, path, checkpoint, reg, info, &err);
    singa_conf_free(conf);
    if (rc < 0) {
        luaL_where(L, 1);
        lua_pushstring(L, err.msg);
        lua_concat(L, 2);
        lua_error(L);
    }
}

/* -> { path, input, output, nodes, bytes, checkpoint, step } */
int singa_lua_export_onnx(lua_State *L)
{
    const char *path = luaL_checkstring(L, 2), *checkpoint = luaL_optstring(L, 3, NULL);
    singa_onnx_info *info = lua_newuserdatauv(L, sizeof *info, 0); /* collected if export raises */
    export(L, path, checkpoint, info);
    lua_createtable(L, 0, 7);
    const struct { const char *k, *v; } strs[] = {
        {"path", path}, {"input", info->input}, {"output", info->output}, {"checkpoint", info->checkpoint},
    };
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) {
        lua_pushstring(L, strs[i].v);
        lua_setfield(L, -2, strs[i].k);
    }
    lua_pushinteger(L, info->nodes);
    lua_setfield(L, -2, "nodes");
    lua_pushinteger(L, (lua_Integer)info->bytes);
    lua_setfield(L, -2, "bytes");
    lua_pushinteger(L, (lua_Integer)info->step);
    lua_setfield(L, -2, "step");
    return 1;
}

/* Trained models: singa.test, singa.load and singa.predict (src/train/predict.c). */
#include <lauxlib.h>
#include <stdio.h>
#include <string.h>

#include "lua/lcore.h"
#include "lua/lreport.h"
#include "lua/ltensor.h"
#include "singa/predict.h"

/* singa.test(job) -> { test = {...}, step = n, checkpoint = file } */
int singa_lua_test(lua_State *L)
{
    singa_lua_reporter rp = {.opts = singa_lua_get_opts(L), .t0 = singa_lua_now()};
    singa_job_hooks hooks = {.ud = &rp, .record = singa_lua_report_record, .log = singa_lua_report_log};
    singa_model *m = singa_lua_load_model(L, &hooks);
    singa_metrics res;
    singa_err err = {{0}};
    int rc = singa_model_test(m, &hooks, &res, &err);
    lua_Integer step = (lua_Integer)singa_model_step(m);
    char file[4096];
    snprintf(file, sizeof file, "%s", singa_model_checkpoint(m));
    singa_model_free(m);
    if (rc < 0)
        return singa_lua_raise(L, err.msg);
    lua_newtable(L);
    singa_lua_push_metrics(L, &res, "test");
    lua_pushinteger(L, step);
    lua_setfield(L, -2, "step");
    lua_pushstring(L, file);
    lua_setfield(L, -2, "checkpoint");
    return 1;
}

static int set_gc(lua_State *L)
{
    singa_ckpt_set_free(lua_touserdata(L, 1));
    return 0;
}

static void push_entry(lua_State *L, const singa_ckpt_entry *e)
{
    int dims[4];
    for (int d = 0; d < e->ndim; d++)
        dims[d] = (int)e->dims[d];
    singa_tensor *t = singa_lua_tensor_new(L, e->ndim, dims);
    memcpy(t->data, e->data, e->bytes);
}

/* singa.load(path) -> { step = n, checkpoint = where, topology = "...", params = { name = tensor },
 * updater = { [param] = { slot = tensor } } }: a checkpoint of any topology as one model
 * (include/singa/ckpt_set.h).  The set lives in a userdata until the tables are built, so a Lua
 * error on the way frees it. */
int singa_lua_load(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    singa_ckpt_set *s = lua_newuserdatauv(L, sizeof *s, 0);
    memset(s, 0, sizeof *s);
    if (luaL_newmetatable(L, "singa.ckpt_set")) {
        lua_pushcfunction(L, set_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    singa_err err = {{0}};
    if (singa_ckpt_set_open(s, path, NULL, NULL, NULL, &err) != 0)
        return singa_lua_raise(L, err.msg);
    char topo[256];
    singa_ckpt_topology_describe(s->topology, topo, sizeof topo);
    lua_createtable(L, 0, 5);
    lua_pushinteger(L, (lua_Integer)s->step);
    lua_setfield(L, -2, "step");
    lua_pushstring(L, s->where);
    lua_setfield(L, -2, "checkpoint");
    lua_pushstring(L, topo);
    lua_setfield(L, -2, "topology");
    lua_newtable(L); /* params */
    lua_newtable(L); /* updater */
    for (size_t i = 0; i < s->model.n; i++) {
        const singa_ckpt_entry *e = &s->model.entries[i];
        if (e->dtype != SINGA_CKPT_F32)
            continue;
        if (strncmp(e->name, "param/", 6) == 0) {
            push_entry(L, e);
            lua_setfield(L, -3, e->name + 6);
            continue;
        }
        const char *slot = strrchr(e->name, '/');
        if (strncmp(e->name, "updater/", 8) != 0 || slot < e->name + 8)
            continue;
        lua_pushlstring(L, e->name + 8, (size_t)(slot - e->name - 8));
        if (lua_rawget(L, -2) != LUA_TTABLE) {
            lua_pop(L, 1);
            lua_newtable(L);
            lua_pushlstring(L, e->name + 8, (size_t)(slot - e->name - 8));
            lua_pushvalue(L, -2);
            lua_rawset(L, -4);
        }
        push_entry(L, e);
        lua_setfield(L, -2, slot + 1);
        lua_pop(L, 1);
    }
    lua_setfield(L, -3, "updater");
    lua_setfield(L, -2, "params");
    singa_ckpt_set_free(s); /* singa_lua_now, not at the next collection */
    return 1;
}

/* singa.predict(job, input [, layer]) -> per instance the output of `layer` (default: the
 * probabilities of the last kSoftmaxLoss, else kSoftmax): a tensor for a tensor input, else a
 * list of rows; `input` holds one row per instance, as the input layer reads them. */
int singa_lua_predict(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    const char *layer = luaL_optstring(L, 3, NULL);
    bool rows = !singa_lua_tensor_is(L, 2);
    if (rows) {
        luaL_argexpected(L, lua_istable(L, 2), 2, "list of rows or tensor");
        singa_lua_tensor_from(L, 2, "singa.predict: input");
        lua_replace(L, 2);
    }
    const singa_tensor *input = singa_lua_tensor_check(L, 2);
    singa_tensor *out;
    singa_lua_tensor *holder = singa_lua_tensor_holder(L, &out);
    /* Quiet: prediction runs in loops (sampling a text calls it once per character). */
    singa_model *m = singa_lua_load_model(L, NULL);
    singa_err err = {{0}};
    int rc = singa_model_predict(m, input, layer, out, &err);
    singa_model_free(m);
    if (rc < 0)
        return singa_lua_raise(L, err.msg);
    singa_lua_tensor_own(L, holder);
    if (rows)
        singa_lua_tensor_push_rows(L, out);
    return 1;
}

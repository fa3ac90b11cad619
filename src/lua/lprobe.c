/* singa.gradcheck, singa.gradcheck_net and singa.forward: a layer or net probed on given or
 * random inputs (singa/gradcheck.h). */
#include <lauxlib.h>
#include <string.h>

#include "lua/lcore.h"
#include "lua/luaconf.h"

/* Reads the inputs list at stack index 2 for gradcheck and forward:
 *   { {shape = {4, 5}}, {shape = {4}, classes = 10}, {shape = {2}, data = {1, -1}}, ... }
 * `data` gives the values (else they are random).  The values live in a table this pushes and
 * the caller keeps on the stack until it is done with them.  Returns the number of inputs. */
static int read_inputs(lua_State *L, singa_gradcheck_input *in)
{
    int n = (int)lua_rawlen(L, 2);
    if (n > SINGA_MAX_DIMS)
        return luaL_error(L, "at most %d inputs", SINGA_MAX_DIMS);
    lua_createtable(L, n, 0);
    int keep = lua_gettop(L);
    for (int i = 0; i < n; i++) {
        memset(&in[i], 0, sizeof in[i]);
        lua_rawgeti(L, 2, i + 1);
        luaL_argexpected(L, lua_istable(L, -1), 2, "a list of input tables");
        lua_getfield(L, -1, "shape");
        in[i].ndim = lua_istable(L, -1) ? (int)lua_rawlen(L, -1) : 0;
        if (in[i].ndim < 1 || in[i].ndim > SINGA_MAX_DIMS)
            return luaL_error(L, "input %d needs a shape of 1 to 4 dimensions", i + 1);
        size_t size = 1;
        for (int d = 0; d < in[i].ndim; d++) {
            lua_rawgeti(L, -1, d + 1);
            lua_Integer dim = luaL_checkinteger(L, -1);
            if (dim < 1 || dim > 1 << 20)
                return luaL_error(L, "input %d: shape dimension %d is %d", i + 1, d + 1, (int)dim);
            in[i].shape[d] = (int)dim;
            size *= (size_t)dim;
            lua_pop(L, 1);
        }
        lua_getfield(L, -2, "classes");
        in[i].label_classes = (int)luaL_optinteger(L, -1, 0);
        lua_getfield(L, -3, "data");
        if (!lua_isnil(L, -1)) {
            if (!lua_istable(L, -1) || lua_rawlen(L, -1) != size)
                return luaL_error(L, "input %d: 'data' must list %d numbers, one per element", i + 1, (int)size);
            float *v = lua_newuserdatauv(L, size * sizeof(float), 0);
            for (size_t k = 0; k < size; k++) {
                lua_rawgeti(L, -2, (lua_Integer)k + 1);
                v[k] = (float)luaL_checknumber(L, -1);
                lua_pop(L, 1);
            }
            lua_rawseti(L, keep, i + 1);
            in[i].values = v;
        }
        lua_pop(L, 4);
    }
    return n;
}

/* A gradient check's result as Lua values: max relative error, worst element, elements checked. */
static int push_report(lua_State *L, int rc, const singa_gradcheck_report *rep, const singa_err *err)
{
    if (rc < 0)
        return singa_lua_raise(L, err->msg);
    lua_pushnumber(L, rep->max_rel_err);
    lua_pushstring(L, rep->worst);
    lua_pushinteger(L, rep->checked);
    return 3;
}

/* singa.gradcheck(layer, inputs [, seed [, destinations]]) -> max relative error, worst element,
 * elements checked. */
int singa_lua_gradcheck(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checktype(L, 2, LUA_TTABLE);
    uint64_t seed = (uint64_t)luaL_optinteger(L, 3, 7);
    int ndst = (int)luaL_optinteger(L, 4, 0);
    singa_gradcheck_input in[SINGA_MAX_DIMS];
    int n = read_inputs(L, in);
    singa_err err = {{0}};
    singa_conf *conf = singa_lua_toconf(L, 1, "layer", &err);
    if (!conf)
        return singa_lua_raise(L, err.msg);
    singa_gradcheck_report rep;
    int rc = singa_gradcheck(singa_lua_registry(L), conf, in, n, ndst, seed, &rep, &err);
    singa_conf_free(conf);
    return push_report(L, rc, &rep, &err);
}

/* singa.forward(layer, inputs [, destinations]) -> { out1, out2, ..., metrics = {...} }: one
 * forward pass; out k is what destination k reads (out 1 the layer's output without
 * destinations), a list of its values in row-major order with a `shape` field. */
int singa_lua_forward(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checktype(L, 2, LUA_TTABLE);
    int ndst = (int)luaL_optinteger(L, 3, 0);
    singa_gradcheck_input in[SINGA_MAX_DIMS];
    int n = read_inputs(L, in);
    singa_err err = {{0}};
    singa_conf *conf = singa_lua_toconf(L, 1, "layer", &err);
    if (!conf)
        return singa_lua_raise(L, err.msg);
    singa_tensor outs[SINGA_GRADCHECK_MAX_DSTS];
    singa_metrics m;
    int rc = singa_layer_probe(singa_lua_registry(L), conf, in, n, ndst, 7, outs, &m, &err);
    singa_conf_free(conf);
    if (rc < 0)
        return singa_lua_raise(L, err.msg);
    int nouts = ndst ? ndst : 1;
    lua_createtable(L, nouts, 1);
    for (int k = 0; k < nouts; k++) {
        const singa_tensor *t = &outs[k];
        lua_createtable(L, (int)t->size, 1);
        for (size_t i = 0; i < t->size; i++) {
            lua_pushnumber(L, t->data[i]);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        lua_createtable(L, t->ndim, 0);
        for (int d = 0; d < t->ndim; d++) {
            lua_pushinteger(L, t->shape[d]);
            lua_rawseti(L, -2, d + 1);
        }
        lua_setfield(L, -2, "shape");
        lua_rawseti(L, -2, k + 1);
    }
    for (int k = 0; k < nouts; k++)
        singa_tensor_free(&outs[k]);
    singa_lua_push_metrics(L, &m, "metrics");
    return 1;
}

/* singa.gradcheck_net(neuralnet [, seed [, workers]]) -> max relative error, worst element,
 * elements checked; with workers > 1, of the net partitioned over that many workers. */
int singa_lua_gradcheck_net(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    uint64_t seed = (uint64_t)luaL_optinteger(L, 2, 7);
    int workers = (int)luaL_optinteger(L, 3, 1);
    singa_err err = {{0}};
    singa_conf *conf = singa_lua_toconf(L, 1, "neuralnet", &err);
    if (!conf)
        return singa_lua_raise(L, err.msg);
    singa_gradcheck_report rep;
    int rc = singa_gradcheck_net_parts(singa_lua_registry(L), conf, workers, seed, &rep, &err);
    singa_conf_free(conf);
    return push_report(L, rc, &rep, &err);
}

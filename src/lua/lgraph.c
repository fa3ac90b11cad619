/* singa.graph and singa.summary: a job's net as built (partitioned over a group's workers, or
 * layer by layer with shapes and param counts) without training it. */
#include <lauxlib.h>
#include <string.h>

#include "lua/lcore.h"
#include "lua/luaconf.h"

/* A new table { name, type } for layer l, with room for `fields` fields in all. */
void singa_lua_push_layer_row(lua_State *L, const singa_layer *l, int fields)
{
    lua_createtable(L, 0, fields);
    lua_pushstring(L, l->name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, l->type->name);
    lua_setfield(L, -2, "type");
}

static void add_line(void *ud, const char *text)
{
    luaL_Buffer *b = ud;
    luaL_addstring(b, text);
    luaL_addchar(b, '\n');
}

/* The summary of the job at index 1 (singa/summary.h): its text, and as a table
 * { layers = { {name, type, shape = {...}, params}, ... }, params = n, trained = n }.  Builds
 * the job (reading its data) without training it. */
int singa_lua_summary(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    singa_job *job = singa_lua_create_job(L);
    const singa_net *net = singa_job_train_net(job);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    singa_summary_lines(net, add_line, &b);
    luaL_pushresult(&b);
    lua_createtable(L, 0, 3);
    lua_createtable(L, net->nlayers, 0);
    for (int i = 0; i < net->nlayers; i++) {
        const singa_layer *l = net->layers[i];
        singa_lua_push_layer_row(L, l, 4);
        lua_createtable(L, l->data.ndim, 0);
        for (int d = 0; d < l->data.ndim; d++) {
            lua_pushinteger(L, l->data.shape[d]);
            lua_rawseti(L, -2, d + 1);
        }
        lua_setfield(L, -2, "shape");
        lua_pushinteger(L, (lua_Integer)singa_summary_layer_params(l));
        lua_setfield(L, -2, "params");
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "layers");
    size_t all, trained;
    singa_summary_totals(net, &all, &trained);
    lua_pushinteger(L, (lua_Integer)all);
    lua_setfield(L, -2, "params");
    lua_pushinteger(L, (lua_Integer)trained);
    lua_setfield(L, -2, "trained");
    singa_job_free(job);
    return 2;
}

/* The partitioned graph of the job at index 1 (its cluster's nworkers_per_group, phase
 * `phase`); raises on failure.  The caller frees it with singa_graph_free. */
void singa_lua_graph_build(lua_State *L, singa_graph *g, const char *phase)
{
    static const char *const names[] = {"kTrain", "kValidation", "kTest"};
    static const singa_phase phases[] = {SINGA_PHASE_TRAIN, SINGA_PHASE_VALIDATION, SINGA_PHASE_TEST};
    luaL_checktype(L, 1, LUA_TTABLE);
    int ph = 0;
    while (ph < 3 && strcmp(phase, names[ph]) != 0)
        ph++;
    singa_err err = {{0}};
    if (ph == 3) {
        singa_err_unknown(&err, "singa.graph", "phase", phase, names, 3);
        singa_lua_raise(L, err.msg);
    }
    singa_lua_job_plugins(L, 1);
    singa_conf *conf = singa_lua_toconf(L, 1, "job", &err);
    if (!conf)
        singa_lua_raise(L, err.msg);
    singa_cluster c;
    const singa_conf *net = singa_conf_get(conf, "neuralnet");
    int rc = !net || net->kind != SINGA_CONF_TABLE
                 ? singa_err_set(&err, "job: field 'neuralnet' is required (a table)")
                 : singa_cluster_read(&c, singa_conf_get(conf, "cluster"), &err);
    if (rc == 0)
        rc = singa_graph_build(g, net, phases[ph], c.nworkers_per_group, singa_lua_registry(L), &err);
    singa_conf_free(conf);
    if (rc < 0)
        singa_lua_raise(L, err.msg);
}

/* t[key] = value for the table on top of the stack. */
static void set_str(lua_State *L, const char *key, const char *value)
{
    lua_pushstring(L, value);
    lua_setfield(L, -2, key);
}

static void set_int(lua_State *L, const char *key, lua_Integer value)
{
    lua_pushinteger(L, value);
    lua_setfield(L, -2, key);
}

/* singa.graph(job [, phase]) -> { workers = n, layers = {...}, nodes = {...} }: how the net of
 * `phase` (default "kTrain") is partitioned over the workers of a group. */
int singa_lua_graph(lua_State *L)
{
    singa_graph g;
    singa_lua_graph_build(L, &g, luaL_optstring(L, 2, "kTrain"));
    lua_createtable(L, 0, 4);
    set_int(L, "workers", g.nworkers);
    set_str(L, "phase", singa_phase_name(g.phase));
    lua_createtable(L, g.nlayers, 0);
    for (int i = 0; i < g.nlayers; i++) {
        const singa_graph_layer *gl = &g.layers[i];
        lua_createtable(L, 0, 5);
        set_str(L, "name", gl->name);
        set_str(L, "type", gl->type);
        set_int(L, "partition_dim", gl->dim);
        set_int(L, "parts", gl->nparts);
        if (gl->dim < 0)
            set_int(L, "location", gl->location);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "layers");
    lua_createtable(L, g.nnodes, 0);
    for (int i = 0; i < g.nnodes; i++) {
        const singa_node *n = &g.nodes[i];
        lua_createtable(L, 0, 9);
        set_str(L, "name", n->name);
        set_str(L, "type", n->type);
        set_str(L, "role", singa_node_role_name(n->role));
        set_str(L, "layer", g.layers[n->layer].name);
        set_int(L, "location", n->location);
        if (n->role == SINGA_NODE_LAYER)
            set_int(L, "part", n->part);
        if (n->role == SINGA_NODE_LAYER || n->role == SINGA_NODE_SLICE || n->role == SINGA_NODE_CONCATE)
            set_int(L, n->role == SINGA_NODE_LAYER ? "partition_dim" : "dim", n->dim);
        /* srclayer: names, as a layer lists them; slab: per source, the slab taken or -1 */
        lua_createtable(L, n->nsrc, 0);
        lua_createtable(L, n->nsrc, 0);
        for (int e = 0; e < n->nsrc; e++) {
            lua_pushstring(L, g.nodes[n->src[e].node].name);
            lua_rawseti(L, -3, e + 1);
            lua_pushinteger(L, n->src[e].slab);
            lua_rawseti(L, -2, e + 1);
        }
        lua_setfield(L, -3, "slab");
        lua_setfield(L, -2, "srclayer");
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "nodes");
    singa_graph_free(&g);
    return 1;
}

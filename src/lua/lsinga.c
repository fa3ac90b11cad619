/* singa.core: train, gradcheck, layer_types and version for Lua.  The layer registry lives in a
 * userdata owned by the Lua state, so two states never share mutable engine state; the plugins
 * loaded into it go with it. */
#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lua/lsinga.h"
#include "lua/lplot.h"
#include "lua/ltensor.h"
#include "lua/luaconf.h"
#include "metricsfile/metricsfile.h"
#include "layers/param_state.h"
#include "singa/predict.h"
#include "singa/singa.h"

#define REGISTRY_KEY "singa.registry"
#define OPTS_KEY "singa.opts"
#define LIVE_STATS_KEY "singa.stats.live" /* the running job's counters */
#define LAST_STATS_KEY "singa.stats.last" /* the last job's, as a table */
#define LIVE_JOB_KEY "singa.job.live"     /* the running job, for singa.params() */
#define LAST_PARAMS_KEY "singa.params.last" /* the last job's params, as singa.train returned them */

static int registry_gc(lua_State *L)
{
    singa_registry **reg = luaL_checkudata(L, 1, REGISTRY_KEY);
    singa_registry_free(*reg);
    *reg = NULL;
    return 0;
}

static singa_registry *get_registry(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, REGISTRY_KEY "#");
    singa_registry **reg = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return *reg;
}

void singa_lua_set_opts(lua_State *L, singa_lua_opts *opts)
{
    lua_pushlightuserdata(L, opts);
    lua_setfield(L, LUA_REGISTRYINDEX, OPTS_KEY);
    lua_pushlightuserdata(L, opts->lock); /* for luaconf.c's functions */
    lua_setfield(L, LUA_REGISTRYINDEX, SINGA_LUA_LOCK_KEY);
}

static const singa_lua_opts *get_opts(lua_State *L)
{
    static const singa_lua_opts none; /* nothing extra reported */
    lua_getfield(L, LUA_REGISTRYINDEX, OPTS_KEY);
    const singa_lua_opts *o = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return o ? o : &none;
}

const singa_lua_opts *singa_lua_get_opts(lua_State *L) { return get_opts(L); }

/* Raises a Lua error with the caller's position, as luaL_error does. */
static int raise(lua_State *L, const char *msg)
{
    luaL_where(L, 1);
    lua_pushstring(L, msg);
    lua_concat(L, 2);
    return lua_error(L);
}

/* ---- reporting while training ---- */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef struct reporter {
    const singa_lua_opts *opts;
    int groups; /* worker groups: with several, each line says whose it is */
    const singa_stats *stats; /* a distributed job's: its workers' times go to the metrics file */
    double last_draw;
    double t0;     /* when training started: records carry the seconds since */
    int line_open; /* a progress line is on screen */
} reporter;

static void clear_line(reporter *rp)
{
    if (rp->line_open) {
        fputs("\r\x1b[K", stdout);
        rp->line_open = 0;
    }
}

static void on_log(void *ud, const char *line)
{
    reporter *rp = ud;
    const singa_lua_host *host = rp->opts->host;
    if (host && host->hooks.log)
        host->hooks.log(host->hooks.ud, line);
    clear_line(rp);
    printf("%s\n", line);
    fflush(stdout);
}

/* Records of every process arrive here one at a time (the runtime's lock), so the seconds,
 * on this process's clock, never decrease in the file. */
static void on_record(void *ud, const singa_record *rec)
{
    reporter *rp = ud;
    singa_record stamped = *rec;
    stamped.seconds = now() - rp->t0;
    const singa_record *r = &stamped;
    const singa_lua_host *host = rp->opts->host;
    if (host && host->hooks.record)
        host->hooks.record(host->hooks.ud, r);
    double loss = singa_metrics_avg(r->metrics, "loss", NAN);
    double acc = singa_metrics_avg(r->metrics, "accuracy", NAN);
    const char *phase = r->phase == SINGA_PHASE_TRAIN ? "train" : r->phase == SINGA_PHASE_TEST ? "test" : "validation";
    char line[256], who[32];
    snprintf(who, sizeof who, rp->groups > 1 ? "%s g%d" : "%s", phase, r->group);
    int n = snprintf(line, sizeof line, "step %-6d %-10s loss %.4f", r->step, who, loss);
    if (!isnan(acc))
        n += snprintf(line + n, sizeof line - (size_t)n, "  accuracy %.4f", acc);
    if (r->phase == SINGA_PHASE_TRAIN && isfinite(r->images_per_sec))
        n += snprintf(line + n, sizeof line - (size_t)n, "  %.0f images/s", r->images_per_sec);
    if (r->phase == SINGA_PHASE_TRAIN)
        snprintf(line + n, sizeof line - (size_t)n, "  lr %.4g", r->lr);
    on_log(ud, line);
    FILE *f = rp->opts->metrics;
    if (!f)
        return;
    singa_metrics_file_record(f, rp->opts->metrics_csv, r, phase, loss, acc);
    if (!rp->opts->metrics_csv && rp->stats && r->phase == SINGA_PHASE_TRAIN && r->group == 0)
        singa_metrics_file_workers(f, r->step, rp->stats);
    fflush(f);
}

static void on_step(void *ud, const singa_record *r)
{
    reporter *rp = ud;
    const singa_lua_host *host = rp->opts->host;
    if (host && host->hooks.step)
        host->hooks.step(host->hooks.ud, r);
    if (!rp->opts->progress_line || (r->elapsed - rp->last_draw < 0.1 && r->step != r->total_steps))
        return;
    rp->last_draw = r->elapsed;
    double loss = singa_metrics_avg(r->metrics, "loss", NAN);
    double acc = singa_metrics_avg(r->metrics, "accuracy", NAN);
    char metrics[96] = "";
    if (!isnan(loss))
        singa_appendf(metrics, sizeof metrics, "  loss %.4f", loss);
    if (!isnan(acc))
        singa_appendf(metrics, sizeof metrics, "  accuracy %.4f", acc);
    if (isfinite(r->images_per_sec)) /* none after the warm-up step alone */
        singa_appendf(metrics, sizeof metrics, "  %.0f images/s", r->images_per_sec);
    printf("\r\x1b[K[%d/%d]%s  elapsed %.0fs", r->step, r->total_steps, metrics, r->elapsed);
    if (isfinite(r->eta))
        printf("  ETA %.0fs", r->eta);
    fflush(stdout);
    rp->line_open = 1;
}

static void on_checkpoint(void *ud, int step, const char *path)
{
    const singa_lua_host *host = ((reporter *)ud)->opts->host;
    if (host && host->hooks.checkpoint)
        host->hooks.checkpoint(host->hooks.ud, step, path);
}

static void push_metrics(lua_State *L, const singa_metrics *m, const char *field)
{
    lua_newtable(L);
    for (int i = 0; i < m->n; i++) {
        lua_pushnumber(L, m->count[i] ? m->sum[i] / (double)m->count[i] : NAN);
        lua_setfield(L, -2, m->name[i]);
    }
    lua_setfield(L, -2, field);
}

/* ---- plugins (singa/plugin.h) ---- */

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
static int l_load_plugin(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    const singa_plugin *p;
    singa_err err = {{0}};
    if (singa_plugin_load(get_registry(L), path, &p, &err) < 0)
        return raise(L, err.msg);
    push_plugin(L, p);
    return 1;
}

/* singa.plugins() -> the loaded plugins in load order */
static int l_plugins(lua_State *L)
{
    const singa_registry *reg = get_registry(L);
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

/* The plugins a job names (`plugins`, a path or a list of paths) are loaded before anything
 * else of it, so a layer type of theirs resolves and a plugin that fails stops the job before
 * it starts.  Values of the wrong type are left to the job's validation. */
static void load_job_plugins(lua_State *L, int job)
{
    lua_getfield(L, job, "plugins");
    int list = lua_istable(L, -1);
    lua_Integer n = list ? (lua_Integer)lua_rawlen(L, -1) : lua_isstring(L, -1) ? 1 : 0;
    for (lua_Integer i = 1; i <= n; i++) {
        if (list)
            lua_rawgeti(L, -1, i);
        else
            lua_pushvalue(L, -1);
        singa_err err = {{0}};
        if (lua_type(L, -1) == LUA_TSTRING &&
            singa_plugin_load(get_registry(L), lua_tostring(L, -1), NULL, &err) < 0)
            raise(L, err.msg);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

/* A plugin found by scanning the plugin folders that fails to load is reported and skipped. */
static void warn_plugin(void *ud, const char *msg)
{
    fflush(stdout);
    fprintf(stderr, "singa-tui: %s (skipped)\n", msg);
}

/* ---- trained models: singa.test, singa.predict (src/train/predict.c) ---- */

static const char finished_key = 0; /* its address is the error value that ends a --test script */

int singa_lua_finished(lua_State *L, int idx) { return lua_touserdata(L, idx) == &finished_key; }

/* The registry key of the set of singa.core's functions (the engine's). */
static const char engine_key = 0;

/* Whether the error being handled was raised by one of singa.core's functions: a job the engine
 * refuses or a failure while it runs, whose message says all there is (with the caller's line). */
static bool raised_by_engine(lua_State *L)
{
    lua_Debug ar;
    if (!lua_getstack(L, 1, &ar) || !lua_getinfo(L, "f", &ar))
        return false;
    bool engine = false;
    if (lua_iscfunction(L, -1) && lua_rawgetp(L, LUA_REGISTRYINDEX, &engine_key) == LUA_TTABLE) {
        lua_pushvalue(L, -2);
        engine = lua_rawget(L, -2) == LUA_TBOOLEAN;
    }
    lua_settop(L, 1);
    return engine;
}

int singa_lua_traceback(lua_State *L)
{
    if (singa_lua_finished(L, 1))
        return 1;
    const char *msg = lua_tostring(L, 1);
    if (msg && raised_by_engine(L))
        return 1;
    if (!msg)
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    luaL_traceback(L, L, msg, 1);
    return 1;
}

/* Marks every function of the module at the top of the stack as the engine's. */
static void mark_engine(lua_State *L)
{
    lua_newtable(L);
    lua_pushnil(L);
    while (lua_next(L, -3)) {
        if (lua_iscfunction(L, -1)) {
            lua_pushboolean(L, 1);
            lua_rawset(L, -4);
        } else {
            lua_pop(L, 1);
        }
    }
    lua_rawsetp(L, LUA_REGISTRYINDEX, &engine_key);
}

singa_conf *singa_lua_job_conf(lua_State *L, int idx, singa_registry **reg)
{
    luaL_checktype(L, idx, LUA_TTABLE);
    load_job_plugins(L, idx);
    singa_err err = {{0}};
    singa_conf *conf = singa_lua_toconf(L, idx, "job", &err);
    if (!conf)
        raise(L, err.msg);
    *reg = get_registry(L);
    return conf;
}

/* The model of the job at index 1, loaded with `hooks`; raises on failure.  The caller frees it
 * before it next calls anything that may raise. */
static singa_model *load_model(lua_State *L, const singa_job_hooks *hooks)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    load_job_plugins(L, 1);
    singa_err err = {{0}};
    singa_conf *conf = singa_lua_toconf(L, 1, "job", &err);
    if (!conf)
        raise(L, err.msg);
    singa_model *m;
    int rc = singa_model_load(&m, conf, get_registry(L), hooks, &err);
    singa_conf_free(conf);
    if (rc < 0)
        raise(L, err.msg);
    return m;
}

/* singa.test(job) -> { test = {...}, step = n, checkpoint = file } */
static int l_test(lua_State *L)
{
    reporter rp = {.opts = get_opts(L), .t0 = now()};
    singa_job_hooks hooks = {.ud = &rp, .record = on_record, .log = on_log};
    singa_model *m = load_model(L, &hooks);
    singa_metrics res;
    singa_err err = {{0}};
    int rc = singa_model_test(m, &hooks, &res, &err);
    lua_Integer step = (lua_Integer)singa_model_step(m);
    char file[4096];
    snprintf(file, sizeof file, "%s", singa_model_checkpoint(m));
    singa_model_free(m);
    if (rc < 0)
        return raise(L, err.msg);
    lua_newtable(L);
    push_metrics(L, &res, "test");
    lua_pushinteger(L, step);
    lua_setfield(L, -2, "step");
    lua_pushstring(L, file);
    lua_setfield(L, -2, "checkpoint");
    return 1;
}

/* singa.load(path) -> { step = n, checkpoint = where, topology = "...", params = { name = tensor },
 * updater = { [param] = { slot = tensor } } }: a checkpoint of any topology as one model
 * (include/singa/ckpt_set.h).  The set lives in a userdata until the tables are built, so a Lua
 * error on the way frees it. */
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

static int l_load(lua_State *L)
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
        return raise(L, err.msg);
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
    singa_ckpt_set_free(s); /* now, not at the next collection */
    return 1;
}

/* singa.predict(job, input [, layer]) -> per instance the output of `layer` (default: the
 * probabilities of the last kSoftmaxLoss, else kSoftmax): a tensor for a tensor input, else a
 * list of rows; `input` holds one row per instance, as the input layer reads them. */
static int l_predict(lua_State *L)
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
    singa_model *m = load_model(L, NULL);
    singa_err err = {{0}};
    int rc = singa_model_predict(m, input, layer, out, &err);
    singa_model_free(m);
    if (rc < 0)
        return raise(L, err.msg);
    singa_lua_tensor_own(L, holder);
    if (rows)
        singa_lua_tensor_push_rows(L, out);
    return 1;
}

/* A new table { name, type } for layer l, with room for `fields` fields in all. */
static void push_layer_row(lua_State *L, const singa_layer *l, int fields)
{
    lua_createtable(L, 0, fields);
    lua_pushstring(L, l->name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, l->type->name);
    lua_setfield(L, -2, "type");
}

/* With `profile = true`: r.profile lists the training net's layers in order with their mean
 * forward and backward milliseconds per step; a net cut among a group's workers lists every
 * worker's parts, worker by worker, each with its `worker`. */
static void push_profile(lua_State *L, const singa_net *net)
{
    if (!net->profile || net->profiled_passes == 0)
        return;
    int row = 0;
    lua_newtable(L);
    for (int k = 0; k < singa_net_nlocations(net); k++) {
        const singa_net *at = singa_net_location(net, k);
        for (int i = 0; i < at->nlayers; i++) {
            const singa_layer *l = at->layers[i];
            push_layer_row(L, l, 5);
            lua_pushnumber(L, 1e3 * l->forward_seconds / (double)net->profiled_passes);
            lua_setfield(L, -2, "forward_ms");
            lua_pushnumber(L, 1e3 * l->backward_seconds / (double)net->profiled_passes);
            lua_setfield(L, -2, "backward_ms");
            if (net->parts) {
                lua_pushinteger(L, k);
                lua_setfield(L, -2, "worker");
            }
            lua_rawseti(L, -2, ++row);
        }
    }
    lua_setfield(L, -2, "profile");
}

/* A copy of every param's values by name (worker group 0's, distributed), but of one held
 * here only in part (cluster.shard_params). */
static void push_param_table(lua_State *L, const singa_params *ps)
{
    lua_createtable(L, 0, ps->n);
    for (int i = 0; i < ps->n; i++) {
        const singa_param *p = ps->items[i];
        if (singa_param_state_c(p)->partial)
            continue;
        singa_tensor *t = singa_lua_tensor_new(L, p->data.ndim, p->data.shape);
        singa_tensor_copy(t, &p->data);
        lua_setfield(L, -2, p->name);
    }
}

/* r.params, the final values; singa.params() gives copies of them once the job has ended. */
static void push_params(lua_State *L, const singa_params *ps)
{
    push_param_table(L, ps);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, LAST_PARAMS_KEY);
    lua_setfield(L, -2, "params");
}

/* singa.params() -> { name = tensor, ... }: copies of the running job's params (worker group
 * 0's net in this process; read between two of its steps only when it is paused), else of the
 * last job's final values; an error before any job ran. */
static int l_params(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, LIVE_JOB_KEY);
    const singa_job *live = lua_touserdata(L, -1);
    if (live) {
        push_param_table(L, singa_job_train_net(live)->params);
        return 1;
    }
    lua_getfield(L, LUA_REGISTRYINDEX, LAST_PARAMS_KEY);
    if (lua_isnil(L, -1))
        return raise(L, "singa.params: no job is running or has run yet (call it while singa.train runs, or after)");
    lua_newtable(L);
    for (lua_pushnil(L); lua_next(L, -3); lua_pop(L, 1)) {
        const singa_tensor *from = singa_lua_tensor_check(L, -1);
        singa_tensor *t = singa_lua_tensor_new(L, from->ndim, from->shape);
        singa_tensor_copy(t, from);
        lua_pushvalue(L, -3);
        lua_insert(L, -2);
        lua_settable(L, -5);
    }
    return 1;
}

static void add_line(void *ud, const char *text)
{
    luaL_Buffer *b = ud;
    luaL_addstring(b, text);
    luaL_addchar(b, '\n');
}

/* Builds the job table at index 1 (loading its plugins first); raises the engine's error. */
static singa_job *create_job(lua_State *L)
{
    load_job_plugins(L, 1);
    singa_err err = {{0}};
    singa_conf *conf = singa_lua_toconf(L, 1, "job", &err);
    if (!conf)
        raise(L, err.msg);
    singa_job *job = NULL;
    int rc = singa_job_create(&job, conf, get_registry(L), &err);
    singa_conf_free(conf);
    if (rc < 0)
        raise(L, err.msg);
    return job;
}

/* The summary of the job at index 1 (singa/summary.h): its text, and as a table
 * { layers = { {name, type, shape = {...}, params}, ... }, params = n, trained = n }.  Builds
 * the job (reading its data) without training it. */
static int l_summary(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    singa_job *job = create_job(L);
    const singa_net *net = singa_job_train_net(job);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    singa_summary_lines(net, add_line, &b);
    luaL_pushresult(&b);
    lua_createtable(L, 0, 3);
    lua_createtable(L, net->nlayers, 0);
    for (int i = 0; i < net->nlayers; i++) {
        const singa_layer *l = net->layers[i];
        push_layer_row(L, l, 4);
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

/* Named integers as fields of the table on top of the stack. */
typedef struct named_int {
    const char *name;
    lua_Integer v;
} named_int;

static void set_integers(lua_State *L, const named_int *f, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        lua_pushinteger(L, f[k].v);
        lua_setfield(L, -2, f[k].name);
    }
}

/* The workers' step times (singa/stats.h) as the field workers of singa.stats(): { {rank, host,
 * group, id, steps, window, compute, send, wait, bridge, work, step, straggler, share}, ... }. */
static void push_workers(lua_State *L, const singa_stats *st)
{
    singa_worker_time rows[256];
    int n = st ? singa_stats_workers(st, rows, 256) : 0;
    n = n < 256 ? n : 256;
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        const singa_worker_time *w = &rows[i];
        lua_createtable(L, 0, 14);
        const named_int ints[] = {
            {"rank", w->rank}, {"group", w->group}, {"id", w->id}, {"steps", (lua_Integer)w->steps},
            {"window", w->window},
        };
        set_integers(L, ints, sizeof ints / sizeof *ints);
        const struct { const char *name; double v; } nums[] = {
            {"compute", w->compute}, {"send", w->send}, {"wait", w->wait}, {"bridge", w->bridge},
            {"work", w->work},       {"step", w->step}, {"share", w->share},
        };
        for (size_t k = 0; k < sizeof nums / sizeof *nums; k++) {
            lua_pushnumber(L, nums[k].v);
            lua_setfield(L, -2, nums[k].name);
        }
        lua_pushstring(L, w->host);
        lua_setfield(L, -2, "host");
        lua_pushboolean(L, w->straggler);
        lua_setfield(L, -2, "straggler");
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "workers");
}

/* The runtime's traffic: { rank, dropped, traffic = { {type, peer, sent, received, bytes_sent,
 * bytes_received, pending, wait}, ... }, workers = (push_workers) }; empty lists for a job of one
 * process and thread pair. */
/* links = { { rank, peer, bytes_sent, bytes_received, steps, bytes_per_step }, ... } */
static void push_links(lua_State *L, const singa_stats *st)
{
    singa_link rows[64];
    int n = st ? singa_stats_links(st, rows, 64) : 0;
    n = n < 64 ? n : 64;
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        const singa_link *l = &rows[i];
        lua_createtable(L, 0, 6);
        const named_int counts[] = {
            {"rank", l->rank}, {"peer", l->peer}, {"bytes_sent", (lua_Integer)l->bytes_sent},
            {"bytes_received", (lua_Integer)l->bytes_received}, {"steps", (lua_Integer)l->steps}};
        set_integers(L, counts, sizeof counts / sizeof *counts);
        if (l->steps) {
            lua_pushnumber(L, (double)(l->bytes_sent + l->bytes_received) / (double)l->steps);
            lua_setfield(L, -2, "bytes_per_step");
        }
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "links");
}

static void push_stats(lua_State *L, const singa_stats *st)
{
    singa_traffic rows[256];
    int n = st ? singa_stats_snapshot(st, rows, 256) : 0;
    n = n < 256 ? n : 256;
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, st ? singa_stats_rank(st) : 0);
    lua_setfield(L, -2, "rank");
    lua_pushinteger(L, st ? (lua_Integer)singa_stats_dropped(st) : 0);
    lua_setfield(L, -2, "dropped");
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        const singa_traffic *r = &rows[i];
        lua_createtable(L, 0, 9);
        lua_pushstring(L, r->type);
        lua_setfield(L, -2, "type");
        lua_pushstring(L, r->peer);
        lua_setfield(L, -2, "peer");
        const named_int counts[] = {
            {"sent", (lua_Integer)r->sent},             {"received", (lua_Integer)r->received},
            {"bytes_sent", (lua_Integer)r->bytes_sent}, {"bytes_received", (lua_Integer)r->bytes_received},
            {"pending", (lua_Integer)r->pending},       {"rank", r->rank},
        };
        set_integers(L, counts, sizeof counts / sizeof *counts);
        lua_pushnumber(L, r->wait_seconds);
        lua_setfield(L, -2, "wait");
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "traffic");
    push_links(L, st);
    push_workers(L, st);
}

/* singa.train(job) -> { steps, seconds, train = {...}, test = {...}, validation = {...} } */
/* The partitioned graph of the job at index 1 (its cluster's nworkers_per_group, phase
 * `phase`); raises on failure.  The caller frees it with singa_graph_free. */
static void build_graph(lua_State *L, singa_graph *g, const char *phase)
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
        raise(L, err.msg);
    }
    load_job_plugins(L, 1);
    singa_conf *conf = singa_lua_toconf(L, 1, "job", &err);
    if (!conf)
        raise(L, err.msg);
    singa_cluster c;
    const singa_conf *net = singa_conf_get(conf, "neuralnet");
    int rc = !net || net->kind != SINGA_CONF_TABLE
                 ? singa_err_set(&err, "job: field 'neuralnet' is required (a table)")
                 : singa_cluster_read(&c, singa_conf_get(conf, "cluster"), &err);
    if (rc == 0)
        rc = singa_graph_build(g, net, phases[ph], c.nworkers_per_group, get_registry(L), &err);
    singa_conf_free(conf);
    if (rc < 0)
        raise(L, err.msg);
}

static int l_train(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    if (get_opts(L)->test_only || get_opts(L)->dot || get_opts(L)->summary || get_opts(L)->export_onnx) { /* then end the script */
        if (get_opts(L)->export_onnx) {
            singa_lua_export_onnx_cli(L, get_opts(L)->export_onnx);
        } else if (get_opts(L)->summary) {
            l_summary(L);
            if (fputs(lua_tostring(L, -2), stdout) < 0 || fflush(stdout) != 0)
                return raise(L, "singa-tui --summary: cannot write to standard output");
        } else if (get_opts(L)->dot) {
            singa_graph g;
            build_graph(L, &g, "kTrain");
            int rc = singa_graph_dot(&g, stdout);
            singa_graph_free(&g);
            if (rc < 0 || fflush(stdout) != 0)
                return raise(L, "singa-tui --dot: cannot write the graph to standard output");
        } else {
            l_test(L);
        }
        lua_pushlightuserdata(L, (void *)&finished_key);
        return lua_error(L);
    }
    const singa_lua_opts *o = get_opts(L);
    if (o->trace && lua_getfield(L, 1, "trace") == LUA_TNIL) { /* --trace: the job's own field wins */
        lua_pushstring(L, o->trace);
        lua_setfield(L, 1, "trace");
        lua_pushstring(L, o->trace_steps);
        lua_setfield(L, 1, "trace_steps");
    }
    if (o->trace)
        lua_pop(L, 1);
    singa_job *job = create_job(L);
    reporter rp = {.opts = get_opts(L), .groups = singa_job_cluster(job) ? singa_job_cluster(job)->nworker_groups : 1,
                   .stats = singa_job_stats(job)};
    singa_job_hooks hooks = {.ud = &rp, .record = on_record, .step = on_step, .log = on_log};
    const singa_lua_host *host = rp.opts->host; /* the workbench: it may hold the start, and steers */
    if (host)
        hooks.checkpoint = on_checkpoint;
    singa_result res;
    singa_err err = {{0}};
    int rc;
    pthread_mutex_t *lock = get_opts(L)->lock;
    lua_pushlightuserdata(L, singa_job_stats(job)); /* for singa.stats() while the job runs */
    lua_setfield(L, LUA_REGISTRYINDEX, LIVE_STATS_KEY);
    lua_pushlightuserdata(L, job); /* and singa.params() */
    lua_setfield(L, LUA_REGISTRYINDEX, LIVE_JOB_KEY);
    if (lock)
        pthread_mutex_unlock(lock);
    if (host && host->job_start && host->job_start(host->hooks.ud, job) < 0) {
        rc = singa_err_set(&err, "singa.train: the job was cancelled before it started");
    } else {
        hooks.control = host ? host->hooks.control : NULL; /* job_start may have set it (a job that listens) */
        rp.t0 = now(); /* after the workbench's start (r) */
        rc = singa_job_run(job, &hooks, &res, &err);
    }
    if (host && host->job_end)
        host->job_end(host->hooks.ud, job, rc, &err);
    if (lock)
        pthread_mutex_lock(lock);
    lua_pushnil(L);
    lua_setfield(L, LUA_REGISTRYINDEX, LIVE_STATS_KEY);
    lua_pushnil(L);
    lua_setfield(L, LUA_REGISTRYINDEX, LIVE_JOB_KEY);
    clear_line(&rp);
    if (rc == SINGA_JOB_LOST) {
        lua_getfield(L, LUA_REGISTRYINDEX, OPTS_KEY);
        singa_lua_opts *opts = lua_touserdata(L, -1);
        lua_pop(L, 1);
        if (opts)
            opts->lost = 1;
    }
    if (rc < 0) {
        singa_job_free(job);
        return raise(L, err.msg);
    }
    lua_newtable(L);
    push_profile(L, singa_job_train_net(job));
    push_params(L, singa_job_train_net(job)->params);
    push_stats(L, singa_job_stats(job));
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, LAST_STATS_KEY);
    lua_setfield(L, -2, "stats");
    lua_pushinteger(L, res.steps);
    lua_setfield(L, -2, "steps");
    lua_pushnumber(L, res.seconds);
    lua_setfield(L, -2, "seconds");
    if (res.images_per_sec > 0) {
        lua_pushnumber(L, res.images_per_sec);
        lua_setfield(L, -2, "images_per_sec");
    }
    push_metrics(L, &res.train, "train");
    if (res.has_test)
        push_metrics(L, &res.test, "test");
    if (res.has_validation)
        push_metrics(L, &res.validation, "validation");
    if (res.stopped_early) {
        lua_pushboolean(L, 1);
        lua_setfield(L, -2, "stopped_early");
    }
    if (res.best_step >= 0 && res.best_path[0]) { /* checkpoint_keep_best */
        lua_createtable(L, 0, 3);
        lua_pushinteger(L, res.best_step);
        lua_setfield(L, -2, "step");
        lua_pushstring(L, res.best_path);
        lua_setfield(L, -2, "checkpoint");
        lua_pushnumber(L, res.best_value);
        lua_setfield(L, -2, singa_conf_str(singa_job_conf(job), "checkpoint_keep_best", "value"));
        lua_setfield(L, -2, "best");
    }
    singa_job_free(job);
    return 1;
}

/* singa.rank() -> rank, size: which of the job's processes runs this script (0, 1 without
 * --procs or a launcher); every rank runs the whole script, so a script writes files or
 * prints its own lines where rank == 0. */
static int l_rank(lua_State *L)
{
    int rank, size;
    const char *from;
    singa_err err;
    if (singa_launch_rank(&rank, &size, &from, &err) < 0)
        return luaL_error(L, "singa.rank: %s", err.msg);
    lua_pushinteger(L, rank);
    lua_pushinteger(L, size);
    return 2;
}

/* singa.stats(): the running job's traffic, else the last job's (see push_stats). */
static int l_stats(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, LIVE_STATS_KEY);
    const singa_stats *live = lua_touserdata(L, -1);
    if (live) {
        push_stats(L, live);
        return 1;
    }
    lua_getfield(L, LUA_REGISTRYINDEX, LAST_STATS_KEY);
    if (lua_isnil(L, -1))
        push_stats(L, NULL);
    return 1;
}

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
        return raise(L, err->msg);
    lua_pushnumber(L, rep->max_rel_err);
    lua_pushstring(L, rep->worst);
    lua_pushinteger(L, rep->checked);
    return 3;
}

/* singa.gradcheck(layer, inputs [, seed [, destinations]]) -> max relative error, worst element,
 * elements checked. */
static int l_gradcheck(lua_State *L)
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
        return raise(L, err.msg);
    singa_gradcheck_report rep;
    int rc = singa_gradcheck(get_registry(L), conf, in, n, ndst, seed, &rep, &err);
    singa_conf_free(conf);
    return push_report(L, rc, &rep, &err);
}

/* singa.forward(layer, inputs [, destinations]) -> { out1, out2, ..., metrics = {...} }: one
 * forward pass; out k is what destination k reads (out 1 the layer's output without
 * destinations), a list of its values in row-major order with a `shape` field. */
static int l_forward(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checktype(L, 2, LUA_TTABLE);
    int ndst = (int)luaL_optinteger(L, 3, 0);
    singa_gradcheck_input in[SINGA_MAX_DIMS];
    int n = read_inputs(L, in);
    singa_err err = {{0}};
    singa_conf *conf = singa_lua_toconf(L, 1, "layer", &err);
    if (!conf)
        return raise(L, err.msg);
    singa_tensor outs[SINGA_GRADCHECK_MAX_DSTS];
    singa_metrics m;
    int rc = singa_layer_probe(get_registry(L), conf, in, n, ndst, 7, outs, &m, &err);
    singa_conf_free(conf);
    if (rc < 0)
        return raise(L, err.msg);
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
    push_metrics(L, &m, "metrics");
    return 1;
}

static int l_layer_types(lua_State *L)
{
    const char *names[512];
    size_t n = singa_registry_names(get_registry(L), names, 512);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_pushstring(L, names[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
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
static int l_graph(lua_State *L)
{
    singa_graph g;
    build_graph(L, &g, luaL_optstring(L, 2, "kTrain"));
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

/* singa.gradcheck_net(neuralnet [, seed [, workers]]) -> max relative error, worst element,
 * elements checked; with workers > 1, of the net partitioned over that many workers. */
static int l_gradcheck_net(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    uint64_t seed = (uint64_t)luaL_optinteger(L, 2, 7);
    int workers = (int)luaL_optinteger(L, 3, 1);
    singa_err err = {{0}};
    singa_conf *conf = singa_lua_toconf(L, 1, "neuralnet", &err);
    if (!conf)
        return raise(L, err.msg);
    singa_gradcheck_report rep;
    int rc = singa_gradcheck_net_parts(get_registry(L), conf, workers, seed, &rep, &err);
    singa_conf_free(conf);
    return push_report(L, rc, &rep, &err);
}

int luaopen_singa_core(lua_State *L)
{
    static const luaL_Reg funcs[] = {
        {"train", l_train},
        {"stats", l_stats},
        {"rank", l_rank},
        {"gradcheck", l_gradcheck},
        {"gradcheck_net", l_gradcheck_net},
        {"forward", l_forward},
        {"layer_types", l_layer_types},
        {"test", l_test},
        {"predict", l_predict},
        {"load", l_load},
        {"tensor", singa_lua_tensor_ctor},
        {"load_plugin", l_load_plugin},
        {"plugins", l_plugins},
        {"graph", l_graph},
        {"params", l_params},
        {"summary", l_summary},
        {"export_onnx", singa_lua_export_onnx},
        {"plot", singa_lua_plot},
        {NULL, NULL},
    };
    singa_registry **reg = lua_newuserdatauv(L, sizeof *reg, 0);
    *reg = NULL;
    if (luaL_newmetatable(L, REGISTRY_KEY)) {
        lua_pushcfunction(L, registry_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    if (!(*reg = singa_registry_new()))
        return luaL_error(L, "out of memory");
    if (get_opts(L)->plugin_path)
        singa_plugin_load_path(*reg, get_opts(L)->plugin_path, warn_plugin, NULL);
    lua_setfield(L, LUA_REGISTRYINDEX, REGISTRY_KEY "#");
    singa_lua_tensor_open(L);
    luaL_newlib(L, funcs);
    singa_lua_control_open(L);
    singa_lua_data_open(L);
    singa_lua_conf_open(L);
    lua_pushstring(L, SINGA_VERSION);
    lua_setfield(L, -2, "version");
    lua_pushfstring(L, "%d.%d", SINGA_PLUGIN_ABI_MAJOR, SINGA_PLUGIN_ABI_MINOR);
    lua_setfield(L, -2, "plugin_abi");
    /* The cluster's field names, so the presets (lua/singa/cluster.lua) pass every one through. */
    lua_newtable(L);
    for (int i = 0; singa_cluster_fields[i].name; i++) {
        lua_pushstring(L, singa_cluster_fields[i].name);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "cluster_fields");
    mark_engine(L);
    return 1;
}

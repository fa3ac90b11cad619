/* singa.train and singa.params: a job trained, reported while it runs (lreport.c), and its
 * result; a program's mode (lsinga.h) replaces the training. */
#include <lauxlib.h>
#include <math.h>

#include "lua/lcore.h"
#include "lua/lreport.h"
#include "lua/ltensor.h"
#include "lua/luaconf.h"
#include "layers/param_state.h"

#define LIVE_JOB_KEY SINGA_LUA_LIVE_JOB_KEY /* the running job, for singa.params() */
#define LAST_PARAMS_KEY "singa.params.last" /* the last job's params, as singa.train returned them */

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
            singa_lua_push_layer_row(L, l, 5);
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
int singa_lua_params(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, LIVE_JOB_KEY);
    const singa_job *live = lua_touserdata(L, -1);
    if (live) {
        push_param_table(L, singa_job_train_net(live)->params);
        return 1;
    }
    lua_getfield(L, LUA_REGISTRYINDEX, LAST_PARAMS_KEY);
    if (lua_isnil(L, -1))
        return singa_lua_raise(L, "singa.params: no job is running or has run yet (call it while singa.train runs, or after)");
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

/* The job's own trace fields win over the program's (singa-tui --trace). */
static void default_trace(lua_State *L, const singa_lua_opts *o)
{
    if (!o->trace)
        return;
    if (lua_getfield(L, 1, "trace") == LUA_TNIL) {
        lua_pushstring(L, o->trace);
        lua_setfield(L, 1, "trace");
        lua_pushstring(L, o->trace_steps);
        lua_setfield(L, 1, "trace_steps");
    }
    lua_pop(L, 1);
}

/* Runs the job without the state's lock, the host (the workbench) holding its start and
 * steering it; singa.stats() and singa.params() see it meanwhile. */
static int run_job(lua_State *L, singa_job *job, singa_lua_reporter *rp, singa_result *res, singa_err *err)
{
    singa_job_hooks hooks = {.ud = rp, .record = singa_lua_report_record, .step = singa_lua_report_step,
                             .log = singa_lua_report_log};
    const singa_lua_host *host = rp->opts->host;
    if (host)
        hooks.checkpoint = singa_lua_report_checkpoint;
    int rc;
    pthread_mutex_t *lock = rp->opts->lock;
    lua_pushlightuserdata(L, singa_job_stats(job)); /* for singa.stats() while the job runs */
    lua_setfield(L, LUA_REGISTRYINDEX, SINGA_LUA_LIVE_STATS_KEY);
    lua_pushlightuserdata(L, job); /* and singa.params() */
    lua_setfield(L, LUA_REGISTRYINDEX, LIVE_JOB_KEY);
    if (lock)
        pthread_mutex_unlock(lock);
    if (host && host->job_start && host->job_start(host->hooks.ud, job) < 0) {
        rc = singa_err_set(err, "singa.train: the job was cancelled before it started");
    } else {
        hooks.control = host ? host->hooks.control : NULL; /* job_start may have set it (a job that listens) */
        hooks.overwrite = host && host->hooks.overwrite; /* the workbench's user agreed */
        rp->t0 = singa_lua_now(); /* after the workbench's start (r) */
        rc = singa_job_run(job, &hooks, res, err);
    }
    if (host && host->job_end)
        host->job_end(host->hooks.ud, job, rc, err);
    if (lock)
        pthread_mutex_lock(lock);
    lua_pushnil(L);
    lua_setfield(L, LUA_REGISTRYINDEX, SINGA_LUA_LIVE_STATS_KEY);
    lua_pushnil(L);
    lua_setfield(L, LUA_REGISTRYINDEX, LIVE_JOB_KEY);
    singa_lua_report_clear(rp);
    return rc;
}

/* r.best: the best checkpoint a job with checkpoint_keep_best kept. */
static void push_best(lua_State *L, const singa_job *job, const singa_result *res)
{
    if (res->best_step < 0 || !res->best_path[0])
        return;
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, res->best_step);
    lua_setfield(L, -2, "step");
    lua_pushstring(L, res->best_path);
    lua_setfield(L, -2, "checkpoint");
    lua_pushnumber(L, res->best_value);
    lua_setfield(L, -2, singa_conf_str(singa_job_conf(job), "checkpoint_keep_best", "value"));
    lua_setfield(L, -2, "best");
}

/* singa.train(job) -> { steps, seconds, train = {...}, test = {...}, validation = {...} } */
static void push_result(lua_State *L, singa_job *job, const singa_result *res)
{
    lua_newtable(L);
    push_profile(L, singa_job_train_net(job));
    push_params(L, singa_job_train_net(job)->params);
    singa_lua_push_stats(L, singa_job_stats(job));
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, SINGA_LUA_LAST_STATS_KEY);
    lua_setfield(L, -2, "stats");
    lua_pushinteger(L, res->steps);
    lua_setfield(L, -2, "steps");
    lua_pushnumber(L, res->seconds);
    lua_setfield(L, -2, "seconds");
    if (res->images_per_sec > 0) {
        lua_pushnumber(L, res->images_per_sec);
        lua_setfield(L, -2, "images_per_sec");
    }
    singa_lua_push_metrics(L, &res->train, "train");
    if (res->has_test)
        singa_lua_push_metrics(L, &res->test, "test");
    if (res->has_validation)
        singa_lua_push_metrics(L, &res->validation, "validation");
    if (res->stopped_early) {
        lua_pushboolean(L, 1);
        lua_setfield(L, -2, "stopped_early");
    }
    push_best(L, job, res);
}

/* Whether a job function of this process was interrupted (luaconf.c's count hook): it ran on
 * after its job had failed here, so this process is the hung one.  Clears the mark. */
static bool took_interruption(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, SINGA_LUA_INTERRUPTED_KEY);
    bool hung = lua_toboolean(L, -1);
    lua_pop(L, 1);
    if (hung) {
        lua_pushnil(L);
        lua_setfield(L, LUA_REGISTRYINDEX, SINGA_LUA_INTERRUPTED_KEY);
    }
    return hung;
}

int singa_lua_train(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    const singa_lua_opts *o = singa_lua_get_opts(L);
    if (o->mode.run) { /* the program's mode instead, which ends the script */
        o->mode.run(L, o->mode.arg);
        return singa_lua_finish(L);
    }
    default_trace(L, o);
    singa_job *job = singa_lua_create_job(L);
    singa_lua_reporter rp = {.opts = o, .groups = singa_job_cluster(job) ? singa_job_cluster(job)->nworker_groups : 1,
                             .stats = singa_job_stats(job)};
    singa_result res;
    singa_err err = {{0}};
    int rc = run_job(L, job, &rp, &res, &err);
    bool hung = took_interruption(L);
    if (hung)
        singa_appendf(err.msg, sizeof err.msg, "; a Lua function of this process (a kLua updater or schedule?) "
                      "still ran, without end, and was interrupted");
    if (rc == SINGA_JOB_LOST || hung)
        singa_lua_set_lost(L, hung ? SINGA_JOB_HUNG : 1);
    if (rc < 0) {
        singa_job_free(job);
        return singa_lua_raise(L, err.msg);
    }
    push_result(L, job, &res);
    singa_job_free(job);
    return 1;
}

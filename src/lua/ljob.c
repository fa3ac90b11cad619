/* The job table of a script as the engine's conf, job or model: the plugins it names are
 * loaded first, and every failure raises the engine's message. */
#include <lauxlib.h>
#include <stdio.h>
#include <string.h>

#include "lua/lcore.h"
#include "lua/luaconf.h"
#include "singa/predict.h"

/* The plugins a job names (`plugins`, a path or a list of paths) are loaded before anything
 * else of it, so a layer type of theirs resolves and a plugin that fails stops the job before
 * it starts.  Values of the wrong type are left to the job's validation. */
void singa_lua_job_plugins(lua_State *L, int job)
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
            singa_plugin_load(singa_lua_registry(L), lua_tostring(L, -1), NULL, &err) < 0)
            singa_lua_raise(L, err.msg);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

singa_conf *singa_lua_job_conf(lua_State *L, int idx, singa_registry **reg)
{
    luaL_checktype(L, idx, LUA_TTABLE);
    singa_lua_job_plugins(L, idx);
    singa_err err = {{0}};
    singa_conf *conf = singa_lua_toconf(L, idx, "job", &err);
    if (!conf)
        singa_lua_raise(L, err.msg);
    *reg = singa_lua_registry(L);
    return conf;
}

/* cluster.plan = "auto": the job as the planner chose it (singa/plan.h), its "plan: " line
 * printed; the profile runs without the state's lock, as a job does (a kLua updater takes it). */
static singa_conf *planned(lua_State *L, singa_conf *conf, double *predicted)
{
    *predicted = 0;
    const char *plan = singa_conf_str(singa_conf_get(conf, "cluster"), "plan", NULL);
    if (!plan)
        return conf;
    if (strcmp(plan, "auto") != 0) {
        char msg[256];
        snprintf(msg, sizeof msg, "cluster: field 'plan' is \"auto\" (the planner picks the configuration), got '%s'", plan);
        singa_conf_free(conf);
        singa_lua_raise(L, msg);
    }
    char line[1024];
    pthread_mutex_t *lock = singa_lua_get_opts(L)->lock;
    if (lock)
        pthread_mutex_unlock(lock);
    singa_conf *chosen = singa_plan_auto(conf, singa_lua_registry(L), line, sizeof line, predicted);
    if (lock)
        pthread_mutex_lock(lock);
    const singa_lua_host *host = singa_lua_get_opts(L)->host; /* the workbench's log, as the job's lines */
    if (host && host->hooks.log)
        host->hooks.log(host->hooks.ud, line);
    printf("%s\n", line);
    fflush(stdout);
    if (!chosen)
        return conf;
    singa_conf_free(conf);
    return chosen;
}

/* Builds the job table at index 1 (loading its plugins first); raises the engine's error. */
singa_job *singa_lua_create_job(lua_State *L)
{
    singa_lua_job_plugins(L, 1);
    singa_err err = {{0}};
    singa_conf *conf = singa_lua_toconf(L, 1, "job", &err);
    if (!conf)
        singa_lua_raise(L, err.msg);
    double predicted;
    conf = planned(L, conf, &predicted);
    singa_job *job = NULL;
    int rc = singa_job_create(&job, conf, singa_lua_registry(L), &err);
    singa_conf_free(conf);
    if (rc < 0)
        singa_lua_raise(L, err.msg);
    if (predicted > 0 && singa_job_stats(job)) /* the Workers panel and singa.stats() show it */
        singa_stats_set_predicted(singa_job_stats(job), predicted);
    return job;
}

/* The model of the job at index 1, loaded with `hooks`; raises on failure.  The caller frees it
 * before it next calls anything that may raise. */
singa_model *singa_lua_load_model(lua_State *L, const singa_job_hooks *hooks)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    singa_lua_job_plugins(L, 1);
    singa_err err = {{0}};
    singa_conf *conf = singa_lua_toconf(L, 1, "job", &err);
    if (!conf)
        singa_lua_raise(L, err.msg);
    singa_model *m;
    int rc = singa_model_load(&m, conf, singa_lua_registry(L), hooks, &err);
    singa_conf_free(conf);
    if (rc < 0)
        singa_lua_raise(L, err.msg);
    return m;
}

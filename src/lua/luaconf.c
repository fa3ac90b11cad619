/* Lua tables to configuration trees: sequences become lists, string-keyed tables become tables,
 * functions become SINGA_CONF_FUNC nodes; anything else (userdata, mixed keys) is refused with
 * the path of the offending field.
 *
 * A Lua function in a tree is a singa_func holding a registry reference.  The engine calls it
 * back while singa.train (or test) runs, through lua_pcall with a message handler that adds the
 * traceback of the user's frames, so a Lua error comes back to the engine as an error message
 * and never unwinds through C code.  Tensor arguments become views (ltensor.c) that expire when
 * the call returns; while the call runs they are anchored in a registry table, so expiring them
 * afterwards never touches a collected userdata. */
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua/ltensor.h"
#include "lua/luaconf.h"
#include "singa/job.h"

typedef struct lua_func {
    singa_func base;
    lua_State *L;    /* the thread that converted the job, which is the one running it */
    lua_State *main; /* for releasing the reference, whatever becomes of L */
    pthread_mutex_t *lock; /* the state's lock (singa_lua_opts.lock), or NULL */
    int ref;
} lua_func;

typedef struct call_ctx {
    lua_func *f;
    const singa_value *args;
    int nargs;
    double *result;
    char *text; /* call_text: where the word goes */
    size_t textlen;
    singa_lua_tensor **views; /* anchored views, expired after the call */
    int nviews;
} call_ctx;

static const char anchor_key = 0; /* its address keys the registry table anchoring views */

static void push_view(lua_State *L, call_ctx *cx, int anchor, singa_tensor *t)
{
    singa_lua_tensor *v = singa_lua_tensor_view(L, t);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, anchor, v);
    cx->views[cx->nviews++] = v;
}

static void push_value(lua_State *L, call_ctx *cx, int anchor, const singa_value *a)
{
    luaL_checkstack(L, 4, "calling a job function");
    switch (a->kind) {
    case SINGA_VALUE_NUM:
        lua_pushnumber(L, a->num);
        break;
    case SINGA_VALUE_INT:
        lua_pushinteger(L, (lua_Integer)a->num);
        break;
    case SINGA_VALUE_STR:
        lua_pushstring(L, a->str);
        break;
    case SINGA_VALUE_TENSOR:
        push_view(L, cx, anchor, a->tensor);
        break;
    case SINGA_VALUE_TENSORS:
        lua_createtable(L, 0, a->n);
        for (int k = 0; k < a->n; k++) {
            push_view(L, cx, anchor, a->tensors[k]);
            lua_setfield(L, -2, a->names[k]);
        }
        break;
    case SINGA_VALUE_FIELDS:
        lua_createtable(L, 0, a->n);
        for (int k = 0; k < a->n; k++) {
            push_value(L, cx, anchor, &a->fields[k]);
            lua_setfield(L, -2, a->names[k]);
        }
        break;
    }
}

/* Runs protected: pushes the function and its arguments and calls it. */
static int protected_call(lua_State *L)
{
    call_ctx *cx = lua_touserdata(L, 1);
    luaL_checkstack(L, cx->nargs + 4, "calling a job function");
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &anchor_key) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_rawsetp(L, LUA_REGISTRYINDEX, &anchor_key);
    }
    int anchor = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, cx->f->ref);
    for (int i = 0; i < cx->nargs; i++)
        push_value(L, cx, anchor, &cx->args[i]);
    lua_call(L, cx->nargs, cx->result || cx->text ? 1 : 0);
    if (cx->result) {
        if (lua_type(L, -1) != LUA_TNUMBER)
            return luaL_error(L, "the function returned %s; it must return a number",
                              lua_isnil(L, -1) ? "nothing" : luaL_typename(L, -1));
        *cx->result = lua_tonumber(L, -1);
    }
    if (cx->text) {
        if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TSTRING)
            return luaL_error(L, "the function returned a %s; it must return a string or nothing", luaL_typename(L, -1));
        snprintf(cx->text, cx->textlen, "%s", lua_isnil(L, -1) ? "" : lua_tostring(L, -1));
    }
    return 0;
}

/* Message handler: the error and the traceback of the frames above protected_call (the user's
 * code; the frames below it are singa.train's caller's, which its own error report shows). */
static int traceback(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (!msg)
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    int keep = -1;
    lua_Debug ar;
    for (int level = 1; keep < 0 && lua_getstack(L, level, &ar); level++) {
        lua_getinfo(L, "f", &ar);
        if (lua_tocfunction(L, -1) == protected_call)
            keep = level - 1;
        lua_pop(L, 1);
    }
    luaL_traceback(L, L, msg, 1);
    const char *tb = lua_tostring(L, -1), *head = strstr(tb, "\nstack traceback:"), *cut = NULL;
    if (keep >= 0 && head) { /* cut before frame keep + 1 (or the header, keeping none) */
        cut = head;
        for (int k = 0; k < keep && cut; k++)
            cut = strstr(cut + 1, "\n\t");
        if (keep > 0 && cut)
            cut = strstr(cut + 1, "\n\t");
    }
    if (cut)
        lua_pushlstring(L, tb, (size_t)(cut - tb));
    return 1;
}

/* The tensors among n values (fields included), which become views. */
static int count_tensors(const singa_value *v, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += v[i].kind == SINGA_VALUE_TENSOR    ? 1
             : v[i].kind == SINGA_VALUE_TENSORS ? v[i].n
             : v[i].kind == SINGA_VALUE_FIELDS  ? count_tensors(v[i].fields, v[i].n)
                                                : 0;
    return k;
}

/* How often (in VM instructions) a running job function looks whether its job was abandoned. */
enum { ABANDON_COUNT = 10000 };

/* A count hook: a function still running once its job has failed in this process (an endless
 * loop in a kLua updater) raises, so the thread running it ends and the process with it. */
static void abandon_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    lua_getfield(L, LUA_REGISTRYINDEX, SINGA_LUA_LIVE_JOB_KEY);
    const singa_job *job = lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (job && singa_job_abandoned(job)) {
        lua_pushboolean(L, 1);
        lua_setfield(L, LUA_REGISTRYINDEX, SINGA_LUA_INTERRUPTED_KEY);
        luaL_error(L, "interrupted: the job has failed in this process while this function still ran");
    }
}

static int locked_call(lua_func *lf, const singa_value *args, int nargs, double *result, char *text, size_t textlen,
                       singa_err *err)
{
    lua_State *L = lf->L;
    int ntensors = count_tensors(args, nargs);
    call_ctx cx = {lf, args, nargs, result, text, textlen, NULL, 0};
    if ((ntensors && !(cx.views = malloc((size_t)ntensors * sizeof *cx.views))) || !lua_checkstack(L, 4)) {
        free(cx.views);
        return singa_err_set(err, "out of memory calling a Lua function");
    }
    /* Nothing here may raise a Lua error: the engine's C frames sit between us and any pcall. */
    int top = lua_gettop(L);
    lua_Hook hook = lua_gethook(L); /* someone's (debug.sethook), back after the call */
    int mask = lua_gethookmask(L), count = lua_gethookcount(L);
    lua_sethook(L, abandon_hook, LUA_MASKCOUNT, ABANDON_COUNT);
    lua_pushcfunction(L, traceback);
    lua_pushcfunction(L, protected_call);
    lua_pushlightuserdata(L, &cx);
    int rc = lua_pcall(L, 1, 0, top + 1);
    lua_sethook(L, hook, mask, count);
    if (cx.nviews) { /* before anything allocates: the anchor still holds every view */
        lua_rawgetp(L, LUA_REGISTRYINDEX, &anchor_key);
        for (int i = 0; i < cx.nviews; i++) {
            singa_lua_tensor_expire(cx.views[i]);
            lua_pushnil(L);
            lua_rawsetp(L, -2, cx.views[i]);
        }
        lua_pop(L, 1);
    }
    free(cx.views);
    if (rc != LUA_OK) {
        const char *msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "(error without a message)";
        singa_err_set(err, "%s", msg);
    }
    lua_settop(L, top);
    return rc == LUA_OK ? 0 : -1;
}

static int lua_func_call(singa_func *f, const singa_value *args, int nargs, double *result, singa_err *err)
{
    lua_func *lf = (lua_func *)f;
    if (lf->lock)
        pthread_mutex_lock(lf->lock);
    int rc = locked_call(lf, args, nargs, result, NULL, 0, err);
    if (lf->lock)
        pthread_mutex_unlock(lf->lock);
    return rc;
}

static int lua_func_call_text(singa_func *f, const singa_value *args, int nargs, char *text, size_t len, singa_err *err)
{
    lua_func *lf = (lua_func *)f;
    if (lf->lock)
        pthread_mutex_lock(lf->lock);
    int rc = locked_call(lf, args, nargs, NULL, text, len, err);
    if (lf->lock)
        pthread_mutex_unlock(lf->lock);
    return rc;
}

static void lua_func_destroy(singa_func *f)
{
    lua_func *lf = (lua_func *)f;
    luaL_unref(lf->main, LUA_REGISTRYINDEX, lf->ref);
    free(lf);
}

static singa_conf *convert_func(lua_State *L, int idx, const char *path, singa_err *err)
{
    lua_func *f = calloc(1, sizeof *f);
    if (!f) {
        singa_err_set(err, "out of memory");
        return NULL;
    }
    f->base.call = lua_func_call;
    f->base.destroy = lua_func_destroy;
    f->base.call_text = lua_func_call_text;
    f->base.refs = 1;
    f->L = L;
    lua_getfield(L, LUA_REGISTRYINDEX, SINGA_LUA_LOCK_KEY);
    f->lock = lua_touserdata(L, -1);
    lua_pop(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
    f->main = lua_tothread(L, -1);
    lua_pop(L, 1);
    lua_pushvalue(L, idx);
    f->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    singa_conf *c = singa_conf_new_func(&f->base);
    if (!c)
        singa_err_set(err, "out of memory");
    return c;
}

static singa_conf *convert(lua_State *L, int idx, const char *path, singa_err *err, int depth);

static singa_conf *convert_table(lua_State *L, int idx, const char *path, singa_err *err, int depth)
{
    luaL_checkstack(L, 4, "job table nested too deeply");
    lua_Integer len = (lua_Integer)lua_rawlen(L, idx);
    size_t nkeys = 0;
    bool named = false;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        nkeys++;
        if (lua_type(L, -2) == LUA_TSTRING) {
            named = true;
        } else if (!lua_isinteger(L, -2) || lua_tointeger(L, -2) < 1 || lua_tointeger(L, -2) > len) {
            lua_pop(L, 2);
            singa_err_set(err, "%s: keys must be names or list positions 1..n", path);
            return NULL;
        }
        lua_pop(L, 1);
    }
    if (named && len > 0) {
        singa_err_set(err, "%s: mixes list items and named fields", path);
        return NULL;
    }
    singa_conf *c = singa_conf_new(named || nkeys == 0 ? SINGA_CONF_TABLE : SINGA_CONF_LIST);
    if (!c) {
        singa_err_set(err, "out of memory");
        return NULL;
    }
    char sub[512];
    if (!named) {
        for (lua_Integer i = 1; i <= len; i++) {
            lua_rawgeti(L, idx, i);
            snprintf(sub, sizeof sub, "%s[%lld]", path, (long long)i);
            singa_conf *item = convert(L, lua_gettop(L), sub, err, depth + 1);
            lua_pop(L, 1);
            if (!item || singa_conf_add(c, NULL, item) < 0) {
                singa_conf_free(item);
                singa_conf_free(c);
                return NULL;
            }
        }
        return c;
    }
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        const char *key = lua_tostring(L, -2);
        snprintf(sub, sizeof sub, "%s.%s", path, key);
        singa_conf *item = convert(L, lua_gettop(L), sub, err, depth + 1);
        if (!item || singa_conf_add(c, key, item) < 0) {
            lua_pop(L, 2);
            singa_conf_free(item);
            singa_conf_free(c);
            return NULL;
        }
        lua_pop(L, 1);
    }
    return c;
}

static singa_conf *convert(lua_State *L, int idx, const char *path, singa_err *err, int depth)
{
    if (depth > 32) {
        singa_err_set(err, "%s: nested too deeply (a table that contains itself?)", path);
        return NULL;
    }
    switch (lua_type(L, idx)) {
    case LUA_TBOOLEAN:
        return singa_conf_new_bool(lua_toboolean(L, idx));
    case LUA_TNUMBER:
        return singa_conf_new_num(lua_tonumber(L, idx));
    case LUA_TSTRING:
        return singa_conf_new_str(lua_tostring(L, idx));
    case LUA_TTABLE:
        return convert_table(L, idx, path, err, depth);
    case LUA_TFUNCTION:
        return convert_func(L, idx, path, err);
    default:
        singa_err_set(err, "%s: a %s is not allowed here", path, luaL_typename(L, idx));
        return NULL;
    }
}

singa_conf *singa_lua_toconf(lua_State *L, int idx, const char *path, singa_err *err)
{
    return convert(L, lua_absindex(L, idx), path, err, 0);
}

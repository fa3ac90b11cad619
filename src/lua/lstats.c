/* singa.stats and singa.rank: the runtime's traffic and the workers' step times of the running
 * (or last) job, and which of the job's processes runs the script. */
#include <lauxlib.h>

#include "lua/lcore.h"

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

/* The runtime's traffic: { rank, dropped, traffic = { {type, peer, sent, received, bytes_sent,
 * bytes_received, pending, wait}, ... }, workers = (push_workers) }; empty lists for a job of one
 * process and thread pair. */
void singa_lua_push_stats(lua_State *L, const singa_stats *st)
{
    singa_traffic rows[256];
    int n = st ? singa_stats_snapshot(st, rows, 256) : 0;
    n = n < 256 ? n : 256;
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, st ? singa_stats_rank(st) : 0);
    lua_setfield(L, -2, "rank");
    lua_pushinteger(L, st ? (lua_Integer)singa_stats_dropped(st) : 0);
    lua_setfield(L, -2, "dropped");
    if (st && singa_stats_predicted(st) > 0) { /* cluster.plan = "auto"'s prediction */
        lua_pushnumber(L, singa_stats_predicted(st));
        lua_setfield(L, -2, "predicted_step");
    }
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

/* singa.stats(): the running job's traffic, else the last job's (see singa_lua_push_stats). */
int singa_lua_stats(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, SINGA_LUA_LIVE_STATS_KEY);
    const singa_stats *live = lua_touserdata(L, -1);
    if (live) {
        singa_lua_push_stats(L, live);
        return 1;
    }
    lua_getfield(L, LUA_REGISTRYINDEX, SINGA_LUA_LAST_STATS_KEY);
    if (lua_isnil(L, -1))
        singa_lua_push_stats(L, NULL);
    return 1;
}

/* singa.rank() -> rank, size: which of the job's processes runs this script (0, 1 without
 * --procs or a launcher); every rank runs the whole script, so a script writes files or
 * prints its own lines where rank == 0. */
int singa_lua_rank(lua_State *L)
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

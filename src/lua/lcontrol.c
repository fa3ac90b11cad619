/* singa.pause, singa.resume, singa.checkpoint and singa.lr_scale: steering the running job from
 * Lua (the workbench's console) through the host's singa_job_control.  The requests are atomic
 * flags the training loop reads between steps, so each call only sets one and returns at once;
 * without a host that steers (headless -e) they raise an error rather than do nothing. */
#include <lauxlib.h>
#include <math.h>

#include "lua/lcore.h"

static singa_job_control *control(lua_State *L, const char *fn)
{
    const singa_lua_host *host = singa_lua_get_opts(L)->host;
    if (!host || !host->hooks.control)
        luaL_error(L, "singa.%s: no job can be steered here (only in the workbench, singa-tui FILE)", fn);
    return host->hooks.control;
}

/* singa.pause(): the job holds before its next step (a job started later starts paused). */
static int l_pause(lua_State *L)
{
    atomic_store(&control(L, "pause")->pause, true);
    return 0;
}

static int l_resume(lua_State *L)
{
    atomic_store(&control(L, "resume")->pause, false);
    return 0;
}

/* singa.checkpoint(): a checkpoint is written before the job's next step (also while paused). */
static int l_checkpoint(lua_State *L)
{
    atomic_store(&control(L, "checkpoint")->checkpoint, true);
    return 0;
}

/* singa.lr_scale([x]) -> the scale: the job's learning rate becomes schedule(step) * x from its
 * next step on (1: as scheduled). */
static int l_lr_scale(lua_State *L)
{
    singa_job_control *c = control(L, "lr_scale");
    if (!lua_isnoneornil(L, 1)) {
        double x = luaL_checknumber(L, 1);
        luaL_argcheck(L, isfinite(x) && x >= 0, 1, "must be a finite number >= 0");
        atomic_store(&c->lr_scale, x);
    }
    lua_pushnumber(L, atomic_load(&c->lr_scale));
    return 1;
}

void singa_lua_control_open(lua_State *L)
{
    static const luaL_Reg funcs[] = {
        {"pause", l_pause},
        {"resume", l_resume},
        {"checkpoint", l_checkpoint},
        {"lr_scale", l_lr_scale},
        {NULL, NULL},
    };
    luaL_setfuncs(L, funcs, 0);
}

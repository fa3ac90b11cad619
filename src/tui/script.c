/* The script thread holds the Lua lock while the script runs Lua code; singa.train lets it go
 * for the length of a job (ltrain.c), which is when the console may take it (and job_start,
 * briefly, to list the plugins).  The engine's hooks below run on the training threads: they
 * only compute a step's own metrics and push a sample into the lock-free ring, so the UI can
 * never slow training down. */
#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "singa/checkpoint.h"
#include "singa/net.h"
#include "singa/summary.h"
#include "tui/script.h"
#include "tui/term.h"

static const char quit_key = 0; /* its address is the error value that ends a script on quit */

static float metric(const singa_metrics *m, const char *name, tui_group_prev *p, int k)
{
    double sum = 0;
    long count = 0;
    for (int i = 0; i < m->n; i++)
        if (strcmp(m->name[i], name) == 0) {
            sum = m->sum[i];
            count = m->count[i];
        }
    float v = count > p->count[k] ? (float)((sum - p->sum[k]) / (double)(count - p->count[k])) : NAN;
    p->sum[k] = sum;
    p->count[k] = count;
    return v;
}

static int group_of(const singa_record *r)
{
    return r->group < 0 ? 0 : r->group >= TUI_MAX_GROUPS ? TUI_MAX_GROUPS - 1 : r->group;
}

/* After every training step: r->metrics is the display window so far, so the step's own values
 * are the difference to what the previous step of the group saw. */
static void on_step(void *ud, const singa_record *r)
{
    tui_script *s = ud;
    tui_group_prev *p = &s->prev[group_of(r)];
    tui_sample x = {.kind = TUI_SAMPLE_STEP, .phase = SINGA_PHASE_TRAIN,
                    .job = (uint16_t)atomic_load_explicit(&s->job_seq, memory_order_relaxed),
                    .group = group_of(r), .step = r->step, .total_steps = r->total_steps,
                    .loss = metric(r->metrics, "loss", p, TUI_LOSS),
                    .accuracy = metric(r->metrics, "accuracy", p, TUI_ACC),
                    .images_per_sec = r->images_per_sec, .lr = r->lr, .elapsed = r->elapsed, .eta = r->eta};
    tui_ring_push(s->ring, &x);
    tui_snapshot_write(&s->latest[x.group], &x);
}

static void on_record(void *ud, const singa_record *r)
{
    tui_script *s = ud;
    if (r->phase == SINGA_PHASE_TRAIN) /* the display window starts over after this */
        memset(&s->prev[group_of(r)], 0, sizeof s->prev[0]);
    tui_sample x = {.kind = TUI_SAMPLE_RECORD, .phase = (uint8_t)r->phase,
                    .job = (uint16_t)atomic_load_explicit(&s->job_seq, memory_order_relaxed),
                    .group = group_of(r), .step = r->step, .total_steps = r->total_steps,
                    .loss = (float)singa_metrics_avg(r->metrics, "loss", NAN),
                    .accuracy = (float)singa_metrics_avg(r->metrics, "accuracy", NAN),
                    .images_per_sec = r->images_per_sec, .lr = r->lr, .elapsed = r->elapsed,
                    .seconds = r->seconds};
    tui_ring_push(s->ring, &x);
}

static void on_checkpoint(void *ud, int step, const char *path)
{
    tui_script *s = ud;
    pthread_mutex_lock(&s->mu);
    s->st.ckpt_count++;
    s->st.ckpt_step = step;
    snprintf(s->st.ckpt_path, sizeof s->st.ckpt_path, "%s", path);
    pthread_mutex_unlock(&s->mu);
}

/* "kSGD momentum 0.9, lr kStep base 0.04" from the job's updater table. */
static void describe_updater(const singa_conf *job, char *buf, size_t len)
{
    const singa_conf *u = singa_conf_get(job, "updater");
    snprintf(buf, len, "%s", singa_conf_str(u, "type", "kSGD"));
    static const char *const knobs[] = {"momentum", "weight_decay", "beta1", "beta2", "rho", "delta"};
    for (size_t i = 0; i < sizeof knobs / sizeof *knobs; i++)
        if (singa_conf_get(u, knobs[i]))
            singa_appendf(buf, len, " %s %g", knobs[i], singa_conf_num(u, knobs[i], 0));
    const singa_conf *lr = singa_conf_get(u, "learning_rate");
    if (lr && lr->kind == SINGA_CONF_FUNC)
        singa_appendf(buf, len, ", lr a Lua function");
    else if (lr)
        singa_appendf(buf, len, ", lr %s base %g", singa_conf_str(lr, "type", "kFixed"), singa_conf_num(lr, "base_lr", 0));
}

static void add_summary_line(void *ud, const char *text)
{
    tui_job_info *in = ud;
    int at = in->nsummary < TUI_MAX_LAYERS + 1 ? in->nsummary : TUI_MAX_LAYERS + 1; /* the total stays last */
    in->nsummary = at + 1;
    snprintf(in->summary[at], sizeof in->summary[at], "%s", text);
}

/* A fresh run of one process refuses the checkpoints it finds in its folder unless it may
 * replace them (once it writes its own): the workbench asks, unless the job says overwrite =
 * true (a distributed one refuses without it). */
static void count_stale(tui_job_info *in, const singa_conf *conf, const singa_job *job)
{
    uint64_t *steps = NULL;
    size_t n = 0;
    singa_err err;
    if (in->ckpt_dir[0] && !singa_conf_bool(conf, "resume", false) && !singa_conf_bool(conf, "overwrite", false) &&
        !singa_job_stats(job) &&
        singa_ckpt_dir_list(in->ckpt_dir, &steps, &n, &err) == 0 && n > 0) {
        in->stale = (int)n;
        in->stale_newest = (unsigned long long)steps[0];
    }
    free(steps);
}

/* An elastic job's lines for the Topology panel: its processes, the restarts, the ranks lost. */
static void describe_elastic(const singa_job *job, char (*lines)[48])
{
    const singa_cluster *c = singa_job_cluster(job);
    int restart, rank, size;
    const char *lost, *from;
    if (!c->elastic_min || singa_launch_restart(&restart, &lost, NULL) < 0 ||
        singa_launch_rank(&rank, &size, &from, NULL) < 0)
        return;
    snprintf(lines[0], sizeof lines[0], "elastic: %d process%s (min %d)", size, size == 1 ? "" : "es", c->elastic_min);
    if (restart)
        snprintf(lines[1], sizeof lines[1], "restart %d of %d: %s %s lost", restart, c->max_restarts,
                 strchr(lost, ',') ? "ranks" : "rank", lost);
    else
        snprintf(lines[1], sizeof lines[1], "no restart yet (at most %d)", c->max_restarts);
}

/* singa.train built a job: show it, then wait for the start key (or quitting). */
static int job_start(void *ud, const singa_job *job)
{
    tui_script *s = ud;
    const singa_conf *conf = singa_job_conf(job);
    const singa_net *net = singa_job_train_net(job);
    char plugins[sizeof s->st.info.plugins];
    pthread_mutex_lock(s->lua_lock); /* singa.train let it go for the job */
    tui_plugins_describe(s->aux, plugins, sizeof plugins);
    pthread_mutex_unlock(s->lua_lock);
    tui_stats_attach(&s->stats, job);
    pthread_mutex_lock(&s->mu);
    tui_job_info *in = &s->st.info;
    int seq = in->seq + 1;
    memset(in, 0, sizeof *in);
    in->seq = seq;
    snprintf(in->name, sizeof in->name, "%s", singa_job_name(job));
    in->train_steps = singa_conf_int(conf, "train_steps", 0);
    in->batch = singa_net_batchsize(net);
    describe_updater(conf, in->updater, sizeof in->updater);
    describe_elastic(job, in->elastic);
    if (singa_conf_get(conf, "checkpoint_path") && singa_conf_strs_len(conf, "checkpoint_path") > 0)
        snprintf(in->ckpt_dir, sizeof in->ckpt_dir, "%s", singa_conf_strs_at(conf, "checkpoint_path", 0));
    in->nlayers = net->nlayers;
    singa_summary_lines(net, add_summary_line, in);
    snprintf(in->plugins, sizeof in->plugins, "%s", plugins);
    count_stale(in, conf, job);
    s->st.ckpt_count = 0;
    s->st.job = TUI_JOB_LOADED;
    memset(s->prev, 0, sizeof s->prev); /* no training thread runs now */
    atomic_store(&s->job_seq, seq);
    pthread_cond_broadcast(&s->cv);
    while (!(s->go && (!in->stale || s->headless || s->replace_seq == seq)) && !s->quit)
        pthread_cond_wait(&s->cv, &s->mu);
    bool quit = s->quit;
    s->host.hooks.overwrite = in->stale && s->replace_seq == seq; /* the user said so */
    if (!quit)
        s->st.job = TUI_JOB_TRAINING;
    pthread_mutex_unlock(&s->mu);
    return quit ? -1 : 0;
}

static void job_end(void *ud, const singa_job *job, int rc, const singa_err *err)
{
    tui_script *s = ud;
    tui_stats_detach(&s->stats);
    pthread_mutex_lock(&s->mu);
    s->st.job = rc < 0 ? TUI_JOB_FAILED : TUI_JOB_DONE;
    s->st.lost = rc == SINGA_JOB_LOST;
    pthread_mutex_unlock(&s->mu);
}

tui_node_state tui_script_node_state(const tui_status *st, bool paused)
{
    if (st->script == TUI_SCRIPT_FAILED || st->job == TUI_JOB_FAILED)
        return TUI_NODE_DEAD;
    switch (st->job) {
    case TUI_JOB_LOADED:
        return TUI_NODE_WAITING;
    case TUI_JOB_TRAINING:
        return paused ? TUI_NODE_PAUSED : TUI_NODE_RUNNING;
    default:
        return TUI_NODE_FINISHED;
    }
}

int tui_script_init(tui_script *s, lua_State *L, singa_lua_opts *opts, tui_ring *ring, tui_log *log)
{
    memset(s, 0, sizeof *s);
    s->L = L;
    s->lua_lock = opts->lock;
    s->aux = lua_newthread(L);
    s->aux_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    s->ring = ring;
    s->log = log;
    singa_job_control_init(&s->control);
    tui_stats_init(&s->stats);
    s->host = (singa_lua_host){
        .hooks = {.ud = s, .record = on_record, .step = on_step, .checkpoint = on_checkpoint, .control = &s->control},
        .job_start = job_start,
        .job_end = job_end,
    };
    atomic_init(&s->done, false);
    atomic_init(&s->job_seq, 0);
    for (int g = 0; g < TUI_MAX_GROUPS; g++)
        tui_snapshot_init(&s->latest[g]);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    opts->host = &s->host;
    opts->progress_line = 0; /* the progress panel shows it */
    return 0;
}

static int msghandler(lua_State *L)
{
    return lua_touserdata(L, 1) == &quit_key ? 1 : singa_lua_traceback(L);
}

/* The script as `singa-tui -e` runs it: `arg` and ... hold its arguments. */
static void *run(void *arg)
{
    tui_script *s = arg;
    lua_State *L = s->L;
    pthread_mutex_lock(s->lua_lock);
    int top = lua_gettop(L), nargs = s->argc - s->first_arg;
    lua_createtable(L, nargs, 1);
    lua_pushstring(L, s->file);
    lua_rawseti(L, -2, 0);
    for (int i = 0; i < nargs; i++) {
        lua_pushstring(L, s->argv[s->first_arg + i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setglobal(L, "arg");
    lua_pushcfunction(L, msghandler);
    int base = lua_gettop(L);
    int rc = singa_lua_load_job(L, s->file);
    if (rc == LUA_OK) {
        for (int i = 0; i < nargs; i++)
            lua_pushstring(L, s->argv[s->first_arg + i]);
        rc = lua_pcall(L, nargs, 0, base);
    }
    tui_script_state state = TUI_SCRIPT_OK;
    char msg[SINGA_ERR_LEN] = "";
    if (rc != LUA_OK && !singa_lua_finished(L, -1)) {
        state = lua_touserdata(L, -1) == &quit_key ? TUI_SCRIPT_STOPPED : TUI_SCRIPT_FAILED;
        if (state == TUI_SCRIPT_FAILED)
            snprintf(msg, sizeof msg, "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "(error)");
    }
    lua_settop(L, top);
    lua_sethook(L, NULL, 0, 0);
    pthread_mutex_unlock(s->lua_lock);
    pthread_mutex_lock(&s->mu);
    if (state == TUI_SCRIPT_FAILED && s->quit)
        state = TUI_SCRIPT_STOPPED; /* e.g. singa.train cancelled by quitting */
    s->st.script = state;
    snprintf(s->st.error, sizeof s->st.error, "%s", msg);
    pthread_mutex_unlock(&s->mu);
    if (state == TUI_SCRIPT_FAILED)
        tui_log_addf(s->log, TUI_LINE_ERROR, "singa-tui: %s", msg);
    else if (state == TUI_SCRIPT_OK)
        tui_log_add(s->log, TUI_LINE_NOTE, "-- the script has finished (the console still works; q quits)");
    atomic_store(&s->done, true);
    return NULL;
}

int tui_script_start(tui_script *s, const char *file, int argc, char **argv, int first_arg, singa_err *err)
{
    snprintf(s->file, sizeof s->file, "%s", file);
    s->argc = argc;
    s->argv = argv;
    s->first_arg = first_arg;
    int rc = tui_term_thread(&s->thread, run, s);
    if (rc != 0)
        return singa_err_set(err, "cannot start the script's thread");
    s->started = true;
    return 0;
}

void tui_script_go(tui_script *s)
{
    pthread_mutex_lock(&s->mu);
    s->go = true;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

void tui_script_replace(tui_script *s, int seq)
{
    pthread_mutex_lock(&s->mu);
    s->go = true;
    s->replace_seq = seq;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* Ends the script at its next Lua instruction; set again after every instruction, so a pcall
 * in the script cannot swallow it. */
static void quit_hook(lua_State *L, lua_Debug *ar)
{
    lua_pushlightuserdata(L, (void *)&quit_key);
    lua_error(L);
}

void tui_script_quit(tui_script *s, bool checkpoint)
{
    if (checkpoint)
        atomic_store(&s->control.checkpoint, true);
    atomic_store(&s->control.stop, true);
    pthread_mutex_lock(&s->mu);
    s->quit = true;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    if (!s->started || atomic_load(&s->done))
        return;
    int mask = LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE | LUA_MASKCOUNT;
    if (pthread_mutex_trylock(s->lua_lock) == 0) {
        lua_sethook(s->L, quit_hook, mask, 1);
        pthread_mutex_unlock(s->lua_lock);
    } else {
        /* The script is running Lua code: set the hook while it runs, which Lua allows
         * asynchronously (lua.c does it from its SIGINT handler). */
        lua_sethook(s->L, quit_hook, mask, 1);
    }
}

void tui_script_status(tui_script *s, tui_status *out)
{
    pthread_mutex_lock(&s->mu);
    *out = s->st;
    pthread_mutex_unlock(&s->mu);
}

bool tui_script_done(tui_script *s) { return !s->started || atomic_load(&s->done); }

void tui_script_join(tui_script *s)
{
    if (s->started)
        pthread_join(s->thread, NULL);
    s->started = false;
}

void tui_script_destroy(tui_script *s)
{
    pthread_mutex_lock(s->lua_lock);
    luaL_unref(s->L, LUA_REGISTRYINDEX, s->aux_ref);
    pthread_mutex_unlock(s->lua_lock);
    tui_stats_destroy(&s->stats);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
}

/* The job's script, run on a thread of its own, and the host side of singa.train: what the
 * engine reports goes into the sample ring, the job's counters and topology are watched
 * (stats.h), the start of training waits for the user's key, and quitting stops both the
 * training loop and the script. */
#ifndef SINGA_TUI_SCRIPT_H
#define SINGA_TUI_SCRIPT_H

#include <lua.h>
#include <pthread.h>
#include <stdatomic.h>

#include "lua/lsinga.h"
#include "tui/log.h"
#include "tui/ring.h"
#include "tui/series.h"
#include "tui/snapshot.h"
#include "tui/stats.h"

typedef enum tui_job_state {
    TUI_JOB_NONE,     /* the script has not called singa.train yet */
    TUI_JOB_LOADED,   /* a job is built and waits for the start key */
    TUI_JOB_TRAINING,
    TUI_JOB_DONE,     /* singa.train returned */
    TUI_JOB_FAILED,   /* singa.train failed */
} tui_job_state;

typedef enum tui_script_state {
    TUI_SCRIPT_RUNNING,
    TUI_SCRIPT_OK,
    TUI_SCRIPT_FAILED,
    TUI_SCRIPT_STOPPED, /* ended because the user quit */
} tui_script_state;

#define TUI_MAX_LAYERS 64

/* What the workbench shows of a job before and while it trains. */
typedef struct tui_job_info {
    int seq;            /* 1 for the script's first singa.train, 2 for the next, ... */
    char name[64];
    int train_steps, batch;
    char updater[192];  /* e.g. "kSGD momentum 0.9, lr kStep base 0.04" */
    char ckpt_dir[512]; /* "" without checkpoint_path */
    int nlayers;        /* of the training net */
    /* Its summary (singa/summary.h): a header, a line per layer, the total; the lines past
     * TUI_MAX_LAYERS + 1 are not kept, but the total always is. */
    int nsummary;
    char summary[TUI_MAX_LAYERS + 2][96]; /* "fc1   kInnerProduct 64x512       401,920" */
    char plugins[256];  /* the plugins loaded when it was built (tui_plugins_describe) */
    /* A fresh run of one process: the checkpoints of an earlier run in ckpt_dir, which its first
     * checkpoint replaces; it trains only once the user agrees (tui_script_replace). */
    int stale;
    unsigned long long stale_newest;
    char elastic[2][48]; /* an elastic job: its processes, its restarts and the ranks lost ("" if not) */
} tui_job_info;

/* A consistent copy of the script's state for the UI thread. */
typedef struct tui_status {
    tui_job_state job;
    tui_script_state script;
    tui_job_info info;
    int ckpt_count, ckpt_step; /* checkpoints written by this job, and the last one's step */
    char ckpt_path[512];
    char error[SINGA_ERR_LEN]; /* the script's error, when it failed */
    bool lost; /* the job ended for a lost process and starts again (SINGA_JOB_LOST) */
} tui_status;

/* Per worker group, what the last step hook saw of the display window: the difference to the
 * next one is that step's own loss.  Each group's hooks run on its own thread: no sharing. */
typedef struct tui_group_prev {
    _Alignas(64) double sum[TUI_METRICS];
    long count[TUI_METRICS];
} tui_group_prev;

typedef struct tui_script {
    lua_State *L;
    pthread_mutex_t *lua_lock; /* singa_lua_opts.lock */
    lua_State *aux;        /* a coroutine of L for the workbench's own calls: its own stack */
    int aux_ref;
    tui_ring *ring;
    tui_log *log;
    singa_lua_host host;
    singa_job_control control;
    tui_stats stats;       /* the job's traffic and topology */
    char file[4096];
    int argc, first_arg;
    char **argv;
    pthread_t thread;
    bool started;
    atomic_bool done;      /* the thread has finished */
    atomic_int job_seq;    /* tui_job_info.seq of the job training now */
    pthread_mutex_t mu;    /* guards the fields below */
    pthread_cond_t cv;
    tui_status st;
    bool go;               /* the user said start (or --run) */
    bool headless;         /* nobody to ask (monitor.c): a job replacing checkpoints starts too */
    int replace_seq;       /* the job whose earlier run's checkpoints the user agreed to replace */
    bool quit;
    tui_group_prev prev[TUI_MAX_GROUPS];
    tui_snapshot latest[TUI_MAX_GROUPS]; /* each group's newest step sample */
} tui_script;

/* Prepares s (before the thread starts: the caller may set s->go); the caller holds the Lua
 * lock. */
int tui_script_init(tui_script *s, lua_State *L, singa_lua_opts *opts, tui_ring *ring, tui_log *log);
/* Runs `file` with argv[first_arg..] as its arguments on a new thread; the caller must not hold
 * the Lua lock for long from now on. */
int tui_script_start(tui_script *s, const char *file, int argc, char **argv, int first_arg, singa_err *err);
/* The start key: a job waiting in singa.train trains, and later jobs start at once (but for
 * one with tui_job_info.stale checkpoints). */
void tui_script_go(tui_script *s);
/* The user agreed that job `seq` replaces an earlier run's checkpoints: it trains. */
void tui_script_replace(tui_script *s, int seq);
/* Quitting: a waiting job is cancelled, a training job stops before its next step (after a
 * checkpoint when `checkpoint`), and the script ends at its next Lua instruction. */
void tui_script_quit(tui_script *s, bool checkpoint);
void tui_script_status(tui_script *s, tui_status *out);
bool tui_script_done(tui_script *s);
/* Waits for the thread (call once it is done, or to wait for it). */
void tui_script_join(tui_script *s);
void tui_script_destroy(tui_script *s);

/* What the topology shows of every node while the job is in `st` (paused: the loop holds). */
tui_node_state tui_script_node_state(const tui_status *st, bool paused);

/* plugins.c: the progress panel's "plugin" line, from the Lua state L (with its lock held). */
void tui_plugins_describe(lua_State *L, char *buf, size_t len);

#endif

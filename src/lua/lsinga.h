/* The Lua binding of libsinga (module "singa.core"; lua/singa.lua builds `singa` on it). */
#ifndef SINGA_LUA_LSINGA_H
#define SINGA_LUA_LSINGA_H

#include <lua.h>
#include <pthread.h>
#include <stdio.h>

#include "singa/job.h"
#include "singa/partition.h"

/* A host that watches and steers training (the workbench, src/tui/).  singa.train calls its
 * hooks besides its own printing, gives the job hooks.control, and calls job_start and job_end
 * around the run, both without the lock held. */
typedef struct singa_lua_host {
    singa_job_hooks hooks; /* record, step, log, checkpoint (ud: hooks.ud) and control (read after job_start) */
    /* The job is built but not yet trained: may wait (for the user's start key); a value < 0
     * cancels the run and singa.train raises an error. */
    int (*job_start)(void *ud, const singa_job *job);
    /* The run ended: rc and err as singa_job_run left them. */
    void (*job_end)(void *ud, const singa_job *job, int rc, const singa_err *err);
} singa_lua_host;

/* A mode of the program whose singa.train does not train (singa-tui --test, --summary ...): run
 * is called with the job table at index 1, in singa.train's frame (so an error it raises names
 * the script's line), and the script then ends as a success (singa_lua_finished). */
typedef struct singa_lua_mode {
    void (*run)(lua_State *L, const char *arg);
    const char *arg; /* the mode's own (an output file), or NULL */
} singa_lua_mode;

/* How the program wants training reported; kept in the Lua registry. */
typedef struct singa_lua_opts {
    FILE *metrics;     /* one record per display/test/validation result, or NULL */
    int metrics_csv;   /* CSV instead of JSON lines */
    const char *metrics_path; /* its name, read back when another process wrote it too */
    int progress_line; /* stdout is a terminal: redraw one progress line */
    singa_lua_mode mode; /* run NULL: singa.train trains */
    const char *trace, *trace_steps; /* the fields of every job singa.train runs that lacks them */
    /* Which OS thread may run Lua code on the state: the host holds it while its script runs;
     * singa.train lets it go for the length of the job, and the job's callbacks (kLua updaters
     * and schedules, called from worker and server threads) take it for each call, as does an
     * interactive console.  NULL when only one thread ever touches the state. */
    pthread_mutex_t *lock;
    /* Folders (colon-separated) whose plugins are loaded when the module opens, or NULL. */
    const char *plugin_path;
    const singa_lua_host *host; /* the workbench, or NULL */
    /* Set by singa.train: an elastic job ended because it lost a process (SINGA_JOB_LOST), so
     * the program exits with SINGA_EXIT_LOST; or (SINGA_JOB_HUNG) a job function of this process
     * ran on after its job had failed and was interrupted: SINGA_EXIT_HUNG. */
    int lost;
} singa_lua_opts;

enum { SINGA_JOB_HUNG = 2 }; /* singa_lua_opts.lost: this process was the hung one */

int luaopen_singa_core(lua_State *L);
/* Stores opts (which must outlive L) for singa.train to use. */
void singa_lua_set_opts(lua_State *L, singa_lua_opts *opts);
/* Whether the error value at idx is the one that ends a script after singa.train ran a mode
 * (a success, not an error). */
int singa_lua_finished(lua_State *L, int idx);
/* A message handler for lua_pcall of a script: the error with a traceback, except a finished
 * script's marker (a mode's) and an error raised by singa.core's functions (a job refused,
 * a failure while training: the message says what), which pass as they are. */
int singa_lua_traceback(lua_State *L);
/* The opts singa_lua_set_opts stored (all zero when none were). */
const singa_lua_opts *singa_lua_get_opts(lua_State *L);
/* What a mode may call on the job table at index 1; each raises on failure.  singa.test(job):
 * pushes its result. */
int singa_lua_test(lua_State *L);
/* singa.summary(job): pushes its text and its table. */
int singa_lua_summary(lua_State *L);
/* The partitioned graph of the job (its cluster's nworkers_per_group, phase "kTrain" ...); the
 * caller frees it with singa_graph_free. */
void singa_lua_graph_build(lua_State *L, singa_graph *g, const char *phase);
/* singa.export_onnx(job, path [, checkpoint]): pushes { path, input, output, nodes, bytes,
 * checkpoint, step } (lonnx.c). */
int singa_lua_export_onnx(lua_State *L);
/* Loads a job file as luaL_loadfilex does: a Lua script, or a SINGA job.conf (named *.conf, or
 * any file that is not Lua but reads as protobuf text) as a chunk that runs
 * singa.train(singa.import_conf(file)). */
int singa_lua_load_job(lua_State *L, const char *file);
/* singa-tui --convert: writes the conf as a Lua job script to stdout; 0, or 1 with the error on
 * stderr (and nothing on stdout). */
int singa_lua_convert(lua_State *L, const char *file);

#endif

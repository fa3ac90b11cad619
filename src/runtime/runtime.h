/* The distributed runtime inside one process: a stub thread routing messages, a thread per
 * worker and per server, and what they share.  process.c builds and joins them, stub.c routes
 * (stub_params.c aggregates), server.c updates slices, worker.c trains; what every file uses of
 * the process (failing, stopping, sending, the log) is ctx.h's, where each thread lives
 * topology.h's. */
#ifndef SINGA_RUNTIME_RUNTIME_H
#define SINGA_RUNTIME_RUNTIME_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "runtime/msg.h"
#include "singa/checkpoint.h"
#include "singa/ckpt_set.h"
#include "singa/cluster.h"
#include "singa/curve.h"
#include "singa/job.h"
#include "core/stats.h"
#include "core/trace.h"
#include "singa/stats.h"
#include "singa/updater.h"
#include "train/train.h"
#include "net/parts.h"
#include "runtime/topology.h"
#include "runtime/ctx.h"

/* Trains `job` (whose cluster is distributed) in this process's part of the cluster, or with
 * `alone` all of it, whatever launched the process.  trace: the job's timeline (singa/trace.h),
 * or NULL. */
int singa_runtime_run(singa_job *job, const singa_job_hooks *hooks, singa_trace *trace, bool alone, singa_result *res,
                      singa_err *err);

/* A trained param's part held by one server of every server group.  Each server of a group owns
 * a contiguous, near-equal range of all the params laid end to end, so a small param lies on one
 * server and a large one may span several; a server's range of a param longer than 2 MB is cut
 * into slices of at most that (SLICE_MAX in process.c). */
typedef struct rt_slice {
    int param;          /* index among the distributed params */
    size_t offset, len; /* in floats, within the param */
    int server;         /* its server's index within a group */
} rt_slice;

/* A param the servers update: trained and not sharing another's value. */
typedef struct rt_param {
    const char *name, *layer;
    size_t size;
    float lr_scale, wd_scale;
    int first_slice, nslices;
    float *hist; /* the momentum history every worker writes into (history.c), or NULL */
} rt_param;
/* Slice k declared in `store` as a trained param named `name`, with its param's scales and no
 * gradient of its own: what a server's updater, or a replica's, updates (server.c). */
singa_param *rt_slice_param(const rt_ctx *rt, singa_params *store, int k, const char *name, singa_err *err);
/* What the workers that write into the servers' history share (history.c); each param's
 * gradient GEMM is written in this many blocks of rows, in turns. */
enum { RT_HISTORY_PARTS = 4 };
typedef struct rt_history {
    pthread_mutex_t lock;
    pthread_cond_t turn_changed;
    int *turn;              /* per param, per part: the worker whose turn it is to write */
    singa_tensor *lead_grad; /* per param: worker 0's own gradient, put back at the end */
    int nworkers;
    int nparams;            /* the params written so */
    float momentum;
    _Atomic float rate[2];  /* the rate of step s at [s & 1] */
} rt_history;

typedef struct rt_worker {
    rt_ctx *rt;
    int group, id;
    singa_job *job;
    singa_param **params; /* the job's distributed params, by index */
    singa_updater *rates; /* the job's schedule alone, for its records: the servers update */
    bool *sent;           /* this step's update is on its way */
    bool *stale;          /* its update left, its answer is not in yet ... */
    int nstale;           /* ... for so many params */
    bool lazy;            /* the forward pass waits per layer for its values (SINGA's Collect) */
    double waited;        /* the step's wait for values so far */
    void *sock;
    pthread_t thread;
    singa_job_hooks hooks; /* the runtime's, serialised */
    singa_result res;
    singa_err err;
    int rc;
    int step_sent;        /* the step whose updates are being sent */
    bool stopped;         /* by the stub, which needs no word back */
    int ckpt_done;        /* the host's checkpoint whose state it wrote last (-1: none) */
    double step_sent_at;  /* when a step's record last left for rank 0 (not in rank 0) */
    /* A data-parallel group's leader: the others' metrics of step_sent it still waits for, and
     * those that came before it began to (of the step it will wait for next). */
    int metrics_due;
    bool collecting;
    bool exchanged;       /* its metrics of step_sent went (or are awaited) already */
    int metrics_to;       /* the process of the leader they went to */
    singa_metrics early;
    int nearly;
    uint64_t metrics_from, early_from; /* the workers (bit id) whose metrics of step_sent, of the next, are in */
    uint64_t counted_gone; /* the workers lost that step_sent's wait counts out already */
    /* The step's times (singa_stats_step): when its passes began, and the sends so far. */
    double step_began, sending;
    singa_trace_buf *trace; /* this thread's, or NULL */
    int floor;            /* cluster.staleness: every live group finished this step (staleness.c) */
    uint64_t takes;       /* the lost workers whose rows this step trains too (reshare.c) ... */
    uint64_t assigned;    /* ... of those the losses known at the step before gave it */
    /* A group that may shrink (cluster.replicas): a worker's last training record while another
     * led, which it reports first once it leads, the lost leader may not have (takeover.c). */
    singa_record kept;
    singa_metrics kept_metrics;
    bool led;
} rt_worker;

typedef struct rt_server rt_server;
typedef struct rt_stub rt_stub;

/* What every file of a distributed checkpoint records of the job that wrote it (ckpt_set.h). */
enum { RT_TOPOLOGY_LEN = SINGA_CKPT_TOPOLOGY_LEN };

struct rt_ctx {
    singa_job *job; /* the script's, abandoned when the run fails */
    const singa_cluster *c;
    const singa_conf *conf;
    int rank, nprocs;
    /* The net is cut among the workers of each group (singa_job_cut): see rt_sends. */
    bool cut;
    rt_launch launch;
    uint64_t fingerprint;  /* of the job's configuration: every process must have the same */
    char plugins[1024];    /* the loaded plugins, which every process must have too */
    FILE *log;             /* <workspace>/rank<r>.log, or NULL */
    singa_result final;    /* rank 0's result, handed to the others at the end */
    void *zmq;
    char endpoint[64]; /* the stub's inproc address */
    rt_param *params;
    int nparams;
    rt_slice *slices;
    int nslices;
    /* The job singa_runtime_run was given: its distributed params, by index, which hold the final
     * values at the end in every process (its result's params). */
    singa_param **final_params;
    /* Per worker group with workers here: its params' values, shared by those workers (the
     * first one's), by distributed param index; NULL for other groups. */
    singa_param ***replica;
    rt_worker *workers;
    int nworkers;
    rt_server *servers;
    int nservers;
    rt_stub *stub;
    const singa_job_hooks *hooks;
    atomic_int *stop_step; /* per worker group: the step its workers stop before (INT_MAX: none);
                            * see rt_stop_before */
    atomic_int ckpt_step;  /* the step a checkpoint the host asked for is written at (-1: none) */
    /* What steers this process's workers and servers: the host's (rank 0), or, in the other
     * ranks, rank 0's pause, stop and lr scale as its heartbeats tell (never a checkpoint). */
    singa_job_control *control;
    singa_job_control from_rank0;
    pthread_mutex_t lock; /* hooks and the first error */
    singa_err err;
    bool failed;
    bool lost; /* the failure is a lost process's (an elastic job may restart) */
    singa_stats *stats;
    /* Checkpoints (ckpt.c, resume.c): checkpoint_path's first entry (NULL: none), checkpoint_keep, the
     * step every thread of every process starts from (0 for a fresh start; puts and gets carry
     * it, so processes that chose different checkpoints are found out), and what the threads
     * here load from the checkpoint resume chose, of any topology (until they are built). */
    const char *ckpt_dir;
    int ckpt_keep;
    int resume_step;
    int64_t topology[RT_TOPOLOGY_LEN];
    singa_ckpt_set *resumed; /* NULL: a fresh start */
    /* Rank 0 of a run with overwrite = true: the earlier run's files, known by their inodes (a
     * file this run writes under the same name is a new one), removed once this run has
     * written a whole checkpoint. */
    singa_ckpt_file *stale;
    ino_t *stale_ino;
    size_t nstale;
    int rejoined_at;         /* SINGA_REJOIN, once admitted: the step its groups go on from (else -1) */
    rt_history *history; /* NULL unless the workers write into the servers' history */
    /* cluster.compress top-k with error feedback: per worker group with workers here, per slice
     * whose server is in another process (every slice with values = "update"), what the stub has
     * not sent yet (else NULL); the stub
     * writes it as it sends, and the group's first worker here checkpoints it between steps. */
    float ***residual;
    /* cluster.compress = { powersgd = R } over several processes: each replica applies its
     * group's update itself (replica_update.h); else NULL. */
    struct rt_replica_update *self_update;
    /* What this process's heartbeats say of its threads (peers.c): how many workers and servers
     * are busy (neither waiting for a message nor ended), and a count of their steps forward
     * (messages taken, layers passed), so the others can tell a process stuck in a computation
     * (an endless loop in a kLua updater) from one that waits or works. */
    atomic_int busy;
    atomic_uint progress;
    /* The job's timeline (NULL: none), and what turns this process's clock into rank 0's
     * (measured when the processes meet: peers.c). */
    singa_trace *trace;
    double clock_offset;
    /* cluster.replicas: per server of group 0, the replica that holds it now (0: its primary;
     * a loss moves it to the next live one, membership.c), NULL with one replica; and the
     * processes a synchronous group went on without (bit r).  The stub writes both before it
     * tells the threads (MSG_SHRINK). */
    atomic_int *holder;
    _Atomic uint64_t shrunk;
    /* A lost process rejoins the synchronous group (rejoin_sync.c): its rank (0: none) and the
     * step it trains from; in it, when it was admitted. */
    atomic_int grow_rank, grow_step;
    _Atomic double grow_began;
    /* A group that may shrink: the step after the last whose record the coordinator's leader
     * reports (its word comes before it does), so one that takes over knows what it missed
     * (takeover.c). */
    atomic_int recorded;
};
/* Sandblaster in one process with kSGD and momentum: the workers' backward passes write into the
 * servers' momentum history (history.c).  Setup decides and prepares it, after the servers. */
int rt_history_setup(rt_ctx *rt, singa_err *err);
void rt_history_free(rt_ctx *rt);
/* Before worker `id` writes part j of param k's gradient of `step`: waits for its turn, sets
 * alpha and beta. */
void rt_history_begin(rt_ctx *rt, int k, int j, int id, int step, singa_param *p);
/* After it wrote it: the next worker's turn. */
void rt_history_pass(rt_ctx *rt, int k, int j, int id);
/* A worker whose backward pass did not write param k: its turn, with a zero gradient. */
void rt_history_skip(rt_ctx *rt, int k, int id);
/* A server applied a step: the rate of `step`, the next, for the workers' alpha. */
void rt_history_publish(rt_ctx *rt, int step, float rate);

/* CURVE and its ZAP handler (curve.c), when the job has cluster.curve; without, *out is NULL
 * and the functions below do nothing. */
typedef struct singa_curve rt_curve; /* singa/curve.h */
int rt_curve_start(rt_ctx *rt, rt_curve **out, singa_err *err);
const char *rt_curve_public(const rt_curve *c); /* Z85; "-" without CURVE */
const char *rt_curve_coordinator(const rt_curve *c);
int rt_curve_client(const rt_curve *c, void *sock, const char *server_key);

/* The link to the other processes (peers.c), used by the stub only. */
typedef struct rt_peers rt_peers;
/* Listens, then meets the others at the coordinator (waiting at most join_timeout). */
int rt_peers_open(rt_ctx *rt, rt_peers **out, singa_err *err);
void rt_peers_close(rt_peers *p);
/* Its ROUTER and a monitor of each connection to a peer, for the stub's zmq_poll (at most
 * nprocs items); returns how many.  After the poll, watch takes the events the monitors hold. */
int rt_peers_items(rt_peers *p, zmq_pollitem_t *items);
void rt_peers_watch(rt_peers *p, const zmq_pollitem_t *items);
const char *rt_peers_endpoint(const rt_peers *p, int rank);
bool rt_peers_dead(const rt_peers *p, int rank);
/* Drops the connection to dead process r and what waits in it (frames lent to it are given back:
 * a group that goes on without r sends them elsewhere). */
void rt_peers_forget(rt_peers *p, int r);
/* Sends to the stub of process `rank` (nothing to a dead one); payload may be NULL. */
void rt_peers_send(rt_peers *p, int rank, const msg *m, const void *payload, size_t nbytes);
/* One message from another process: 0, 1 when dropped (garbage, a stranger, a forgery), 2 for a
 * heartbeat or what peers.c took itself, 3 at rank 0 for a lost process that asks to rejoin
 * (rt_peers_joining), -1 when the socket fails. */
int rt_peers_recv(rt_peers *p, msg *m, zmq_msg_t *payload);
/* Rank 0, after rt_peers_recv returned 3: the rank that asks to rejoin, and the step it says its
 * groups go on from; the stub admits it (every process connects to it anew) or refuses it. */
int rt_peers_joining(const rt_peers *p, int *step);
int rt_peers_admit(rt_peers *p, singa_err *err);
void rt_peers_refuse(rt_peers *p, const char *why);
/* Sends heartbeats when due; returns the seconds until the next are due. */
double rt_peers_tick(rt_peers *p);
/* Why a process is lost: silent for longer than heartbeat_timeout; its connection closed and did
 * not come back (it died); busy without progress for heartbeat_timeout while this process waited
 * as long (it hung). */
/* RT_LOST_BEFORE: a process that rejoins hears from rank 0 which ranks the job lost already. */
typedef enum { RT_LOST_SILENT, RT_LOST_CLOSED, RT_LOST_HUNG, RT_LOST_BEFORE } rt_loss;
/* A process newly found lost (marked dead), and why, or -1. */
int rt_peers_lost(rt_peers *p, rt_loss *why);
double rt_now(void);

/* cluster.compress: whether a server's answer of `type` to process `proc` carries its values
 * encoded (updates' answers, in compress.values: top-k is for gradients, and a get's values stay
 * exact, as they end in the job's result); and the buffers an end that encodes or decodes needs (*unpacked
 * the floats of the longest slice, *packed its longest encoding; freed by the caller either way). */
bool rt_compress_values(const rt_ctx *rt, int type, int proc);
/* The residuals (zero, or the resumed checkpoint's when its topology is the job's), before the
 * resumed set is dropped; the entries "residual/<slice>" worker (group, id) adds to its file. */
int rt_residuals_setup(rt_ctx *rt, singa_err *err);
void rt_residuals_free(rt_ctx *rt);
int rt_residuals_add(const rt_ctx *rt, int group, int id, singa_ckpt *c, singa_err *err);
/* The worker of group g that checkpoints the process's residuals: its first here. */
bool rt_residual_keeper(const rt_ctx *rt, int g, int id);
int rt_compress_buffers(const rt_ctx *rt, float **unpacked, uint8_t **packed);
/* A worker's or server's socket to the stub, which it has greeted; NULL (the runtime failed,
 * err set) when it cannot be made. */
void *rt_connect(rt_ctx *rt, int kind, int group, int id, singa_err *err);

void *rt_worker_main(void *arg);
/* A worker whose net is cut among a group living in several processes: the bridges between them
 * become messages (before the worker's thread starts). */
int rt_worker_link(rt_worker *w, singa_err *err);
/* The coordinator's result at the end: its leader's of group 0 (takeover.c). */
singa_result rt_lead_result(const rt_ctx *rt);
/* Whether worker w reports record r (it leads its group), and *first, a record it kept to report
 * before r, or NULL (takeover.c). */
bool rt_lead_record(rt_worker *w, const singa_record *r, const singa_record **first);
/* The coordinator's leader reported record r: the others hear it after it is written, so one
 * that takes over reports again only a record the lost one may not have written (a kill between
 * the write and this word repeats it, and the metrics file it shares leaves it out). */
void rt_lead_recorded(rt_worker *w, const singa_record *r);

/* Writes c (entries added by the caller) as the file of thread (kind, group, id) of checkpoint
 * `step`, adding the topology, the number of files of the step ("files": those of the groups not
 * lost), the groups lost now ("lost", when one is) and the thread's identity ("shard" or
 * "worker": its group and id). */
int rt_ckpt_write(rt_ctx *rt, singa_ckpt *c, int kind, int group, int id, singa_err *err);
/* The groups lost now, whose files a checkpoint written now lacks ("lost" in its files), as buf
 * says ("the state of lost worker group 1 (rank 1) and the shards of ..."); returns how many. */
int rt_ckpt_lacks(const rt_ctx *rt, char *buf, size_t len);
/* Rank 0, process r lost from a job that goes on: logs each newest checkpoint that lacks its
 * groups' worker files but was written before the loss was known, so does not record it: those
 * are incomplete (ckpt_lost.c). */
void rt_ckpt_name_incomplete(rt_ctx *rt, int r);
/* The coordinator, process r lost from a job that goes on: removes the checkpoint files r was
 * writing (its workers', the servers it held: "*.ckpt.tmp"), which it never will rename.  Before a
 * backup takes over r's servers, which writes their file names (ckpt_lost.c). */
void rt_ckpt_drop_lost_tmp(const rt_ctx *rt, int r);
/* Worker 0.0, after every server wrote its shard of a checkpoint: removes all but the newest
 * checkpoint_keep complete checkpoints (and nothing newer than the oldest of them). */
void rt_ckpt_prune(rt_ctx *rt);
/* The "topology" entry every file of this job's checkpoints records (its groups, servers,
 * slices, `total` values and a digest of the params' names, sizes and slicing). */
void rt_ckpt_topology(rt_ctx *rt, size_t total);
/* How many checkpoints (steps) files[0, n), newest first, are of. */
size_t rt_ckpt_count_steps(const singa_ckpt_file *files, size_t n);
/* overwrite = true, rank 0: keeps the earlier run's files (taking `files`) to remove them once
 * this run has written a whole checkpoint. */
int rt_ckpt_note_stale(rt_ctx *rt, singa_ckpt_file *files, size_t n, singa_err *err);
/* Removes every file of the steps in files[0, n), or (aside[i]) renames it "<name>.refused". */
void rt_ckpt_remove_steps(rt_ctx *rt, const singa_ckpt_file *files, size_t n, const bool *aside);
/* The job hook worker 0.0 of rank 0 passes a written checkpoint on by. */
void rt_hook_checkpoint(void *ud, int step, const char *path);

/* Resume (resume.c), before any thread starts: a process that rejoins must be one the job goes
 * on without; every process opens the checkpoint resume chose (rt->resumed), or checks that a
 * fresh run's checkpoint_path holds none of an earlier run's; the workers' state comes from it,
 * and it is dropped once the servers loaded their shards. */
int rt_rejoin_check(rt_ctx *rt, singa_err *err);
int rt_ckpt_setup(rt_ctx *rt, singa_job *job, singa_err *err);
int rt_load_worker_state(rt_ctx *rt, rt_worker *w, singa_err *err);
void rt_resume_drop(rt_ctx *rt);
/* A sharded job's worker in this process: the elements of a param it holds. */
typedef struct rt_held_by {
    rt_ctx *rt;
    const singa_parts *parts; /* its cut net, when linked to other processes; else NULL */
} rt_held_by;
/* Draws p's values where this process holds it: its workers' span (of a cut net, the elements
 * they compute) and its servers' slices, whose initial values it puts (stub.c); ud an rt_held_by. */
int rt_draw_held(void *ud, singa_param *p, singa_rng *rng, singa_err *err);

int rt_server_create(rt_ctx *rt, rt_server *s, int group, int id, singa_err *err);
/* Its slices and their updater state from the model resume chose (the params checked). */
int rt_server_load(rt_server *s, const singa_ckpt_set *set, singa_err *err);
void rt_server_free(rt_server *s);
singa_updater *rt_server_updater(rt_server *s);
/* Its history slots become views of the params' shared history (history.c). */
void rt_server_share_history(rt_server *s);
/* Asynchronous worker groups: this process's servers lower a kSGD or kNesterov momentum by what
 * stale gradients add (cluster.momentum_compensation), and the log says what they apply. */
void rt_momentum_setup(rt_ctx *rt);
void *rt_server_main(void *arg);
size_t rt_server_size(void);
rt_server *rt_server_at(rt_ctx *rt, int i);

/* Bounded staleness (staleness.c): the steps the groups finished, kept by each stub. */
typedef struct rt_bound rt_bound;
/* ngroups groups, none of which finished a step before `start` (NULL: out of memory). */
rt_bound *rt_bound_new(int ngroups, int start);
void rt_bound_free(rt_bound *b);
/* Group g finished `step` (INT_MAX: it ended or was lost); whether the floor rose. */
bool rt_bound_note(rt_bound *b, int g, int step);
/* The fewest steps any group finished (the last such step). */
int rt_bound_floor(const rt_bound *b);
int rt_bound_done(const rt_bound *b, int g);

int rt_stub_create(rt_ctx *rt, singa_err *err);
void rt_stub_free(rt_stub *s);
void *rt_stub_main(void *arg);


#endif

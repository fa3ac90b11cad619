/* The distributed runtime inside one process: a stub thread routing messages, a thread per
 * worker and per server, and what they share.  runtime.c builds and joins them, stub.c routes
 * and aggregates, server.c updates slices, worker.c trains. */
#ifndef SINGA_DIST_DIST_H
#define SINGA_DIST_DIST_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dist/msg.h"
#include "singa/checkpoint.h"
#include "singa/cluster.h"
#include "singa/job.h"
#include "singa/stats.h"
#include "singa/updater.h"
#include "train/train.h"

/* Trains `job` (whose cluster is distributed) in this process's part of the cluster. */
int singa_dist_run(singa_job *job, const singa_job_hooks *hooks, singa_result *res, singa_err *err);

/* A trained param's part held by one server of every server group.  Each server of a group owns
 * a contiguous, near-equal range of all the params laid end to end, so a small param lies on one
 * server and a large one may span several; a server's range of a param longer than 2 MB is cut
 * into slices of at most that (SLICE_MAX in runtime.c). */
typedef struct dist_slice {
    int param;          /* index among the distributed params */
    size_t offset, len; /* in floats, within the param */
    int server;         /* its server's index within a group */
} dist_slice;

/* A param the servers update: trained and not sharing another's value. */
typedef struct dist_param {
    const char *name, *layer;
    size_t size;
    float lr_scale, wd_scale;
    int first_slice, nslices;
    float *hist; /* the momentum history every worker writes into (history.c), or NULL */
} dist_param;
/* What the workers that write into the servers' history share (history.c); each param's
 * gradient GEMM is written in this many blocks of rows, in turns. */
enum { DIST_HISTORY_PARTS = 4 };
typedef struct dist_history {
    pthread_mutex_t lock;
    pthread_cond_t turn_changed;
    int *turn;              /* per param, per part: the worker whose turn it is to write */
    singa_tensor *lead_grad; /* per param: worker 0's own gradient, put back at the end */
    int nworkers;
    int nparams;            /* the params written so */
    float momentum;
    _Atomic float rate[2];  /* the rate of step s at [s & 1] */
} dist_history;

/* Which process this is (launch.c): rank and size from `--procs` or a launcher's environment,
 * and where rank 0 (the coordinator) listens. */
typedef struct dist_launch {
    int rank, size;
    const char *from; /* the variable the rank came from */
    char coordinator[256];
    const char *bind; /* the address the others listen on: cluster.bind, $SINGA_BIND or loopback */
} dist_launch;

int dist_launch_read(dist_launch *l, const singa_cluster *c, singa_err *err);

typedef struct dist_rt dist_rt;

typedef struct dist_worker {
    dist_rt *rt;
    int group, id;
    singa_job *job;
    singa_param **params; /* the job's distributed params, by index */
    bool *sent;           /* this step's update is on its way */
    void *sock;
    pthread_t thread;
    singa_job_hooks hooks; /* the runtime's, serialised */
    singa_result res;
    singa_err err;
    int rc;
    int step_sent;        /* the step whose updates are being sent */
    bool stopped;         /* by the stub, which needs no word back */
    double step_sent_at;  /* when a step's record last left for rank 0 (not in rank 0) */
    /* A data-parallel group's leader: the others' metrics of step_sent it still waits for, and
     * those that came before it began to (of the step it will wait for next). */
    int metrics_due;
    bool collecting;
    singa_metrics early;
    int nearly;
} dist_worker;

typedef struct dist_server dist_server;
typedef struct dist_stub dist_stub;

/* What every file of a distributed checkpoint records of the job that wrote it: a format
 * number, nworker_groups, nworkers_per_group, nserver_groups, nservers_per_group, the number of
 * slices, the values they hold and a digest of the params' names, sizes and slicing. */
enum { DIST_TOPOLOGY_LEN = 8 };

/* A file of the checkpoint resume chose, kept for one of this process's threads. */
typedef struct dist_resume_part {
    singa_ckpt_file f;
    singa_ckpt ck;
    char path[4096];
} dist_resume_part;

struct dist_rt {
    const singa_cluster *c;
    const singa_conf *conf;
    int rank, nprocs;
    /* The net is cut among the workers of each group (singa_job_cut): see dist_sends. */
    bool cut;
    dist_launch launch;
    uint64_t fingerprint;  /* of the job's configuration: every process must have the same */
    char plugins[1024];    /* the loaded plugins, which every process must have too */
    FILE *log;             /* <workspace>/rank<r>.log, or NULL */
    singa_result final;    /* rank 0's result, handed to the others at the end */
    void *zmq;
    char endpoint[64]; /* the stub's inproc address */
    dist_param *params;
    int nparams;
    dist_slice *slices;
    int nslices;
    /* The job singa_dist_run was given: its distributed params, by index, which hold the final
     * values at the end in every process (its result's params). */
    singa_param **final_params;
    /* Per worker group with workers here: its params' values, shared by those workers (the
     * first one's), by distributed param index; NULL for other groups. */
    singa_param ***replica;
    dist_worker *workers;
    int nworkers;
    dist_server *servers;
    int nservers;
    dist_stub *stub;
    const singa_job_hooks *hooks;
    atomic_int *stop_step; /* per worker group: the step its workers stop before (INT_MAX: none);
                            * see dist_stop_before */
    atomic_int ckpt_step;  /* the step a checkpoint the host asked for is written at (-1: none) */
    /* What steers this process's workers and servers: the host's (rank 0), or, in the other
     * ranks, rank 0's pause, stop and lr scale as its heartbeats tell (never a checkpoint). */
    singa_job_control *control;
    singa_job_control from_rank0;
    pthread_mutex_t lock; /* hooks and the first error */
    singa_err err;
    bool failed;
    singa_stats *stats;
    /* Checkpoints (runtime.c): checkpoint_path's first entry (NULL: none), checkpoint_keep, the
     * step every thread of every process starts from (0 for a fresh start; puts and gets carry
     * it, so processes that chose different checkpoints are found out), and what the threads
     * here load from the checkpoint resume chose (until they are built). */
    const char *ckpt_dir;
    int ckpt_keep;
    int resume_step;
    int64_t topology[DIST_TOPOLOGY_LEN];
    dist_resume_part *resumed;
    int nresumed;
    dist_history *history; /* NULL unless the workers write into the servers' history */
    /* What this process's heartbeats say of its threads (peers.c): how many workers and servers
     * are busy (neither waiting for a message nor ended), and a count of their steps forward
     * (messages taken, layers passed), so the others can tell a process stuck in a computation
     * (an endless loop in a kLua updater) from one that waits or works. */
    atomic_int busy;
    atomic_uint progress;
};
/* Sandblaster in one process with kSGD and momentum: the workers' backward passes write into the
 * servers' momentum history (history.c).  Setup decides and prepares it, after the servers. */
int dist_history_setup(dist_rt *rt, singa_err *err);
void dist_history_free(dist_rt *rt);
/* Before worker `id` writes part j of param k's gradient of `step`: waits for its turn, sets
 * alpha and beta. */
void dist_history_begin(dist_rt *rt, int k, int j, int id, int step, singa_param *p);
/* After it wrote it: the next worker's turn. */
void dist_history_pass(dist_rt *rt, int k, int j, int id);
/* A worker whose backward pass did not write param k: its turn, with a zero gradient. */
void dist_history_skip(dist_rt *rt, int k, int id);
/* A server applied a step: the rate of `step`, the next, for the workers' alpha. */
void dist_history_publish(dist_rt *rt, int step, float rate);

/* CURVE and its ZAP handler (curve.c), when the job has cluster.curve; without, *out is NULL
 * and the functions below do nothing. */
typedef struct dist_curve dist_curve;
int dist_curve_start(dist_rt *rt, dist_curve **out, singa_err *err);
void dist_curve_stop(dist_curve *c);
const char *dist_curve_public(const dist_curve *c); /* Z85; "-" without CURVE */
const char *dist_curve_coordinator(const dist_curve *c);
int dist_curve_server(const dist_curve *c, void *sock);
int dist_curve_client(const dist_curve *c, void *sock, const char *server_key);

/* The link to the other processes (peers.c), used by the stub only. */
typedef struct dist_peers dist_peers;
/* Listens, then meets the others at the coordinator (waiting at most join_timeout). */
int dist_peers_open(dist_rt *rt, dist_peers **out, singa_err *err);
void dist_peers_close(dist_peers *p);
/* Its ROUTER and a monitor of each connection to a peer, for the stub's zmq_poll (at most
 * nprocs items); returns how many.  After the poll, watch takes the events the monitors hold. */
int dist_peers_items(dist_peers *p, zmq_pollitem_t *items);
void dist_peers_watch(dist_peers *p, const zmq_pollitem_t *items);
const char *dist_peers_endpoint(const dist_peers *p, int rank);
bool dist_peers_dead(const dist_peers *p, int rank);
/* Sends to the stub of process `rank` (nothing to a dead one); payload may be NULL. */
void dist_peers_send(dist_peers *p, int rank, const msg *m, const void *payload, size_t nbytes);
/* One message from another process: 0, 1 when dropped (garbage, a stranger, a forgery), 2 for a
 * heartbeat, -1 when the socket fails. */
int dist_peers_recv(dist_peers *p, msg *m, zmq_msg_t *payload);
/* Sends heartbeats when due; returns the seconds until the next are due. */
double dist_peers_tick(dist_peers *p);
/* Why a process is lost: silent for longer than heartbeat_timeout; its connection closed and did
 * not come back (it died); busy without progress for heartbeat_timeout while this process waited
 * as long (it hung). */
typedef enum { DIST_LOST_SILENT, DIST_LOST_CLOSED, DIST_LOST_HUNG } dist_loss;
/* A process newly found lost (marked dead), and why, or -1. */
int dist_peers_lost(dist_peers *p, dist_loss *why);
double dist_now(void);

/* What a process holds, e.g. "workers 1.0-1.1; servers 0.0". */
void dist_role(const dist_rt *rt, int rank, char *buf, size_t len);
/* Hands rank 0's host a record (step: a step's, else a result), serialised with the other hooks. */
void dist_record(dist_rt *rt, const singa_record *r, bool step);
/* Every process says what it holds and where it listens (NULL: nowhere, it is alone). */
void dist_announce(dist_rt *rt, const char *endpoint);
/* A line for this process's log in the workspace (and rank 0's host). */
void dist_log(dist_rt *rt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Group g stops before `step` at the latest.  A worker that sees the host's stop before step s
 * picks s + 1 for its group in its process, which no worker of the group can have begun (each
 * needs its gradients of s first); its updates of s carry MSG_F_LAST, and the servers' replies
 * too, so the processes of the group stop at the earliest step any of them picked. */
void dist_stop_before(dist_rt *rt, int g, int step);
bool dist_last_step(const dist_rt *rt, int g, int step);

/* The host asked for a checkpoint (a job of one worker group): the lead, before step s, picks
 * s + 1, as for a stop, and its updates of s carry MSG_F_CKPT, so every worker writes its state
 * at the start of the same step, and the lead has the servers write their shards then. */
void dist_ckpt_at(dist_rt *rt, int step);
bool dist_ckpt_due(const dist_rt *rt, int step);

/* Records the first failure of any thread. */
void dist_fail(dist_rt *rt, const singa_err *err);
bool dist_failed(dist_rt *rt);
/* Where the runtime's threads live. */
int dist_worker_proc(const dist_rt *rt, int group, int id);
/* Whether worker (group, id) trains a job of its own and sends gradients: every worker, or, when
 * the net is cut among a group's workers, the first of the group in each process (its job computes
 * the parts of the others there, and its gradients are the process's part of the group's, which
 * the servers sum rather than average). */
bool dist_sends(const dist_rt *rt, int group, int id);
/* How many of a group's workers send gradients; the one that sends for worker `id`. */
int dist_senders(const dist_rt *rt, int group);
int dist_sender_of(const dist_rt *rt, int group, int id);
int dist_server_proc(const dist_rt *rt, int group, int id);
/* An identity on the stub's router: "w<group>.<id>", "s<group>.<id>". */
void dist_identity(char *buf, size_t len, int kind, int group, int id);
/* A worker's or server's socket to the stub, which it has greeted; NULL (the runtime failed,
 * err set) when it cannot be made. */
void *dist_connect(dist_rt *rt, int kind, int group, int id, singa_err *err);
/* Sends a message to the stub from a worker's or server's socket; payload may be NULL. */
int dist_send(void *sock, const msg *m, const void *payload, size_t nbytes);
/* A worker's or server's next message, as msg_recv; the thread counts as waiting meanwhile. */
int dist_recv(dist_rt *rt, void *sock, msg *m, zmq_msg_t *payload);

void *dist_worker_main(void *arg);
/* A worker whose net is cut among a group living in several processes: the bridges between them
 * become messages (before the worker's thread starts). */
int dist_worker_link(dist_worker *w, singa_err *err);

/* Writes c (entries added by the caller) as the file of thread (kind, group, id) of checkpoint
 * `step`, adding the topology and the thread's identity (entries "topology", and "shard" or
 * "worker": its group and id). */
int dist_ckpt_write(dist_rt *rt, singa_ckpt *c, int kind, int group, int id, singa_err *err);
/* Worker 0.0, after every server wrote its shard of a checkpoint: removes all but the newest
 * checkpoint_keep complete checkpoints (and nothing newer than the oldest of them). */
void dist_ckpt_prune(dist_rt *rt);
/* The file of thread (kind, group, id) in the checkpoint resume chose, or NULL (a fresh start). */
const dist_resume_part *dist_ckpt_resumed(const dist_rt *rt, int kind, int group, int id);

int dist_server_create(dist_rt *rt, dist_server *s, int group, int id, singa_err *err);
/* Its slices and their updater state from its shard of the checkpoint resume chose. */
int dist_server_load(dist_server *s, const dist_resume_part *part, singa_err *err);
void dist_server_free(dist_server *s);
singa_updater *dist_server_updater(dist_server *s);
/* Its history slots become views of the params' shared history (history.c). */
void dist_server_share_history(dist_server *s);
void *dist_server_main(void *arg);
size_t dist_server_size(void);
dist_server *dist_server_at(dist_rt *rt, int i);

int dist_stub_create(dist_rt *rt, singa_err *err);
void dist_stub_free(dist_stub *s);
void *dist_stub_main(void *arg);

/* Counts a message of `bytes` (0: none, only pending and wait change) on the row (type, peer). */
void dist_stats_count(singa_stats *s, const char *type, const char *peer, bool sent, size_t bytes, int pending,
                      double wait);
void dist_stats_drop(singa_stats *s);
void dist_stats_set_rank(singa_stats *s, int rank);
/* This process's own rows (what its heartbeats tell rank 0); returns how many were copied. */
int dist_stats_own(const singa_stats *s, singa_traffic *rows, int max);
/* Replaces process `rank`'s rows with these. */
void dist_stats_put(singa_stats *s, int rank, const singa_traffic *rows, int n);
void dist_stats_lost(singa_stats *s, int rank);

#endif

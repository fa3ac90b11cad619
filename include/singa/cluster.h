/* The cluster topology (SINGA's ClusterProto): worker groups and server groups, and which
 * process each worker and server lives in.  Workers of a group train synchronously on parts of
 * one batch; groups run asynchronously with each other; worker group g talks to server group
 * g / (nworker_groups / nserver_groups).  SINGA's placement: worker (g, j) lives in process
 * (g * nworkers_per_group + j) / nworkers_per_procs, server (g, j) in process
 * (g * nservers_per_group + j) / nservers_per_procs, after the worker processes when
 * server_worker_separate is set. */
#ifndef SINGA_CLUSTER_H
#define SINGA_CLUSTER_H

#include "singa/conf.h"

#pragma GCC visibility push(default) /* exported: libsinga is built hidden */

/* cluster.compress: how values travel between processes (never within one). */
typedef enum {
    SINGA_COMPRESS_NONE,
    SINGA_COMPRESS_FP16,
    SINGA_COMPRESS_BF16,
    SINGA_COMPRESS_TOPK,
    SINGA_COMPRESS_INT8, /* values only: the change since the last answer, 8 bits a value */
    SINGA_COMPRESS_POWERSGD, /* low-rank factors both ways; every replica applies the update itself */
    SINGA_COMPRESS_UPDATE /* values only (top-k): none come back but the summed update, which every
                           * replica applies itself */
} singa_compress_kind;
typedef struct singa_compress {
    singa_compress_kind kind;
    double topk;         /* SINGA_COMPRESS_TOPK: the share of each slice's values sent, in (0, 1] */
    bool error_feedback; /* top-k: the sender keeps what it did not send and adds it to the next */
    singa_compress_kind values; /* how the servers' values travel back: NONE (float32), FP16, BF16, INT8 or UPDATE */
} singa_compress;

/* cluster.shrink: SHARE (the default), the survivors also train the lost workers' rows, so the
 * global batch stays whole (runtime's reshare.c); BATCH, those rows are left out. */
typedef enum { SINGA_SHRINK_SHARE, SINGA_SHRINK_BATCH } singa_shrink;

typedef struct singa_cluster {
    int nworker_groups, nserver_groups;
    int nworkers_per_group, nservers_per_group;
    int nworkers_per_procs, nservers_per_procs;
    bool server_worker_separate, share_memory;
    int sync_freq;            /* server groups exchange a slice's updates after this many */
    const char *workspace;    /* where every process writes its log; NULL: none */
    const char *coordinator;  /* rank 0's address, "tcp://host:port"; NULL: from the launcher */
    const char *bind;         /* the interface processes listen on (NULL: $SINGA_BIND, else 127.0.0.1) */
    double heartbeat_timeout; /* seconds of silence after which a process is dead */
    double join_timeout;      /* seconds the processes have to meet at the coordinator */
    /* CURVE between processes (NULL: none): this process's secret key, the public keys allowed
     * in, the coordinator's public key (NULL: this process's own). */
    const char *curve_secret_key_file, *curve_public_keys_dir, *curve_coordinator_key_file;
    /* Each process of a worker group cut across processes holds only the elements of each param
     * its workers compute and its servers update, never the whole model. */
    bool shard_params;
    int nworker_procs, nserver_procs;
    int nprocs;               /* the processes the topology spreads its threads over */
    /* cluster.elastic (or `--elastic MIN`): a lost process ends the job restartably while at
     * least elastic_min remain (0: not elastic), and `--procs` restarts it max_restarts times. */
    int elastic_min, max_restarts;
    /* cluster.staleness: no worker group starts step t + staleness + 1 before every live group
     * has finished step t (-1: unbounded). */
    int staleness;
    singa_compress compress;
    /* compress SINGA_COMPRESS_POWERSGD: the rank of each 2-D gradient's factors, and the first
     * steps that go uncompressed. */
    int powersgd, powersgd_start;
    /* cluster.momentum_compensation (default true): the servers of asynchronous worker groups
     * lower a kSGD or kNesterov momentum by the momentum their stale gradients add (runtime's
     * momentum.c); no effect with one worker group. */
    bool momentum_compensation;
    /* cluster.outer (NULL: none): an updater's conf applied at every sync to the server groups'
     * averaged change since the last one (local SGD with an outer optimizer, runtime's
     * server_outer.c). */
    const singa_conf *outer;
    /* cluster.replicas (default 1): every server's slices and their updater state are held by
     * so many servers in different processes, the primary and its backups (runtime's replicas.c). */
    int replicas;
    /* cluster.shrink: what a synchronous group that outlives a lost worker trains (replicas >= 2). */
    singa_shrink shrink;
} singa_cluster;

/* Reads and checks `cluster` (NULL: one worker, one server); an impossible topology is refused
 * naming the rule it breaks.  An elastic job's topology is fitted to the number of processes
 * launched (singa_launch_rank) when that differs from its own. */
int singa_cluster_read(singa_cluster *c, const singa_conf *conf, singa_err *err);
/* The topology refitted to nprocs (> 1) processes, as an elastic job's restart does: threads
 * that were in every process are in every one, servers apart from the workers keep their
 * processes, and each kind keeps its number where it fills its processes evenly. */
int singa_cluster_fit(singa_cluster *c, int nprocs, singa_err *err);
/* More than the one worker and one server of a plain job. */
bool singa_cluster_distributed(const singa_cluster *c);
/* Where a thread lives when the job runs in `nprocs` processes: with one process every thread
 * lives in it (the embedded default); otherwise nprocs must equal c->nprocs. */
int singa_cluster_worker_proc(const singa_cluster *c, int group, int id, int nprocs);
int singa_cluster_server_proc(const singa_cluster *c, int group, int id, int nprocs);
int singa_cluster_server_group(const singa_cluster *c, int worker_group);

/* This process's rank and the job's number of processes, from `singa-tui --procs` (SINGA_RANK,
 * SINGA_SIZE) or a launcher (Open MPI, PMI, Slurm); 0 and 1 without one.  *from names the
 * variable the rank came from ("no launcher" without one). */
int singa_launch_rank(int *rank, int *size, const char **from, singa_err *err);
/* Which restart of an elastic job this process belongs to (`singa-tui --procs N --elastic MIN`
 * sets $SINGA_RESTART and $SINGA_RESTART_LOST): its number (0: the first run) and the ranks the
 * run before lost ("2", "1,2"; "" on the first run). */
int singa_launch_restart(int *restart, const char **lost, singa_err *err);

extern const singa_field singa_cluster_fields[];

#pragma GCC visibility pop

#endif

/* Every process's replica applies its group's aggregated update itself (replica_update.c), as
 * DDP does, so that what crosses between processes is the update's compressed form both ways
 * and never the values: cluster.compress = { powersgd = R }, or top-k with values = "update" (the
 * processes' pairs summed, and the pairs of the sum back), in a job of several processes.
 *
 * The servers still apply the same update to their slices with the job's updater, so their
 * shards (and so checkpoints, resharding, the final values and gets) are what they always were;
 * every replica applies it with an updater of its own, whose state is the servers' (resumed
 * from the same shards), to the same elements, with the rate the server sent: replicas and
 * servers stay equal bit for bit.  A slice whose server shares this process's memory (a server
 * here updating the values in place) is applied by that server alone.
 *
 * The stub (stub_replica.c) sends each slice's factors and takes the answers; the servers
 * (server_replica.c) sum, orthogonalise and apply; the state here (Q, the residuals, the
 * replica's updater) is per worker group with workers here and per slice (top-k's residuals are
 * residuals.c's, for every slice), and the group's first worker here checkpoints Q and the
 * residuals ("powersgd/q/<slice>", "powersgd/residual/<slice>"; a step's feedback, left to the
 * next step's first pass over M, is taken off first),
 * resumed when the topology is the same (else Q starts again from its seed and the residuals
 * from zero, which the log says). */
#ifndef SINGA_RUNTIME_REPLICA_UPDATE_H
#define SINGA_RUNTIME_REPLICA_UPDATE_H

#include "runtime/powersgd.h"
#include "runtime/runtime.h"

/* A slice's state in a process with workers of the group. */
typedef struct rt_replica_slice {
    rt_psgd_geom geom;  /* for the compressed steps */
    float *q;           /* LOWRANK: Q, cols x R */
    float *m;           /* LOWRANK: the padded matrix; with error feedback it keeps the residual */
    float *p;           /* LOWRANK: this process's P, then the servers' P-hat */
    float *qloc;        /* LOWRANK: this process's Q' */
    bool owes;          /* LOWRANK: M still holds P-hat qloc^T, the last feedback (rt_psgd_take_left's owed) */
    uint8_t flags;      /* the step flags of the update's first message, sent with the second */
    bool applies;       /* this process's replica takes the update here (not a server's memory) */
    int store;          /* its param in the group's store, when it applies */
} rt_replica_slice;

typedef struct rt_replica_group {
    rt_replica_slice *sl; /* per slice; NULL for a group with no worker here */
    singa_params store; /* one param per slice it applies, a view of the replica */
    singa_updater *upd;
} rt_replica_group;

struct rt_replica_update {
    int rank, start;
    bool feedback;
    rt_replica_group *groups; /* per worker group */
    float *scratch;        /* the stub's for rt_psgd_*: the largest (2 R + 1) x cols */
};

/* A slice's low-rank update P-hat Q'^T, and room to expand it: (R + 1) x cols floats. */
typedef struct rt_psgd_update {
    const float *phat, *q;
    const rt_psgd_geom *geom;
    float *scratch;
} rt_psgd_update;

/* The state for a job of several processes with powersgd (else rt->self_update stays NULL), from the
 * checkpoint resumed (before it is dropped); logs once each param too small for the rank. */
int rt_replica_setup(rt_ctx *rt, singa_err *err);
void rt_replica_free(rt_ctx *rt);
/* The largest frame of slice k's messages on this path (0 when the job takes another): an
 * update's pairs summed may outgrow the values', and so may a Q' that of a slice of few rows. */
size_t rt_replica_max_frame(const rt_ctx *rt, int k);
/* How slice k's update of `step` travels (float32 before powersgd_start). */
rt_psgd_geom rt_replica_mode_at(const rt_ctx *rt, int k, int step);
/* The replica of group g applies slice k's update of `step` with the server's scale and lr scale:
 * grad (the slice's elements), or with f its factors (grad then room for the slice, rt_replica_expand_apply's full). */
int rt_replica_apply(rt_ctx *rt, int g, int k, int step, float *grad, const rt_psgd_update *f, float scale,
                     float lr_scale, singa_err *err);
/* Updater upd's param `store` (a slice) takes f times scale, expanded row by row into the update
 * (each row's values once, while in cache), or for a kLua updater whole into full (the slice's n
 * floats): a server and the replicas alike, for the same bits. */
int rt_replica_expand_apply(singa_updater *upd, int store, int step, const rt_psgd_update *f, float scale, float *full,
                  singa_err *err);
/* Worker (group, id) adds Q and the residuals to its checkpoint file when it keeps them, and logs
 * a digest of the group's replica here (FNV-1a over its float32 bytes, param by param) in the
 * workspace's log. */
int rt_replica_add(rt_ctx *rt, int group, int id, singa_ckpt *c, singa_err *err);

#endif

/* What a server's files share (server.c updates its slices and answers, server_sync.c syncs
 * them between server groups, server_flush.c runs the final flush): its state, and how it
 * answers. */
#ifndef SINGA_RUNTIME_SERVER_H
#define SINGA_RUNTIME_SERVER_H

#include "runtime/runtime.h"

typedef enum { SYNC_IDLE, SYNC_OUT, SYNC_ANSWERED } srv_sync;
typedef enum { SRV_SERVING, SRV_FLUSHING, SRV_FLUSHED } srv_flush;

/* A worker group's contributions to the current step of a slice. */
typedef struct pending {
    int step, count;
    const float *direct; /* the only non-empty contribution so far, covering the slice: used in
                          * place (a worker's buffer, or a frame that completes the step) */
    bool summed;   /* contributions summed into `acc` */
    float *acc;    /* the group's own: groups' contributions to a slice interleave (Downpour) */
    uint8_t flags; /* MSG_F_STEP flags any contribution carried, for the answers */
    size_t (*span)[2]; /* per process: the elements its contribution covers, which it gets back */
    uint32_t acks; /* cluster.replicas: the backups (bit r: replica r) yet to ack the step before it is answered */
    uint32_t backed; /* cluster.replicas: the backups sent the step, which answer their own process */
    msg_loan lent; /* cluster.replicas: `acc` lent to the messages to the backups */
    uint64_t from; /* the processes whose contributions are in (bit p) */
} pending;

typedef struct srv_slice {
    int slice;          /* global index */
    int store;          /* its param in the server's store */
    float *data;
    int shared_group;   /* the worker group whose copy here `data` is, or -1 */
    msg_loan lent;      /* answers that lend `data` (rt_server.lend) */
    bool ready;         /* its values are in */
    bool loaded;        /* from a checkpoint: the put's values are not taken */
    int version;
    pending *pend;      /* per worker group served */
    msg_addr *asked;    /* the stubs whose GET waits for the values */
    int nasked;
    /* Server-group sync. */
    int since;          /* updates since the last delta left */
    float *last, *snap, *master;
    srv_sync sync;
    float *delta;       /* master: deltas received and not yet added */
    uint64_t delta_from; /* master: server groups to answer */
    uint64_t flushed_from; /* flush master: groups whose final delta is added */
    uint64_t fetch_asked; /* SINGA_REJOIN: the groups whose answer to fetch_newest is still due */
    float **base;       /* compress values = "int8": per process, what its workers hold (NULL until
                         * an exact answer of the whole slice) */
    /* cluster.outer (server_outer.c): `last` is the last synced values. */
    float **round_in[2];  /* per round's parity, per server group: its delta (NULL until one came) */
    uint64_t round_got[2]; /* the groups whose delta for the round of that parity is in */
    int round_open;       /* the round whose result this group's update waits for (0: none) */
    int round_group;      /* the worker group whose answer waits */
    bool round_final;     /* the open round is this group's last: it leaves the rounds after it */
    uint64_t round_left;  /* groups that left the rounds (trained their last step) */
    /* An update every replica applies itself (server_replica.c): the round's sum (and room for
     * the lr scale after it), a contribution, P-hat; the round's contributions, step, kind and
     * the flags its messages carried. */
    float *psum, *pin, *phat;
    int pcount, pstep;
    uint8_t pround, pflags;
} srv_slice;

struct rt_server {
    rt_ctx *rt;
    int group, id;
    bool backup;              /* a backup (cluster.replicas): id nservers_per_group on, replicas.c */
    bool took_over;           /* a backup that holds its primary's slices now (a synchronous group shrank) */
    singa_trace_buf *trace; /* this thread's, or NULL */
    int first_group, ngroups; /* the worker groups it serves */
    singa_params store;       /* one param per slice, for the updater */
    singa_updater *upd;
    singa_updater *outer;     /* cluster.outer's, over the same store (NULL: none) */
    float *round_sum;         /* cluster.outer: the deltas of a round summed, the longest slice's */
    uint8_t *round_packed;    /* cluster.outer: a delta encoded */
    srv_slice *sl;
    int nsl;
    int *local;               /* global slice -> index in sl, or -1 */
    bool lend;                /* answers lend the values rather than copy them (see answer) */
    void *sock;
    /* The final flush. */
    srv_flush flush;
    uint64_t flush_groups;    /* the groups taking part, from rank 0's first word */
    uint64_t flush_live;      /* those still alive: final deltas are awaited from them only */
    int last_step;            /* the job's last step (the host may stop a group before) */
    bool reader_done;         /* the worker group reading values in place trained its last step */
    int published;            /* the last step whose rate it handed the workers (history.c) */
    /* cluster.compress: an update from another process decoded, an answer to one encoded. */
    float *unpacked;
    uint8_t *packed;
};

static inline msg_addr srv_self(const rt_server *s)
{
    return (msg_addr){ENT_SERVER, (uint16_t)s->group, (uint16_t)s->id, (uint16_t)s->rt->rank};
}


/* Answers the stub of process p for group g: values [at, at + len) unless it reads this very
 * memory (server.c). */
void srv_answer(rt_server *s, srv_slice *x, int type, int g, int p, int version, size_t at, size_t len, uint8_t flags);
/* The values are in: every GET waiting for them is answered (server.c). */
void srv_serve_asked(rt_server *s, srv_slice *x);

/* Answers every process of worker group g with the slice's update (server.c). */
void srv_answer_update(rt_server *s, srv_slice *x, int g);

/* cluster.outer's rounds (server_outer.c): 1 when group g's update of `step` waits for a round,
 * whose end answers it. */
int srv_outer_sync(rt_server *s, srv_slice *x, int g, bool last, singa_err *err);
int srv_outer_on_sync(rt_server *s, srv_slice *x, const msg *m, zmq_msg_t *payload, singa_err *err);
int srv_outer_shard(rt_server *s, srv_slice *x, singa_ckpt *c, const char *param, singa_err *err);
int srv_outer_load(rt_server *s, srv_slice *x, const singa_ckpt_set *set, bool copy, singa_err *err);
void srv_outer_free(rt_server *s, srv_slice *x);
/* Whether m comes from a worker group this server serves (server.c). */
bool srv_from_group(const rt_server *s, const msg *m);
struct rt_psgd_update; /* replica_update.h */
/* Applies grad, the sum of a step's contributions (or with f the low-rank update f, grad then
 * room for the slice), to slice x with `scale` and the host's lr scale, which it returns in
 * *lr_scale (server.c). */
int srv_apply_grad(rt_server *s, srv_slice *x, int step, float *grad, const struct rt_psgd_update *f, float scale,
                   float *lr_scale, singa_err *err);
/* The same with the lr scale given (a backup applies its primary's). */
int srv_apply_grad_as(rt_server *s, srv_slice *x, int step, float *grad, const struct rt_psgd_update *f,
                      float scale, float lr, singa_err *err);
/* A message of an update every replica applies itself (MSG_F_APPLY): 0, 1 when dropped, -1 on
 * failure (server_replica.c). */
int srv_on_replica_update(rt_server *s, srv_slice *x, const msg *m, zmq_msg_t *payload, singa_err *err);

/* cluster.replicas (replicas.c).  A primary: slice x's values, as it starts from them, to its
 * backups; group g's step of x, the summed gradient with its scale and lr scale, to them before
 * it applies it (pend's acks count their answers). */
void srv_backup_values(rt_server *s, srv_slice *x);
void srv_backup_step(rt_server *s, srv_slice *x, int g, const float *grad, float scale, float lr);
/* The legs: a backup's (what its primary sends) and the primary's (a backup's ack, which may let
 * it answer the step). */
int srv_on_backup(rt_server *s, srv_slice *x, const msg *m, zmq_msg_t *payload, singa_err *err);
int srv_on_backup_ack(rt_server *s, srv_slice *x, const msg *m, zmq_msg_t *payload, singa_err *err);
/* Whether process p hears of group g's step of x from a backup there rather than from the
 * primary (srv_answer_update skips it). */
bool srv_backup_answers(const rt_server *s, const pending *pd, int p);
/* At the end: a digest of the slices' values and updater state in the log, the same in every
 * replica of a server. */
void srv_log_digest(rt_server *s);

/* Whether group g's step is in: every sender's contribution, or every live process's in a group
 * that shrank; then applies and answers it (server.c). */
bool srv_step_complete(const rt_server *s, int g, const pending *p);
int srv_finish_step(rt_server *s, srv_slice *x, int g, singa_err *err);
/* A holder that applied m's step already (a backup that took over): m's process gets the values
 * again (replicas.c). */
int srv_answer_again(rt_server *s, srv_slice *x, const msg *m);
/* A synchronous group went on without a lost process: a backup may hold its primary's slices now,
 * and a step may be in without it (replicas.c). */
int srv_on_shrink(rt_server *s, srv_slice *unused, const msg *m, zmq_msg_t *payload, singa_err *err);
/* A backup takes over its primary's slices when the holder map says so (replicas.c). */
void srv_take_over(rt_server *s);

/* Syncing server groups (server_sync.c). */
float *srv_copy_of(const float *src, float **dst, size_t n);
void srv_answer_deltas(rt_server *s, srv_slice *x, uint64_t groups);
int srv_sync_groups(rt_server *s, srv_slice *x);
void srv_fetch_newest(rt_server *s, srv_slice *x);
int srv_on_sync_msg(rt_server *s, srv_slice *x, const msg *m, zmq_msg_t *payload, singa_err *err);
int srv_on_lost_word(rt_server *s, srv_slice *unused, const msg *m, zmq_msg_t *payload, singa_err *err);

/* The final flush (server_flush.c). */
int srv_on_flush_word(rt_server *s, srv_slice *x, const msg *m, zmq_msg_t *payload, singa_err *err);
int srv_on_final_delta(rt_server *s, srv_slice *x, const msg *m, zmq_msg_t *payload, singa_err *err);

#endif

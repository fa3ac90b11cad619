/* What the stub's files share (stub.c routes and dispatches, stub_params.c puts, gets and
 * updates the params, stub_end.c ends the job, stub_loss.c meets losses and rejoins): its state,
 * its ways of sending, and the handlers of its table of legs (protocol.h) that live outside
 * stub.c. */
#ifndef SINGA_RUNTIME_STUB_H
#define SINGA_RUNTIME_STUB_H

#include "runtime/runtime.h"

typedef enum { END_TRAINING, END_FLUSHING, END_FETCHING } stub_end;
typedef enum { FETCH_NONE, FETCH_START, FETCH_TEST, FETCH_FINAL } stub_fetch;
/* Rank 0, per server: worker 0.0's checkpoint request passed on (ASKED) until the server's
 * answer, or the stub's own when the server's process is lost, goes back (IDLE). */
typedef enum { CKPT_IDLE, CKPT_ASKED } stub_ckpt;

/* What the stub keeps of a worker group with workers in this process. */
typedef struct stub_group {
    int nlocal;            /* its workers here; 0 for a group elsewhere */
    int server_group;      /* the server group that updates its params */
    int *arrived;          /* per param: local gradients summed this step */
    int *shares;           /* per param: the workers' rows they hold (a survivor's with a lost one's, reshare.c) */
    int *step;
    float **agg;           /* per param: the gradient the others are summed into */
    msg_loan *lent;        /* per param: agg's slices lent to ZeroMQ on their way to other processes */
    size_t (*span)[2];     /* per param: the elements its workers here compute (all, unless cut) */
    int *slices_left;      /* per param: slices whose update is not yet answered */
    bool *open;            /* per slice: its update left, its answer is not in */
    int gets_left;         /* slices to fetch before the group may train */
    stub_fetch fetch;      /* what they are for */
} stub_group;

struct rt_stub {
    rt_ctx *rt;
    singa_trace_buf *trace; /* this thread's, or NULL */
    void *router;
    rt_peers *peers;     /* the other processes, when there are any */
    stub_group *groups;
    int hellos, threads;   /* threads here, and how many said hello */
    int done;              /* workers here that finished training */
    bool *proc_done;       /* rank 0: processes whose workers are all done (or lost) */
    int procs_done;
    stub_end end;
    bool stop;
    /* The job ended well: the coordinator that hands this process its final values.  The others,
     * which have them already, may close first (over a slow link the values take a while). */
    bool ending;
    int ender;
    int byes_due;          /* the coordinator, after FINISHED: the live processes it has not reached */
    /* Rank 0, several server groups: the final flush. */
    uint64_t *flush_live;  /* per server id: the server groups taking part and not lost */
    bool *flush_wait;      /* per server (group * nservers_per_group + id): its report is awaited */
    int flush_left;
    int *fetch_from;       /* per slice: the server group its final values come from, -1 once in */
    /* Rank 0: the checkpoint worker 0.0 waits for, and each server's part (group * per + id). */
    int ckpt_step;
    uint8_t *ckpt;         /* stub_ckpt */
    rt_bound *bound;       /* cluster.staleness: the steps the groups finished (NULL: unbounded) */
    /* cluster.compress: an update to another process encoded, an answer from one decoded. */
    float *unpacked;
    uint8_t *packed;
    /* checkpoint_freq and checkpoint_after (as the jobs here read them), copied at the start so
     * an update's flags consult no job; freq 0 without a worker here. */
    int ckpt_freq, ckpt_after;
};

static inline msg_addr stub_addr(const rt_stub *s, int group)
{
    return (msg_addr){ENT_STUB, (uint16_t)group, 0, (uint16_t)s->rt->rank};
}

/* Routing (stub.c). */
msg_addr stub_server_addr(const rt_ctx *rt, int group, int id);
/* Sends m where it is addressed: a thread here, or the stub of its process. */
void stub_route(rt_stub *s, const msg *m, const void *payload, size_t nbytes);
/* Sends m to every local worker of group g; to every server here; to every other process's stub. */
void stub_to_workers(rt_stub *s, int g, msg m);
void stub_to_servers(rt_stub *s, msg m, const void *payload, size_t nbytes);
void stub_to_peers(rt_stub *s, msg m, const void *payload, size_t nbytes);
/* Stops every thread here (why: the failure, or NULL at a good end), and this stub ... */
void stub_stop_all(rt_stub *s, const char *why);
/* ... or the threads alone. */
void stub_stop_threads(rt_stub *s, const char *why);
/* A failure here ends the job everywhere, each process naming where it began. */
void stub_fail_everywhere(rt_stub *s, const singa_err *e, bool lost);
/* Group g finished `step` (INT_MAX: it left the bound); the workers here hear when the floor rises. */
void stub_bound_note(rt_stub *s, int g, int step);

/* The params' traffic (stub_params.c). */
float *stub_replica_at(rt_ctx *rt, int g, const rt_slice *sl);
void stub_get_all(rt_stub *s, int g, stub_fetch why);
void stub_start(rt_stub *s);
void stub_on_worker_update(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote);
/* Group g's update of slice idx (its sum of this step here), to the slice's holder (stub_params.c). */
void stub_send_update(rt_stub *s, int g, int idx);
/* Whether the job goes on without lost process r (cluster.replicas, a synchronous group), and
 * then how: the holders, the threads told, the updates and checkpoint requests sent again
 * (membership.c). */
bool stub_may_shrink(const rt_stub *s, int r);
void stub_shrink(rt_stub *s, int r, const char *why);
/* What a synchronous group is now, for the log and the Topology panel: "workers 0.0, 0.1[ (note)];
 * servers 0.0 in rank 0, ..., 0.2 in rank 0 (its backup)". */
void rt_group_describe(const rt_ctx *rt, const char *note, char *buf, size_t len);
/* Whether the processes left after losing r (for `why`) may go on: else e says why not (takeover.c). */
bool stub_majority_left(const rt_stub *s, int r, rt_loss why, singa_err *e);
/* The coordinator, rank `was`, was lost and the group goes on: the next takes over (takeover.c). */
void stub_take_over(rt_stub *s, int was);
/* The coordinator's leader's final values, to the script's params when they are not its (takeover.c). */
void stub_final_here(rt_stub *s);
void stub_on_recorded(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote);
static inline msg_addr stub_lead_addr(const rt_ctx *rt)
{
    int id = rt_lead_id(rt, 0);
    return (msg_addr){ENT_WORKER, 0, (uint16_t)id, (uint16_t)rt_worker_proc(rt, 0, id)};
}
void stub_on_update_reply(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote);
void stub_on_get_reply(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote);

/* An update every replica applies itself (stub_replica.c): group g's summed gradient `agg` of
 * param k leaves, each slice's first message with the step's flags; a server's answer: -1 when
 * it does not fit (dropped), 0 when another round follows, 1 when the slice is updated here. */
void stub_replica_send(rt_stub *s, int g, int param, const float *agg, int step, uint8_t flags);
int stub_replica_reply(rt_stub *s, int g, const msg *m, zmq_msg_t *payload);

/* The end of the job (stub_end.c). */
bool stub_proc_lost(const rt_stub *s, int r);
void stub_flush_lost(rt_stub *s, int r);
void stub_proc_done(rt_stub *s, int r);
void stub_local_done(rt_stub *s);
void stub_on_flush_report(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote);
void stub_on_worker_done(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote);
void stub_on_proc_done(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote);
void stub_on_finished(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote);
void stub_on_final_values(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote);
void stub_on_bye(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote);

/* Losses and rejoins (stub_loss.c). */
void stub_ckpt_lost(rt_stub *s, int i);
void stub_on_lost(rt_stub *s, int r, rt_loss why);
void stub_on_rejoin(rt_stub *s);

#endif

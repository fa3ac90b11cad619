/* Messages of the runtime (SINGA's Msg): a fixed 56-byte header frame, then an optional payload
 * frame.  Between threads of one process a message may instead carry the address of a buffer both
 * sides share (`ptr`); such a message from another process is a forgery and is dropped, as is
 * anything that does not decode.
 *
 * A payload is copied into its frame unless the sender says otherwise: a frame it received can
 * be passed on as it is (`frame`), and a buffer it will not write until ZeroMQ is done with it
 * can be lent (`loan`), ZeroMQ then reading the buffer itself.
 *
 * The message types.  "W" a worker, "S" a server, "stub" a process's router, "0" rank 0's stub,
 * "W0.0" worker 0.0 (always in rank 0); "->" within a process, "=>" to another process (through
 * both stubs).  Beside the addresses, the flags and `step`, a header carries the fields listed
 * (msg_types: one slot of the wire, decoded into the field the type gives it); "floats" are the
 * float32 values [offset, offset + len) of a slice.
 *
 *   type             from, to                   fields         payload
 *   hello            W, S -> stub               -              -
 *   put              stub -> S, => S            slice          ptr here, floats there
 *   get              stub -> S, => S            slice          -
 *                    W0.0 -> stub (a test)      -              -
 *   update           W -> stub                  param          ptr to its gradient
 *                    stub -> S, => S            slice, count   ptr here, floats there
 *   sync             S -> S, => S               slice          floats: a delta, to the master
 *   sync-reply       S -> S, => S               slice          floats: the master's values
 *   get-reply        S -> stub, => stub         slice          floats, or none: in place
 *   update-reply     S -> stub, => stub         slice          floats, or none: in place
 *                    stub -> W                  param          -
 *   ready            stub -> W                  -              -
 *   done             W -> stub; stub => 0       -              -
 *   finished         W0.0 -> stub; 0 => stub    -              msg_result
 *   stop             stub -> W, S; stub => stub lost           text: why (none: a good end)
 *   abort            W, S, stub -> stub         -              text: why
 *   metric           W => 0                     of_step        msg_record
 *   join             stub => 0                  -              text (peers.c)
 *   peers            0 => stub                  -              text (peers.c)
 *   heartbeat        stub => stub               -              msg_heartbeat
 *   flush            0 -> S, => S               -              flush mask (below)
 *                    S -> S, => S               slice          floats: a final delta
 *                    S -> stub, => 0            -              - (a report)
 *   checkpoint       W0.0 -> stub -> S, => S    -              -
 *                    W0.0 -> stub; 0 => stub    -              - (the host's, several groups)
 *   checkpoint-reply S -> stub, => 0 -> W0.0    server, lost   -
 *   bridge           W => W                     layer          floats: features (+ aux)
 *   bridge-grad      W => W                     layer, edge    floats: a gradient (+ aux)
 *   bridge-metrics   W => W                     -              msg_metrics
 *   bridge-profile   W => W0.0                  -              doubles: its layers' times
 *   worker-metrics   W -> W, => W               -              msg_metrics, to its leader
 *   final-values     0 => stub                  slice          floats: the whole slice
 *   group-step       W -> stub => stub          -              - (src.group finished `step`)
 *                    stub -> W                  -              - (every live group finished `step`)
 *   lost             stub -> S                  -              - (a process rejoined: one more is lost)
 *   backup           S => S (primary to backup) slice, count   floats: a step's summed gradient, its
 *                                                              scale and lr scale; MSG_F_EXACT: the
 *                                                              slice's values (count: worker group)
 *   backup-ack       S => S (backup to primary) slice, count   - (received, applied before anything
 *                                                              else: the primary may answer)
 *   shrink           stub -> W, S                count          - (the synchronous group goes on
 *                                                              without process `count`)
 *   grow             0 => stub                   count          int32s: each server's holder id
 *                                                              (process `count` rejoins from `step`)
 *   worker-state     W0.0 => W                   -              a checkpoint file: its state of `step`
 *
 * Who may send each to the stub, and what it checks, is the stub's table (protocol.h). */
#ifndef SINGA_RUNTIME_MSG_H
#define SINGA_RUNTIME_MSG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zmq.h>

#include "singa/metrics.h"
#include "singa/stats.h"

typedef enum {
    MSG_HELLO = 1,  /* a thread to its stub: connected */
    MSG_PUT,        /* a slice's initial values, to its server */
    MSG_GET,        /* a slice's values, once the server has them */
    MSG_UPDATE,     /* gradients of a slice (to a server) or of a param (worker to stub) */
    MSG_SYNC,       /* a slice's delta since the last sync, to its master server group */
    MSG_GET_REPLY,
    MSG_UPDATE_REPLY, /* the slice (param) is updated to version `step` */
    MSG_SYNC_REPLY, /* the master's values */
    MSG_READY,      /* stub to worker: params in place, train */
    MSG_DONE,       /* worker to stub: trained; stub to coordinator: its workers are done */
    MSG_FINISHED,   /* worker 0.0 to stub: its final test is done, everyone may stop */
    MSG_STOP,       /* stop now; the payload says why when it is an error */
    MSG_ABORT,      /* a thread failed; the payload is the message */
    MSG_METRIC,     /* a group leader's record in another process, to rank 0's stub */
    MSG_JOIN,       /* a process to the coordinator: its rank, endpoint and job fingerprint */
    MSG_PEERS,      /* the coordinator to every process: all endpoints */
    MSG_HEARTBEAT,
    MSG_FLUSH,      /* the final flush of server groups (Hogwild), by direction: see below */
    MSG_CKPT,       /* worker 0.0 to a server: write your shard of checkpoint `step` */
    MSG_CKPT_REPLY, /* a server to worker 0.0: written; or rank 0's stub: `lost` before it wrote */
    /* Between the parts of a worker group's net in different processes (net/parts.h), worker to
     * worker: pass `step`'s features of `layer`; the gradient of its source `edge`; and the
     * metrics of a forward pass, for location 0's part. */
    MSG_BRIDGE,
    MSG_BRIDGE_GRAD,
    MSG_BRIDGE_METRICS,
    MSG_BRIDGE_PROFILE, /* at the end: its layers' times (singa_parts_profile_get), for r.profile */
    MSG_WORKER_METRICS, /* a worker's metrics of step `step` (its rows of the batch), to its group's leader */
    MSG_FINAL_VALUES,   /* rank 0's stub to the others before the end: a slice's final values */
    MSG_GROUP_STEP,     /* cluster.staleness: a group finished `step`; stub to worker: the floor */
    MSG_LOST,           /* stub to its servers, in a process that rejoined: another process is lost */
    MSG_BACKUP,         /* cluster.replicas: a primary server to a backup, what it applies (replicas.c) */
    MSG_BACKUP_ACK,     /* the backup has it (and applies it before anything else) */
    MSG_SHRINK,         /* stub to its threads: the group goes on without a lost process (membership.c) */
    MSG_GROW,           /* rank 0 to every stub: process `count` rejoins from `step`; each server's holder (rejoin_sync.c) */
    MSG_WORKER_STATE,   /* rank 0's worker 0.0 to a rejoined worker: its state of `step` (a checkpoint file) */
    MSG_RECORDED,       /* the coordinator's leader to the other stubs: it reports `step`'s record now (takeover.c) */
    MSG_BYE,            /* a stub to the coordinator: the job's end (FINISHED) reached it, so the coordinator may close */
    MSG_NTYPES
} msg_type;

typedef enum { ENT_STUB, ENT_WORKER, ENT_SERVER } msg_entity;

typedef struct msg_addr {
    uint8_t kind;           /* msg_entity */
    uint16_t group, id, proc;
} msg_addr;

enum { MSG_HEADER_BYTES = 56, MSG_MAGIC = 0x31474e53 /* "SNG1" */ };
/* MSG_F_LAST: an update of the last step its group trains (the host stopped it), and the
 * replies to it, so every process of a group stops at the same step.  MSG_F_CKPT: likewise, the
 * host asked for a checkpoint at the start of the next step (rt_ckpt_at).  A server passes on in
 * its answers the ones any contribution carried (MSG_F_STEP). */
/* MSG_F_PACKED: the values are encoded as cluster.compress says (runtime/compress.h).
 * MSG_F_EXACT: an update whose answer starts a step with a checkpoint: the values go back whole,
 * whatever cluster.compress says, so that a resume from it goes on as the run did. */
/* MSG_F_APPLY (replica_update.h): an update whose answer every replica applies itself, and its
 * answers; their `offset` says which round (msg_round): MSG_ROUND_P, this process's P (the
 * answer: the servers' P-hat), MSG_ROUND_Q, its Q' (the answer: the summed Q' and the rate's
 * scale), MSG_ROUND_SUM a gradient to add up, float32, or (MSG_F_PACKED) fp16 or top-k's pairs
 * (the answer: the sum, or its pairs, and the scale). */
enum { MSG_F_VALUES = 1, MSG_F_PTR = 2, MSG_F_LAST = 4, MSG_F_CKPT = 8, MSG_F_STEP = MSG_F_LAST | MSG_F_CKPT,
       MSG_F_PACKED = 16, MSG_F_EXACT = 32, MSG_F_APPLY = 64 };
typedef enum { MSG_ROUND_SUM, MSG_ROUND_P, MSG_ROUND_Q } msg_round;

/* A buffer lent to ZeroMQ: how many frames sent from it ZeroMQ still holds.  Zeroed memory is a
 * loan with nothing out. */
typedef struct msg_loan {
    atomic_int out;
} msg_loan;

typedef struct msg {
    uint8_t type, flags;
    msg_addr src, dst;
    int32_t step;    /* the step of an update or a checkpoint, the version of a reply, a bridge's pass */
    /* The header's index slot, one meaning per field: a type carries one of them (msg_types),
     * the others are 0. */
    int32_t slice;   /* a slice, on the servers' leg */
    int32_t param;   /* a param, on a worker's leg of an update and its reply */
    int32_t server;  /* checkpoint-reply: the server's index, group * nservers_per_group + id */
    int32_t layer;   /* bridge, bridge-grad: the layer whose features or gradient */
    /* The header's count slot, likewise. */
    uint32_t count;  /* update to a server: gradient contributions summed into it */
    int32_t edge;    /* bridge-grad: the source of the layer whose gradient it is */
    bool lost;       /* checkpoint-reply: rank 0's stub answers for a server lost before it wrote;
                      * stop: the job ends because a process was lost */
    bool of_step;    /* metric: a step's record (else a result's) */
    uint64_t ptr;    /* MSG_F_PTR: a buffer of this process */
    /* A slice's elements [offset, offset + len): those an update to a server carries (the rest
     * of its gradient is zero: a process of a cut group sends what its workers compute), and
     * those a reply's values are. */
    uint64_t offset, len;
    /* Not on the wire: how msg_send sends the payload (both NULL: a copy). */
    zmq_msg_t *frame; /* the payload's own frame, received earlier: moved, not copied */
    msg_loan *loan;   /* the payload is lent: counted here until ZeroMQ is done with it */
} msg;

/* What a type's header carries in its index and count slots, for msg_encode and msg_decode. */
typedef enum { MSG_IX_NONE, MSG_IX_SLICE, MSG_IX_LEG, MSG_IX_SERVER, MSG_IX_LAYER } msg_index;
typedef enum { MSG_ARG_NONE, MSG_ARG_COUNT, MSG_ARG_EDGE, MSG_ARG_LOST, MSG_ARG_OF_STEP } msg_arg;

typedef struct msg_kind {
    const char *name; /* in the traffic table */
    uint8_t index;    /* msg_index; MSG_IX_LEG: `param` when a worker is an end, else `slice` */
    uint8_t arg;      /* msg_arg */
} msg_kind;

extern const msg_kind msg_types[MSG_NTYPES];

/* The final flush (several server groups, once every worker is done; stub_end.c and server_flush.c):
 * - rank 0's stub to a server: flush now; the payload is the MSG_FLUSH_MASK_BYTES mask of the
 *   server groups taking part (those not lost; bit g for group g) among this server's peers of
 *   the same id.  A later one only narrows the mask: a group was lost during the flush.
 * - a server to a slice's flush master (msg_flush_master): the slice's final delta, as values.
 * - a server to rank 0's stub: every final delta it waits for is in, and it sent its own. */
enum { MSG_FLUSH_MASK_BYTES = 8 };

static inline void msg_flush_mask_encode(uint64_t mask, uint8_t out[MSG_FLUSH_MASK_BYTES])
{
    for (int i = 0; i < MSG_FLUSH_MASK_BYTES; i++)
        out[i] = (uint8_t)(mask >> 8 * i);
}

static inline uint64_t msg_flush_mask_decode(const uint8_t in[MSG_FLUSH_MASK_BYTES])
{
    uint64_t mask = 0;
    for (int i = 0; i < MSG_FLUSH_MASK_BYTES; i++)
        mask |= (uint64_t)in[i] << 8 * i;
    return mask;
}

/* The server group that gathers a slice's final deltas: its master when it takes part, else the
 * lowest group that does (a stand-in, for a master lost with its process). */
static inline int msg_flush_master(int slice, int nserver_groups, uint64_t groups)
{
    int master = slice % nserver_groups;
    if ((groups >> master & 1) || !groups)
        return master;
    return __builtin_ctzll(groups);
}

const char *msg_type_name(int type);
void msg_encode(const msg *m, uint8_t out[MSG_HEADER_BYTES]);
/* Fails on a wrong size, magic, type or entity. */
int msg_decode(msg *m, const void *buf, size_t len);

/* Sends [identity] header [payload]; the payload (may be NULL) is copied, unless m->frame is set
 * (then payload and nbytes are its data and size, and the frame is sent: it is left empty, or
 * untouched when the send fails, and the caller closes it either way) or m->loan is set (then
 * the caller must not write the payload until msg_loan_wait on that loan returns).  Never
 * blocks: the runtime's sockets have no high-water mark, so a send fails only when nobody is
 * there. */
int msg_send(void *sock, const char *identity, const msg *m, const void *payload, size_t nbytes);
/* Returns once ZeroMQ holds no frame lent from `loan` (at once when none is out). */
void msg_loan_wait(msg_loan *loan);
/* Receives one message: the identity frame when `router`, the header, and the payload into
 * `payload` (initialised here; the caller closes it).  Returns 0, 1 for a malformed message
 * (drained and dropped), -1 when the socket fails (ETERM ...); a signal is no failure. */
int msg_recv(void *sock, bool router, char *identity, size_t idlen, msg *m, zmq_msg_t *payload);

/* The final result of the job, which rank 0 hands every other process (their scripts see what
 * rank 0's sees). */
typedef struct singa_result singa_result;
enum { MSG_METRICS_MAX = 1 + SINGA_METRICS_MAX * (SINGA_METRIC_NAME + 16) };
size_t msg_metrics_encode(const singa_metrics *m, uint8_t out[MSG_METRICS_MAX]);
int msg_metrics_decode(singa_metrics *m, const void *buf, size_t len);

enum { MSG_RESULT_MAX = 13 + 3 * MSG_METRICS_MAX };
size_t msg_result_encode(const singa_result *r, uint8_t out[MSG_RESULT_MAX]);
int msg_result_decode(singa_result *r, const void *buf, size_t len);

/* A group leader's record (a display, a test) in another process, for rank 0's host. */
typedef struct singa_record singa_record;
enum { MSG_RECORD_MAX = 48 + MSG_METRICS_MAX };
size_t msg_record_encode(const singa_record *r, uint8_t out[MSG_RECORD_MAX]);
/* The record's metrics go to *metrics, which r points to. */
int msg_record_decode(singa_record *r, singa_metrics *metrics, const void *buf, size_t len);

/* Another process's traffic rows, which its heartbeats carry to rank 0. */
enum { MSG_TRAFFIC_ROW = 24 + 24 + 6 * 8 };

/* A worker's step times (singa_worker_time without its rank and what follows from the rest). */
enum { MSG_WORKER_ROW = 2 + 2 + 32 + 8 + 4 + 4 * 8 };

/* A heartbeat (peers.c): the sender's progress and whether its workers and servers are busy;
 * then, from rank 0, its host's controls, or, to rank 0, at most MSG_HEARTBEAT_ROWS of the
 * sender's traffic rows (their count first) and at most MSG_HEARTBEAT_WORKERS of its workers'
 * step times. */
enum { MSG_HEARTBEAT_ROWS = 64, MSG_HEARTBEAT_WORKERS = 32,
       MSG_HEARTBEAT_MAX = 5 + 2 + MSG_HEARTBEAT_ROWS * MSG_TRAFFIC_ROW + MSG_HEARTBEAT_WORKERS * MSG_WORKER_ROW };
typedef enum { MSG_BEAT_LIFE, MSG_BEAT_CONTROL, MSG_BEAT_TRAFFIC } msg_beat;
typedef struct msg_heartbeat {
    uint32_t progress;
    bool busy;
    msg_beat carries;
    bool pause, stop;  /* MSG_BEAT_CONTROL */
    double lr_scale;
    int nrows;         /* MSG_BEAT_TRAFFIC */
    singa_traffic rows[MSG_HEARTBEAT_ROWS];
    int nworkers;
    singa_worker_time workers[MSG_HEARTBEAT_WORKERS];
} msg_heartbeat;
size_t msg_heartbeat_encode(const msg_heartbeat *h, uint8_t out[MSG_HEARTBEAT_MAX]);
/* 0; -1 when even its life part is malformed; -2 when only what follows it is (h->progress and
 * h->busy are set).  Only rank 0's carry controls. */
int msg_heartbeat_decode(msg_heartbeat *h, const void *buf, size_t len, bool from_rank0);
size_t msg_traffic_encode(const singa_traffic *rows, int n, uint8_t *out);
/* At most max rows; -1 for anything that is not whole rows. */
int msg_traffic_decode(const void *buf, size_t len, singa_traffic *rows, int max);

#endif

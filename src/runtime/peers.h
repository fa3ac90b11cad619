/* What the stub's link to the other processes keeps (peers.c meets them and carries messages,
 * peers_live.c sends heartbeats and finds a process lost). */
#ifndef SINGA_RUNTIME_PEERS_H
#define SINGA_RUNTIME_PEERS_H

#include "runtime/runtime.h"

typedef char endpoint[128];
typedef char key[41];
typedef char ident[32];

struct rt_peers {
    rt_ctx *rt;
    rt_curve *curve;   /* NULL without cluster.curve */
    void *router;
    void **dealer;       /* per rank: to its ROUTER (NULL for this process) */
    endpoint *endpoints; /* per rank */
    key *keys;           /* per rank: its CURVE public key ("-" without CURVE) */
    ident *ids;          /* per rank: its DEALERs' routing id, "p<rank>", or "p<rank>-<pid>" once it
                          * rejoined, so nothing its lost incarnation sent passes for the new one's */
    double *seen;        /* per rank: when its last message came */
    unsigned *progress;  /* per rank: its progress, as its last heartbeat said */
    double *still;       /* per rank: since when it is busy without progress (0: it is not) */
    double idle;         /* since when this process waits without progress (0: it does not) */
    unsigned own;        /* its progress then */
    void **monitor;      /* per rank: its DEALER's events (NULL for this process) */
    double *closed;      /* per rank: since when its connection is closed (0: open) */
    bool *dead;
    bool *hung;          /* per rank: dead as hung, and told so (its stop must get out) */
    bool *gone;          /* per rank: lost before this process rejoined, as rank 0's list said */
    double next_beat;
    unsigned connections; /* made so far: each monitor's inproc address is new */
    int joining;          /* rank 0: the rank whose rejoin the stub decides on (rt_peers_recv: 3) */
    int joining_step;
};

/* Process r's heartbeat (peers_live.c), from rt_peers_recv: 2, or 1 when dropped. */
int peers_take_beat(rt_peers *p, int r, zmq_msg_t *payload);

#endif

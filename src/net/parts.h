/* A partitioned net run by the workers of a group (singa_net_create_parts): each location's
 * net is computed by its own thread, the lead's (the first here, location 0 unless placed
 * otherwise) by the caller of singa_net_forward and singa_net_backward, which hand every pass to
 * the others and return when all are done.  Threads wait only where a bridge crosses between
 * locations: a kBridgeDst for its source's features, a kBridgeSrc for its destination's gradient.
 *
 * A group whose workers live in several processes is placed (singa_parts_place): every process
 * builds every location's net but computes its own, and a remote (singa_parts_remote, which the
 * runtime implements: runtime/bridge.c) carries the blobs of the bridges between processes.  The
 * others' nets then stand in for them: a remote kBridgeSrc's data is where its features arrive,
 * a remote kBridgeDst's source's gradient what it sends back.
 *
 * Pipelined (neuralnet.micro_batches = m > 1, singa_net_create_pipeline): every location has m
 * copies of its net, each reading one micro-batch of the step's batch (its input layers read
 * rows [j B / m, (j + 1) B / m) of every batch) and sharing the params.  A step runs each
 * location's forwards and backwards of the micro-batches in a 1F1B schedule (pipeline.c), the
 * gradients added up over them and scaled so the step equals one pass over the whole batch. */
#ifndef SINGA_NET_PARTS_H
#define SINGA_NET_PARTS_H

#include "singa/net.h"
#include "singa/partition.h"

typedef struct singa_parts singa_parts;

/* Starts a thread for each of locations 1..n-1 and links the nets to one another: nets holds m
 * copies of the n locations' nets, copy j of location k at [j * n + k]; on success the parts own
 * nets[1..] and the array (singa_net_free of nets[0] frees them). */
int singa_parts_start(singa_net **nets, int n, int m, singa_err *err);
/* singa_net_create_parts with m micro-batches per step (m = 1: not pipelined). */
int singa_net_create_pipeline(singa_net **out, const singa_graph *g, int m, const singa_registry *reg,
                              singa_params *params, singa_rng *rng, uint64_t seed, const singa_net_split *split,
                              singa_err *err);
/* Orders a location's layers to send early and receive late (parts_order.c); nets: one copy. */
int singa_parts_order(singa_net **nets, int n, singa_net *net);
void singa_parts_free(singa_parts *pp);
int singa_parts_batchsize(const singa_parts *pp);
/* From any thread: the job stops; a pass under way, and every later one, fails with `why`. */
void singa_parts_abort(singa_parts *pp, const char *why);

/* One forward or backward pass of every location (the lead's call); pipelined, of every
 * micro-batch. */
int singa_parts_pass(singa_parts *pp, bool backward, singa_err *err);
/* A training step's forward and backward passes: pipelined, one 1F1B pass. */
int singa_parts_step(singa_parts *pp, singa_err *err);
int singa_parts_micro_batches(const singa_parts *pp);
/* Pipelined: the seconds location k's schedule took in the last pass, its waits included. */
double singa_parts_stage_seconds(const singa_parts *pp, int location);
/* bp.c's step: singa_net_forward then singa_net_backward, as one pass when pipelined. */
int singa_net_forward_backward(singa_net *net, singa_err *err);
/* Checks that the graph can be trained in m micro-batches by `workers` groups' workers that
 * split the batch (singa_net_create_pipeline does); errors name the field and the culprit. */
int singa_pipeline_check(const singa_graph *g, int m, int workers, singa_err *err);
/* Within a pass: before layer i of net computes, waits for what it needs from other locations
 * (-1 when another location failed); after, tells the locations waiting for it. */
int singa_parts_wait(singa_parts *pp, const singa_net *net, int i, bool backward, singa_err *err);
void singa_parts_signal(singa_parts *pp, const singa_net *net, int i, bool backward);

/* net.c's loops, which the parts run at every location. */
int singa_net_forward_layers(singa_net *net, singa_err *err);
void singa_net_backward_begin(singa_net *net);
int singa_net_backward_layers(singa_net *net, singa_err *err);

/* ---- for the runtime's half (runtime/bridge.c) ---- */

/* What the parts ask of the runtime.  Layers are numbered x = 0 .. singa_parts_nlayers - 1,
 * location by location (pipelined: micro-batch copy by copy, each location by location, so a
 * copy's blobs are messages of their own).  `begin` and `waiting` are called holding the parts'
 * lock; the others without it. */
typedef struct singa_parts_remote {
    void *ud;
    void (*free)(void *ud); /* with the parts */
    /* Placed only: whether layer x's blob goes to another process (forward its features,
     * backward its sources' gradients), and, in the lead's thread, sending that of pass `pass`. */
    bool (*sends)(void *ud, int x, bool backward);
    int (*send)(void *ud, int x, bool backward, long pass, singa_err *err);
    /* As pass `pass` begins: puts what came for it before it began (singa_parts_done). */
    void (*begin)(void *ud, long pass);
    /* Whether forward pass `pass` still waits for another process's metrics; those of location
     * k (NULL: none come from there); all of them, once gathered where location 0 is not here. */
    bool (*waiting)(void *ud, long pass);
    const singa_metrics *(*metrics)(void *ud, int location);
    int (*gathered)(void *ud, const singa_metrics *all, long pass, singa_err *err);
    /* NULL, or: layer l waited `waited` seconds for layer `from` of another location. */
    void (*count)(void *ud, const singa_layer *l, const singa_layer *from, bool backward, double waited);
} singa_parts_remote;

/* The remote from now on (copied); the current one's ud, NULL when none was set. */
void singa_parts_set_remote(singa_parts *pp, const singa_parts_remote *remote);
void *singa_parts_remote_ud(const singa_parts *pp);
/* Before the first pass: which locations this process computes (here[k]); the first of them is
 * the lead's.  Fails when there is none. */
int singa_parts_place(singa_parts *pp, const bool *here, singa_err *err);
bool singa_parts_here(const singa_parts *pp, int location);
singa_net *singa_parts_net(const singa_parts *pp, int location);
int singa_parts_nlayers(const singa_parts *pp);
singa_layer *singa_parts_layer(const singa_parts *pp, int x);
int singa_parts_index(const singa_parts *pp, const singa_layer *l);
/* The parts' lock, which guards the remote's state too; locking returns the pass under way. */
long singa_parts_lock(singa_parts *pp);
void singa_parts_unlock(singa_parts *pp);
/* Holding the lock: whether layer x finished pass `pass` (in direction backward); that it did,
 * waking those waiting for it; waking the lead, whose waiting() may have changed. */
bool singa_parts_is_done(const singa_parts *pp, int x, bool backward, long pass);
void singa_parts_done(singa_parts *pp, int x, bool backward, long pass);
void singa_parts_wake(singa_parts *pp);
/* Appends v to a -1-ended list (*list NULL: an empty one); -1 when out of memory. */
int singa_parts_list_push(int **list, int v);

#endif

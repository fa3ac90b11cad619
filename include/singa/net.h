/* NeuralNet: the layers of one phase, built from the layer list by their srclayer names and
 * kept in topological order. */
#ifndef SINGA_NET_H
#define SINGA_NET_H

#include <stdatomic.h>

#include "singa/layer.h"
#include "singa/metrics.h"
#include "singa/pool.h"
#include "singa/rng.h"

#pragma GCC visibility push(default) /* exported: libsinga is built hidden */

/* A worker's part of the data (SINGA's batch partitioning of input layers): of every batch of
 * B records it reads rows [index * B / count, (index + 1) * B / count), and group `group` of
 * `ngroups` asynchronous worker groups starts group / ngroups of the way into the data set, so
 * groups see different records. */
typedef struct singa_net_split {
    int index, count;
    int group, ngroups;
} singa_net_split;

struct singa_net {
    singa_phase phase;
    singa_layer **layers; /* topological order */
    int nlayers;
    singa_params *params; /* shared with the other phases' nets */
    singa_rng *rng;       /* the job's generator (dropout masks, param init) */
    uint64_t seed;
    singa_metrics metrics;
    singa_pool *pool;     /* the job's threads for layers' own loops; NULL runs them inline */
    bool profile;         /* time every layer's forward and backward (layer->*_seconds) */
    long profiled_passes; /* forward passes timed */
    singa_net_split split;
    int cd_step;          /* kCD: 0 in the positive phase (and every other pass), k in the k-th negative (Gibbs) phase */
    singa_conf *confs;    /* layer confs the net made itself (a partitioned net's connection layers) */
    /* A partitioned net run by the workers of a group (singa_net_create_parts): the parts of
     * every location, and which location this net computes; NULL and -1 otherwise. */
    struct singa_parts *parts;
    int location;
    /* When set, counted up after each layer's forward and backward: the distributed runtime's
     * sign that a worker is computing, not stuck (peers.c). */
    atomic_uint *progress;
    /* When set, each layer's forward and backward is a span of the thread's trace (singa/trace.h). */
    struct singa_trace_buf *trace;
    /* The host's: what its layers see of it (l->ctx), filled in from the members above
     * whenever the net calls them. */
    singa_layer_ctx *layer_ctx;
};

/* Builds the net for `phase` from netconf (the job's `neuralnet` table); split NULL reads
 * whole batches. */
int singa_net_create(singa_net **out, const singa_conf *netconf, singa_phase phase,
                     const singa_registry *reg, singa_params *params, singa_rng *rng,
                     uint64_t seed, const singa_net_split *split, singa_err *err);
void singa_net_free(singa_net *net);
int singa_net_forward(singa_net *net, singa_err *err);
/* -1 only in a partitioned net whose other workers failed (err says why). */
int singa_net_backward(singa_net *net, singa_err *err);
singa_layer *singa_net_find(const singa_net *net, const char *name);
/* Instances per step: the batch size of the first input layer, all its parts' rows when it is
 * cut on the batch (0 if none). */
int singa_net_batchsize(const singa_net *net);
/* The nets a pass over `net` computes, to read what each of their layers did (profiles,
 * metrics): net alone, or every location's of a net cut among the workers of a group
 * (singa/partition.h; net is then location 0's). */
int singa_net_nlocations(const singa_net *net);
singa_net *singa_net_location(const singa_net *net, int location);

#pragma GCC visibility pop

#endif

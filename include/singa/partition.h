/* Neural net partitioning (SINGA's NeuralNet partitioning over the workers of a group): every
 * layer's feature blob is a matrix whose rows are instances, so a layer may be cut into one part
 * per worker on dimension 0 (the batch: data parallelism, params replicated) or dimension 1 (the
 * features: model parallelism, params split), or placed whole on one worker by `location`.
 * singa_graph_build turns a phase's layers into that graph of parts and inserts the connection
 * layers that move blobs between them: kSlice where a part needs a slab of a source part's
 * output, kConcate where it needs several pieces, kSplit where a blob goes whole to several
 * readers, and a kBridgeSrc/kBridgeDst pair wherever an edge crosses from one worker to
 * another. */
#ifndef SINGA_PARTITION_H
#define SINGA_PARTITION_H

#include <stdbool.h>
#include <stdio.h>
#include "singa/conf.h"
#include "singa/layer.h"
#include "singa/net.h"

#pragma GCC visibility push(default) /* exported: libsinga is built hidden */

typedef enum singa_node_role {
    SINGA_NODE_LAYER,      /* a layer of the net, or one part of a partitioned layer */
    SINGA_NODE_SLICE,      /* kSlice: cuts its source into slabs along dim */
    SINGA_NODE_CONCATE,    /* kConcate: joins its sources along dim */
    SINGA_NODE_SPLIT,      /* kSplit: hands its source whole to several readers */
    SINGA_NODE_BRIDGE_SRC, /* kBridgeSrc: sends its source to another worker */
    SINGA_NODE_BRIDGE_DST, /* kBridgeDst: receives it there */
} singa_node_role;

/* An edge's source: a node, and which slab of its output (a kSlice's), or -1 for all of it.  A
 * back edge (a source read only by later passes, as contrastive divergence's) does not order
 * the nodes. */
typedef struct singa_node_src {
    int node, slab;
    bool back;
} singa_node_src;

typedef struct singa_node {
    char *name;         /* "fc1" unpartitioned, "fc1@1" part 1, "fc1@1/slice", "fc1@1>w0", ... */
    singa_node_role role;
    const char *type;   /* the layer's type, or the connection layer's ("kSlice", ...) */
    int layer;          /* the net's layer it is a part of, or whose output it carries */
    int location;       /* the worker of the group that computes it */
    int dim;            /* LAYER: the partition dim (-1 whole, 0, 1); SLICE, CONCATE: along which */
    int part, nparts;   /* LAYER: which part of how many (0 of 1 when whole); SLICE: nparts slabs */
    singa_node_src *src;
    int nsrc;
} singa_node;

/* A layer of the phase's net (an unrolled layer's copies are layers of their own here). */
typedef struct singa_graph_layer {
    char *name;
    const char *type;
    const singa_conf *conf; /* in the netconf the graph was built from */
    int unroll_first;       /* an unrolled layer's copy 0 (itself for copy 0 and other layers) */
    int unroll_index, unroll_len;
    unsigned flags;     /* its type's SINGA_LAYER_* */
    int dim;            /* the partition dim it got: -1, 0 or 1 */
    int location;       /* unpartitioned: its worker */
    int nparts;         /* 1, or the group's workers */
} singa_graph_layer;

typedef struct singa_graph {
    int nworkers;
    singa_phase phase;
    singa_graph_layer *layers;
    int nlayers;
    singa_node *nodes; /* in an order that computes every node after its sources */
    int nnodes;
} singa_graph;

/* Partitions the net of `phase` described by netconf (the job's `neuralnet`) over `nworkers`
 * workers.  A layer's partition_dim (else the net's, else 0) applies where its type allows: a
 * net-wide 1 that a type cannot take, or whose features do not divide by nworkers, falls back
 * to 0, and 0 to -1 (whole, on worker 0) where the type cannot take it; a layer's own
 * partition_dim that its type or size cannot take, a location beyond the group, a location on a
 * partitioned layer, and a batch that does not divide by nworkers are errors naming the layer.  Shapes come from building the phase's
 * net once (so input layers open their data). */
int singa_graph_build(singa_graph *g, const singa_conf *netconf, singa_phase phase, int nworkers,
                      const singa_registry *reg, singa_err *err);
void singa_graph_free(singa_graph *g);
/* The whole group's net in one: every node of g, built like singa_net_create; g and the
 * netconf it was built from must outlive it.  Its parts read their share of the batch within
 * net->split (a worker's share, when split is given). */
int singa_net_create_graph(singa_net **out, const singa_graph *g, const singa_registry *reg, singa_params *params,
                           singa_rng *rng, uint64_t seed, const singa_net_split *split, singa_err *err);
/* The same net cut among the workers of the group: one net per location, each computed by a
 * thread of its own, bridges between them carrying features and gradients through memory.
 * *out is location 0's, run by the caller: its singa_net_forward and singa_net_backward run
 * every location's part of the pass and return when all are done, with the metrics of every
 * location and every param's whole gradient.  singa_net_free(*out) frees them all. */
int singa_net_create_parts(singa_net **out, const singa_graph *g, const singa_registry *reg, singa_params *params,
                           singa_rng *rng, uint64_t seed, const singa_net_split *split, singa_err *err);
const char *singa_node_role_name(singa_node_role role); /* "layer", "slice", ... */
/* Writes the graph as Graphviz DOT: parts clustered and coloured by worker, connection layers
 * and bridges in shapes of their own, edges carrying a slab labelled with it. */
int singa_graph_dot(const singa_graph *g, FILE *out);

#pragma GCC visibility pop

#endif

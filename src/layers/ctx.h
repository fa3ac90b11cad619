/* A layer's context (l->ctx): what a layer may use of the net that runs it.  The net (net/)
 * fills it in before it hands control to its layers (setup, each pass); a built-in layer reads
 * it and never the net.  (Plugins of ABI 1.0-1.4 read l->net, which keeps its members.) */
#ifndef SINGA_LAYERS_CTX_H
#define SINGA_LAYERS_CTX_H

#include "singa/metrics.h"
#include "singa/net.h"
#include "singa/pool.h"
#include "singa/rng.h"

/* A source entry naming a layer: layer->src[src]. */
typedef struct singa_layer_dst {
    singa_layer *layer;
    int src;
} singa_layer_dst;

struct singa_layer_ctx {
    singa_phase phase;
    singa_rng *rng;         /* the job's generator (dropout masks, param init, sampling) */
    uint64_t seed;          /* the job's seed, for a layer's own generators (input shuffles) */
    singa_pool *pool;       /* the job's threads for a layer's own loops; NULL runs them inline */
    singa_params *params;   /* shared with the other phases' nets */
    singa_net_split split;  /* the part of every batch an input layer reads (SINGA_LAYER_SPLITS) */
    singa_metrics *metrics; /* what this pass reports (singa_layer_metric) */
    int cd_step;            /* kCD: 0, or k in the k-th negative (Gibbs) phase */
    int nlayers;            /* the net's layers: a bound for walks back through sources */
    bool defer_params;      /* a pipeline's micro-batch copy: params' gradients later (deferred.h) */
    /* A net built only for its layers' shapes (a graph, a plan): input layers take their shapes
     * from their data's header or first record and load no records; it never runs a pass. */
    bool shapes_only;
    /* In a pipeline's micro-batch copy other than the first: l's layer in copy 0 at the same
     * location (set up already, freed with l's copy), whose data set l's input layer reads instead
     * of loading it again (records.h); NULL in copy 0 and in a net not pipelined. */
    singa_layer *(*twin)(const singa_layer *l);
    /* The source entries of the net's layers that name l, in net order: the first cap of them
     * into dst (NULL when cap is 0); returns how many there are. */
    int (*dsts)(const singa_layer *l, singa_layer_dst *dst, int cap);
};

#endif

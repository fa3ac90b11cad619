/* Finite-difference gradient checks of a layer type: random inputs, the objective
 * sum(out * R) for a fixed random R (a loss layer's own loss), and central differences on
 * every input and param element compared with the layer's backward.  The same harness runs one
 * forward pass on given inputs (singa_layer_probe), for tests of a layer's values.
 *
 * With ndst > 0 the layer gets that many destinations, as in a net: the objective sums
 * sum(out_k * R_k) over what each destination reads, which is how layers with several outputs
 * (kSlice gives each destination its own slab, kSplit gives all the same) are checked. */
#ifndef SINGA_GRADCHECK_H
#define SINGA_GRADCHECK_H

#include "singa/layer.h"
#include "singa/metrics.h"

#pragma GCC visibility push(default) /* exported: libsinga is built hidden */

#define SINGA_GRADCHECK_MAX_DSTS 8

typedef struct singa_gradcheck_input {
    int ndim;
    int shape[SINGA_MAX_DIMS];
    int label_classes;    /* > 0: integer labels in [0, label_classes), no gradient */
    const float *values;  /* NULL: drawn at random; else one value per element */
} singa_gradcheck_input;

typedef struct singa_gradcheck_report {
    double max_rel_err; /* worst relative error over all checked elements */
    char worst[128];    /* which blob and element */
    long checked;
} singa_gradcheck_report;

int singa_gradcheck(const singa_registry *reg, const singa_conf *layer_conf,
                    const singa_gradcheck_input *inputs, int ninputs, int ndst, uint64_t seed,
                    singa_gradcheck_report *rep, singa_err *err);

/* One forward pass (phase kTrain) of the layer on the inputs.  outs[k] receives a copy of what
 * destination k reads (outs[0] the layer's own output when ndst is 0; the caller frees them);
 * metrics what the layer reported. */
int singa_layer_probe(const singa_registry *reg, const singa_conf *layer_conf,
                      const singa_gradcheck_input *inputs, int ninputs, int ndst, uint64_t seed,
                      singa_tensor *outs, singa_metrics *metrics, singa_err *err);

/* The same check over a whole training net built from a `neuralnet` table (unrolled layers,
 * shared params and all): the objective is the mean "loss" its loss layers report, each param's
 * gradient is summed over the layers sharing it, and data cursors and the generator are rewound
 * before every pass so each pass sees the same batch. */
int singa_gradcheck_net(const singa_registry *reg, const singa_conf *netconf, uint64_t seed,
                        singa_gradcheck_report *rep, singa_err *err);
/* The same over the net partitioned over nworkers workers (singa/partition.h), every part and
 * connection layer in one net: the gradients through the inserted layers. */
int singa_gradcheck_net_parts(const singa_registry *reg, const singa_conf *netconf, int nworkers, uint64_t seed,
                              singa_gradcheck_report *rep, singa_err *err);

#pragma GCC visibility pop

#endif

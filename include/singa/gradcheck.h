/* Finite-difference gradient checks of a layer type: random inputs, the objective
 * sum(out * R) for a fixed random R (a loss layer's own loss), and central differences on
 * every input and param element compared with the layer's backward. */
#ifndef SINGA_GRADCHECK_H
#define SINGA_GRADCHECK_H

#include "singa/layer.h"

typedef struct singa_gradcheck_input {
    int ndim;
    int shape[SINGA_MAX_DIMS];
    int label_classes; /* > 0: integer labels in [0, label_classes), no gradient */
} singa_gradcheck_input;

typedef struct singa_gradcheck_report {
    double max_rel_err; /* worst relative error over all checked elements */
    char worst[128];    /* which blob and element */
    long checked;
} singa_gradcheck_report;

int singa_gradcheck(const singa_registry *reg, const singa_conf *layer_conf,
                    const singa_gradcheck_input *inputs, int ninputs, uint64_t seed,
                    singa_gradcheck_report *rep, singa_err *err);

#endif

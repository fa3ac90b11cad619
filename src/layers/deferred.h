/* Deferred param gradients (pipelined micro-batches, net/pipeline.c): a built-in layer whose
 * type can (singa_layer_defers) writes in its backward only its sources' gradients while its
 * net's context says defer_params; once every micro-batch of the step went backward, the
 * pipeline has singa_layer_param_grads write the params' gradients over all of them at once,
 * as one GEMM of the step's rows rather than one per micro-batch (each of which reads and
 * writes the whole gradient).  Other types, plugins' among them, write theirs per micro-batch. */
#ifndef SINGA_LAYERS_DEFERRED_H
#define SINGA_LAYERS_DEFERRED_H

#include "singa/layer.h"

/* Whether l's type can defer its params' gradients (every param its own, none a view of a
 * param cut with the layer), whatever its context says. */
bool singa_layer_can_defer(const singa_layer *l);
/* Whether l's backward leaves its params' gradients to singa_layer_param_grads now. */
bool singa_layer_defers(const singa_layer *l);
/* copies[0..n): one layer in the n micro-batch copies of its net, in batch order, each holding
 * its sources' data and its gradient since its backward.  Writes the shared params' gradients
 * with their grad_alpha and grad_beta, as one backward over all the copies' rows would. */
int singa_layer_param_grads(singa_layer *const *copies, int n, singa_err *err);

/* The types that can (one per layer file). */
int singa_inner_product_param_grads(singa_layer *const *copies, int n, singa_err *err);

#endif

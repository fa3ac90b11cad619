/* A net's summary, as Keras' model.summary() and torchinfo print one: every layer with its
 * type, output shape and parameter count, then the totals.  singa-tui --summary, singa.summary
 * and the workbench's Topology panel show the same lines. */
#ifndef SINGA_SUMMARY_H
#define SINGA_SUMMARY_H

#include <stddef.h>

#include "singa/net.h"

#pragma GCC visibility push(default) /* exported: libsinga is built hidden */

/* The parameters layer l declares (a param shared from another layer's counts there). */
size_t singa_summary_layer_params(const singa_layer *l);
/* The net's parameters: all, and those the updater trains (a layer's state is not). */
void singa_summary_totals(const singa_net *net, size_t *all, size_t *trained);
/* Its output shape, e.g. "64x784", or "-" for a layer without output. */
void singa_summary_shape(const singa_layer *l, char *buf, size_t len);
/* Calls line() with each line of the summary: a header, a line per layer, the totals. */
void singa_summary_lines(const singa_net *net, void (*line)(void *ud, const char *text), void *ud);

#pragma GCC visibility pop

#endif

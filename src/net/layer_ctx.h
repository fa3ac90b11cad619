/* A net's context for its layers (layers/ctx.h). */
#ifndef SINGA_NET_LAYER_CTX_H
#define SINGA_NET_LAYER_CTX_H

#include "layers/ctx.h"

/* A zeroed net with its layers' context beside it (freed with the net). */
singa_net *singa_net_alloc(void);
/* Refreshes net->layer_ctx from the net's members: called before the net calls its layers, so
 * what is set after creation (the job's pool, a location's generator, the CD step) reaches
 * them. */
void singa_net_ctx_sync(singa_net *net);
/* A pipeline's micro-batch copy: its layers that can leave their params' gradients to the
 * pipeline (layers/deferred.h) from now on. */
void singa_net_ctx_defer_params(singa_net *net, bool on);
/* A net built only for its layers' shapes (ctx.h shapes_only); set before the layers' setup. */
void singa_net_ctx_shapes_only(singa_net *net);
/* singa_net_create for a net whose layers' shapes are all it is for: its input layers load no
 * data set, so it must not run a pass. */
int singa_net_create_shapes(singa_net **out, const singa_conf *netconf, singa_phase phase, const singa_registry *reg,
                            singa_params *params, singa_rng *rng, singa_err *err);
/* A pipeline's micro-batch copy: copy 0's net at its location, whose input layers' data sets
 * its own read (ctx.h twin); set before the layers' setup. */
void singa_net_ctx_first(singa_net *net, singa_net *first);

#endif

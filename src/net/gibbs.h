/* kCD's passes over a net's RBM layers (those flagged SINGA_LAYER_GIBBS). */
#ifndef SINGA_NET_GIBBS_H
#define SINGA_NET_GIBBS_H

#include "singa/net.h"

/* Negative phase `step` (1..cd_k): the forward of every RBM layer again, in net order, with
 * net->cd_step = step; the net's cd_step is 0 again after it. */
int singa_net_gibbs_forward(singa_net *net, int step, singa_err *err);
/* The RBM layers' backward, in reverse net order: each writes its params' CD gradient. */
void singa_net_gibbs_backward(singa_net *net);

#endif

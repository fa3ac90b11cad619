/* A partitioned net run by the workers of a group (singa_net_create_parts): each location's
 * net is computed by its own thread, the lead's (location 0) by the caller of singa_net_forward
 * and singa_net_backward, which hand every pass to the others and return when all are done.
 * Threads wait only where a bridge crosses between locations: a kBridgeDst for its source's
 * features, a kBridgeSrc for its destination's gradient. */
#ifndef SINGA_NET_PARTS_H
#define SINGA_NET_PARTS_H

#include "singa/net.h"
#include "singa/stats.h"

typedef struct singa_parts singa_parts;

/* Starts a thread for each of nets[1..n-1] and links the nets to one another; on success the
 * parts own nets[1..] and the array (singa_net_free of nets[0] frees them). */
int singa_parts_start(singa_net **nets, int n, singa_err *err);
void singa_parts_free(singa_parts *pp);
/* The nets a pass over `net` computes: net alone, or every location's of a net cut among the
 * workers of a group (net is then location 0's). */
int singa_net_nlocations(const singa_net *net);
singa_net *singa_net_location(const singa_net *net, int location);
int singa_parts_batchsize(const singa_parts *pp);

/* One forward or backward pass of every location (the lead's call). */
int singa_parts_pass(singa_parts *pp, bool backward, singa_err *err);
/* Within a pass: before layer i of net computes, waits for what it needs from other locations
 * (-1 when another location failed); after, tells the locations waiting for it. */
int singa_parts_wait(singa_parts *pp, const singa_net *net, int i, bool backward, singa_err *err);
void singa_parts_signal(singa_parts *pp, const singa_net *net, int i, bool backward);
/* From now on, bridges count the bytes they carry and the time their readers wait, as traffic
 * of type "bridge" (features) and "bridge-grad" (gradients) from the worker that sent them. */
void singa_parts_count_traffic(singa_parts *pp, singa_stats *stats);

/* net.c's loops, which the parts run at every location. */
int singa_net_forward_layers(singa_net *net, singa_err *err);
void singa_net_backward_begin(singa_net *net);
int singa_net_backward_layers(singa_net *net, singa_err *err);

#endif

/* A partitioned net run by the workers of a group (singa_net_create_parts): each location's
 * net is computed by its own thread, the lead's (the first here, location 0 unless linked) by the
 * caller of singa_net_forward and singa_net_backward, which hand every pass to the others and
 * return when all are done.  Threads wait only where a bridge crosses between locations: a
 * kBridgeDst for its source's features, a kBridgeSrc for its destination's gradient.
 *
 * A group whose workers live in several processes is linked (singa_parts_link): every process
 * builds every location's net but computes its own, and the bridges between processes carry
 * their blobs as messages.  The others' nets then stand in for them: a remote kBridgeSrc's data
 * is where its features arrive, a remote kBridgeDst's source's gradient what it sends back. */
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

/* How the parts reach locations computed by other processes. */
typedef struct singa_parts_peers {
    void *ud;
    const int *owner; /* per location: the process computing it (copied by singa_parts_link) */
    int self;         /* this process */
    /* Both called in the lead's thread only.  send: n floats of pass `pass` for the process
     * computing location `to`: layer's features (edge -1) and their rows' labels (naux floats,
     * none when the rows have none), or the gradient of its source `edge`.  send_metrics: this
     * process's metrics of a forward pass, for location 0's. */
    int (*send)(void *ud, int to, int layer, int edge, long pass, const float *data, size_t n, const float *aux,
                size_t naux, singa_err *err);
    int (*send_metrics)(void *ud, int to, long pass, const singa_metrics *m, singa_err *err);
} singa_parts_peers;

/* Before the first pass: this process computes the locations `link` says it owns (at least one). */
int singa_parts_link(singa_parts *pp, const singa_parts_peers *link, singa_err *err);
/* From any thread, of a message from process `from`: a blob sent by its link->send, or its
 * metrics.  -1 (nothing changed) for one that does not fit: another pass, layer or size. */
int singa_parts_deliver(singa_parts *pp, int from, int layer, int edge, long pass, const void *data, size_t nbytes);
int singa_parts_deliver_metrics(singa_parts *pp, int from, long pass, const singa_metrics *m);
/* The largest blob other processes send here, in bytes. */
size_t singa_parts_inbound_bytes(const singa_parts *pp);
/* The elements of param p's gradient this process computes, [*begin, *end) (empty when only
 * other processes do): the hull of its locations' views of p, all of p where one of them uses p
 * itself or a copy sharing it.  Elsewhere this process's part of the gradient is zero. */
void singa_parts_span(const singa_parts *pp, const singa_param *p, size_t *begin, size_t *end);
/* The mean forward and backward seconds per pass of the layers this process computes (2 per
 * layer, location by location), into out unless NULL; returns how many.  profile_put takes
 * process `from`'s (their stand-ins here then report them): -1, nothing changed, when they do
 * not fit. */
size_t singa_parts_profile_get(const singa_parts *pp, double *out);
int singa_parts_profile_put(singa_parts *pp, int from, const void *data, size_t nbytes);
/* From any thread: the job stops; a pass under way, and every later one, fails with `why`. */
void singa_parts_abort(singa_parts *pp, const char *why);

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

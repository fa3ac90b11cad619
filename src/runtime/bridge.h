/* The bridges of a worker group's cut net across processes (bridge.c): the runtime's half of a
 * partitioned net (net/parts.h), which carries the blobs, metrics and profiles between the
 * processes computing its locations, and counts what the bridges carry. */
#ifndef SINGA_RUNTIME_BRIDGE_H
#define SINGA_RUNTIME_BRIDGE_H

#include "net/parts.h"
#include "singa/stats.h"

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
/* The same for process `proc` where owner[k] is the process computing location k (before the
 * parts are linked: the placement of the servers' slices). */
void singa_parts_span_of(const singa_parts *pp, const singa_param *p, const int *owner, int proc, size_t *begin,
                         size_t *end);
/* The mean forward and backward seconds per pass of the layers this process computes (2 per
 * layer, location by location), into out unless NULL; returns how many.  profile_put takes
 * process `from`'s (their stand-ins here then report them): -1, nothing changed, when they do
 * not fit. */
size_t singa_parts_profile_get(const singa_parts *pp, double *out);
int singa_parts_profile_put(singa_parts *pp, int from, const void *data, size_t nbytes);
/* From now on, bridges count the bytes they carry and the time their readers wait, as traffic
 * of type "bridge" (features) and "bridge-grad" (gradients) from the worker that sent them. */
int singa_parts_count_traffic(singa_parts *pp, singa_stats *stats, singa_err *err);
/* After a pipelined step: each stage here other than the worker's own (the first) is a worker
 * row of its own (singa_stats_step), its time in the step, and its waits on bridges apart. */
void singa_parts_count_stages(singa_parts *pp, int group);

#endif

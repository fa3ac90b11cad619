/* The host's own state of a param, beside what layers see (singa/param.h).  Every singa_param
 * is the first member of a singa_param_state: the store allocates whole params (param.c), a
 * part of a partitioned layer gets a singa_param_view (layer_param.c).  Keeping this state here
 * keeps it out of the plugin ABI, so the runtime may change it without a plugin noticing.
 *
 * Where a gradient goes is a sink, which the trainer hands the params: the local updater applies
 * a gradient once final, the distributed runtime's worker sends it.  A sink may also make the
 * layers write a param's gradient in turns, several threads adding into one buffer a block of
 * rows at a time (src/runtime/history.c); only layer types the registry knows to write gradients
 * through singa_param_grad_gemm or between singa_param_grad_begin and _done are given such a
 * sink. */
#ifndef SINGA_LAYERS_PARAM_STATE_H
#define SINGA_LAYERS_PARAM_STATE_H

#include <stddef.h>

#include "singa/param.h"

typedef struct singa_grad_sink {
    /* Elements [begin, end) of p's gradient are final for this step, so it may be applied at
     * once, while still warm in cache (and, distributed, sent early). */
    void (*ready)(void *ud, singa_param *p, size_t begin, size_t end);
    /* NULL, or: called before (begin) and after a layer writes part `part` of p's gradient;
     * it may wait and set grad_alpha/grad_beta, so several threads add into one buffer in turns. */
    void (*turn)(void *ud, singa_param *p, int part, bool begin);
    /* NULL, or: called before a forward pass reads p's values (its layer's turn); it may wait
     * until they are this step's (distributed, SINGA's Collect per layer).  < 0: the reason in err. */
    int (*want)(void *ud, singa_param *p, singa_err *err);
} singa_grad_sink;

typedef struct singa_param_state {
    singa_param p; /* first: what layers see */
    const singa_grad_sink *sink; /* NULL: nobody waits for the gradient */
    void *sink_ud;
    int grad_parts; /* with sink->turn: the row blocks singa_param_grad_gemm writes in turn */
    bool turn_held; /* with sink->turn: every part's turn is taken (singa_param_grad_begin) */
    bool is_view;   /* this is a singa_param_view's */
    /* A whole param: its views, and those final in this pass (by several threads). */
    int nviews, nviews_done;
    bool claimed;   /* a replica has taken grad_beta in this pass */
    bool partial;   /* this process holds the values of only some of its elements */
    const void *net;  /* the net that declared it last, to catch a name used twice in one net */
    const void *decl; /* the conf of the layer that declared it: its parts may declare it again */
} singa_param_state;

/* A part's view of a whole param (a param of a part of a partitioned layer): data and grad are
 * views of whole's, disjoint from the other views' when the layer is cut on the features, all
 * of it (a replica) when on the batch. */
typedef struct singa_param_view {
    singa_param_state st; /* first */
    singa_param *whole;
    bool disjoint;
} singa_param_view;

static inline singa_param_state *singa_param_state_of(singa_param *p) { return (singa_param_state *)p; }

static inline const singa_param_state *singa_param_state_c(const singa_param *p)
{
    return (const singa_param_state *)p;
}

/* p as a view, or NULL when it is a param of its own. */
static inline singa_param_view *singa_param_view_of(const singa_param *p)
{
    return singa_param_state_c(p)->is_view ? (singa_param_view *)p : NULL;
}

/* The whole param p is a view of, or p itself. */
static inline singa_param *singa_param_whole(singa_param *p)
{
    singa_param_view *v = singa_param_view_of(p);
    return v ? v->whole : p;
}

/* Where p's gradient goes from now on (NULL: nowhere); ud is given to the sink's functions. */
void singa_param_set_sink(singa_param *p, const singa_grad_sink *sink, void *ud);
/* Before a forward pass reads p (or the param whose value it shares): its sink's want, if any. */
int singa_param_want(singa_param *p, singa_err *err);
/* A view of whole w named "<w>@<index>" for layer `layer`: all of w, or on the features the
 * rows (axis 0) or columns (axis 1) [at, at + n) (a range of a vector).  NULL when out of memory. */
singa_param *singa_param_view_new(singa_param *w, const char *layer, int index, int axis, int at, int n);
void singa_param_view_free(singa_param *view);
/* Before a backward pass over views: each takes its whole's grad_alpha, and grad_beta if it is
 * the first to write its elements in the pass (else 1, so replicas add up). */
void singa_param_view_begin(singa_param *view);

#endif

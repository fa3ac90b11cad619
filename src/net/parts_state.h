/* The state of a cut net's parts (parts.c), shared with its pipeline (pipeline.c): what neither
 * the layers nor the runtime see.
 *
 * Layers are numbered x = 0 .. nlayers - 1: copy j's layers at [j * per_copy, (j + 1) *
 * per_copy), and within a copy location k's from base[k].  A net not pipelined has one copy. */
#ifndef SINGA_NET_PARTS_STATE_H
#define SINGA_NET_PARTS_STATE_H

#include <pthread.h>
#include <stdatomic.h>

#include "layers/param_state.h"
#include "net/parts.h"

typedef struct replica {
    singa_param *view, *whole;
    singa_tensor grad; /* the view's own gradient buffer */
    int location;      /* its layer's */
} replica;

typedef struct held { /* a param's own sink, taken over during a backward pass */
    const singa_grad_sink *sink; /* NULL: the param has none */
    void *ud;
    bool summed;            /* a whole param with replicas: final once they are summed */
    bool ready, told;       /* this pass: final, and the worker told */
    int calls;              /* pipelined: its layers' reports so far (final at the last micro-batch's) */
} held;

typedef struct executor {
    singa_parts *pp;
    int location;
} executor;

/* What a pass computes: every micro-batch's forward, backward, or both in a 1F1B schedule. */
enum { PARTS_FORWARD, PARTS_BACKWARD, PARTS_STEP };

struct singa_parts {
    int n;
    int m;             /* micro-batches per step: 1 unless pipelined */
    singa_net **nets;  /* m * n: copy j of location k at [j * n + k]; nets[k] is copy 0's */
    singa_rng *rngs; /* the other locations' generators (dropout masks and the like) */
    executor *execs;
    pthread_t *threads;
    bool *started;  /* per location: its thread runs */
    int nthreads;
    bool up;        /* the threads were started (at the first pass, once linked or not) */
    int lead;       /* the location the caller computes */
    bool *here;     /* per location: computed in this process */
    pthread_mutex_t lock;
    pthread_cond_t cv;
    long pass;     /* passes posted; the one under way */
    int mode;      /* its PARTS_* */
    bool quit, failed;
    int busy;      /* locations other than the lead's still in the pass */
    singa_err err; /* the first failure */
    int *base;     /* per location: its first layer's index within a copy */
    int per_copy;  /* layers of one copy */
    int nlayers;   /* of every copy */
    long *done[2];    /* per layer and direction: the last pass it finished */
    int **waits[2];   /* per layer and direction: layers elsewhere it needs (-1 ends), or NULL */
    bool *signals[2]; /* per layer and direction: a layer elsewhere needs it */
    replica *reps;
    int nreps;
    held *held;  /* by param id */
    int nheld;
    atomic_int nready; /* params final and not yet told */
    singa_parts_remote remote; /* all NULL unless the runtime set one */
    /* Placed among processes. */
    bool placed;
    int *outbox;      /* this pass: 2 x + backward of the layers finished here by others than
                       * the lead, to be sent */
    int nout, nsent;
    int *views_elsewhere; /* by param id: views computed by other processes */
    /* Pipelined (m > 1). */
    int *warm;            /* per location: forwards before its first backward */
    float *alpha, *beta;  /* by param id: grad_alpha and grad_beta as the step began */
    bool *once;           /* by param id: written once a step, its layers' gradients deferred */
    singa_layer **copies; /* per location, m: a layer's copies, for deferred gradients */
    int nheld_grads;      /* how many params they hold */
    double *stage;        /* per location: seconds its last pass took */
};

/* Copy j of location k. */
static inline singa_net *singa_parts_copy(const singa_parts *pp, int j, int k) { return pp->nets[j * pp->n + k]; }

/* pipeline.c: the micro-batch copies' schedule. */
int singa_pipeline_prepare(singa_parts *pp, singa_err *err);
void singa_pipeline_begin(singa_parts *pp);
int singa_pipeline_hold(singa_parts *pp);
void singa_pipeline_release(singa_parts *pp);
int singa_pipeline_run(singa_parts *pp, int k, int mode, singa_err *err);
void singa_pipeline_end(singa_parts *pp);

#endif

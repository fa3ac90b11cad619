/* Pipelined model parallelism (neuralnet.micro_batches, parts.h): each location runs a step's m
 * micro-batches in a 1F1B schedule (PipeDream-flush): w forwards, then one forward and one
 * backward in turn, then the last backwards.  A location's w is how many locations its features
 * reach (through any number of bridges), at most m: a location always runs at least as far ahead
 * as those it feeds, so no two wait for each other, and locations that feed each other (a cut on
 * the features) run the same schedule.
 *
 * The step stays the unpipelined one: copy j's input layers read rows [j B / m, (j + 1) B / m)
 * of the batch; every param's gradient is written with grad_alpha / m (a copy's loss is the mean
 * over its micro-batch) and added up over the micro-batches (grad_beta 1 after the first), and
 * the metrics of the copies add up to the batch's means.  A location's copies run in turn in one
 * thread and share its generator, so dropout draws its masks in the unpipelined order.
 *
 * A layer that can (layers/deferred.h: a kInnerProduct) writes only its sources' gradient in each
 * micro-batch's backward, so that the previous location gets it at once, and its params'
 * gradients once the location has no backward left in the step, as one GEMM over the step's
 * rows: per micro-batch, each would read and write the whole gradient for a handful of rows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/trace.h"
#include "layers/deferred.h"
#include "layers/running.h"
#include "net/layer_ctx.h"
#include "net/parts_state.h"

/* The batch size an input layer's conf asks for, or 0 when it gives none. */
static int conf_batch(const singa_conf *c)
{
    const singa_conf *bs = singa_conf_get(c, "batchsize");
    if (bs && bs->kind == SINGA_CONF_LIST && bs->n == 1)
        bs = bs->items[0];
    return bs && bs->kind == SINGA_CONF_NUM && bs->num >= 1 && bs->num < 1e9 ? (int)bs->num : 0;
}

/* The batch of input layer gl does not split into m micro-batches of each of its `split` parts
 * (a worker's share when the layer is cut on the batch): the allowed m divide batch / split. */
static int refuse_batch(const singa_graph_layer *gl, int m, int batch, int split, singa_err *err)
{
    char allowed[200] = "", over[64] = "";
    for (int d = 1; d <= batch / split; d++)
        if (batch % (d * split) == 0 && strlen(allowed) < sizeof allowed - 16)
            singa_appendf(allowed, sizeof allowed, "%s%d", *allowed ? ", " : "", d);
    if (split > 1)
        snprintf(over, sizeof over, " split over %d workers", split);
    return singa_err_set(err, "neuralnet: micro_batches = %d does not divide the batch: layer '%s' reads batchsize %d%s "
                              "(micro_batches may be one of %s)", m, gl->name, batch, over, *allowed ? allowed : "none");
}

int singa_pipeline_check(const singa_graph *g, int m, int workers, singa_err *err)
{
    bool off = false;
    for (int i = 0; i < g->nnodes; i++)
        off |= g->nodes[i].location != 0;
    if (!off)
        return singa_err_set(err, "neuralnet: micro_batches = %d pipelines a net whose layers are placed on several "
                                  "workers, but no layer is placed off worker 0 (give layers a 'location' other than 0: "
                                  "the group's workers are 0 to %d)", m, g->nworkers - 1);
    for (int i = 0; i < g->nlayers; i++) {
        const singa_graph_layer *gl = &g->layers[i];
        int batch = conf_batch(gl->conf), split = workers * (gl->dim == 0 && gl->nparts > 1 ? gl->nparts : 1);
        if (gl->flags & SINGA_LAYER_WHOLE_BATCH)
            return singa_err_set(err, "neuralnet: micro_batches = %d: layer '%s' (%s) works on the whole batch, so "
                                      "micro-batches would change its result (remove micro_batches or the layer)",
                                 m, gl->name, gl->type);
        if ((gl->flags & SINGA_LAYER_INPUT) && !(gl->flags & SINGA_LAYER_SPLITS))
            return singa_err_set(err, "neuralnet: micro_batches = %d: input layer '%s' (%s) reads whole batches, so it "
                                      "cannot hand out micro-batches", m, gl->name, gl->type);
        /* records.c splits the batch over every copy's part: m times the layer's split */
        if ((gl->flags & SINGA_LAYER_INPUT) && batch > 0 && batch % (m * split) != 0)
            return refuse_batch(gl, m, batch, split, err);
    }
    return 0;
}

/* Each location's warm-up forwards: how many locations its features reach, at most m. */
static int find_warmups(singa_parts *pp)
{
    int n = pp->n;
    bool *reach = calloc((size_t)n * (size_t)n, sizeof *reach);
    if (!reach)
        return -1;
    for (int k = 0; k < n; k++)
        for (int i = 0; i < pp->nets[k]->nlayers; i++) {
            const singa_layer *l = pp->nets[k]->layers[i];
            for (int e = 0; e < l->nsrc; e++)
                if (l->src[e]->net != l->net)
                    reach[l->src[e]->net->location * n + k] = true;
        }
    for (int via = 0; via < n; via++) /* the closure: reach through any number of bridges */
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++)
                reach[a * n + b] |= reach[a * n + via] && reach[via * n + b];
    for (int k = 0; k < n; k++) {
        pp->warm[k] = 0;
        for (int b = 0; b < n; b++)
            pp->warm[k] += reach[k * n + b];
        if (pp->warm[k] > pp->m)
            pp->warm[k] = pp->m;
    }
    free(reach);
    return 0;
}

int singa_pipeline_prepare(singa_parts *pp, singa_err *err)
{
    size_t nm = (size_t)pp->n * (size_t)pp->m;
    if (!(pp->warm = calloc((size_t)pp->n, sizeof *pp->warm)) || !(pp->stage = calloc((size_t)pp->n, sizeof *pp->stage)) ||
        !(pp->copies = calloc(nm, sizeof *pp->copies)) || find_warmups(pp) < 0)
        return singa_err_set(err, "out of memory");
    for (size_t x = 0; x < nm; x++)
        singa_net_ctx_defer_params(pp->nets[x], true);
    return 0;
}

/* Copy j's input layers continue from copy 0's cursors (which a checkpoint restores): every copy
 * walks the same records, each reading its rows of every batch. */
static void follow_cursors(singa_parts *pp, int k, int j)
{
    singa_net *first = pp->nets[k], *copy = singa_parts_copy(pp, j, k);
    for (int i = 0; i < first->nlayers; i++) {
        singa_layer *l = first->layers[i], *c = copy->layers[i];
        if (!l->type->get_cursor || !l->type->set_cursor)
            continue;
        int64_t want[SINGA_CURSOR_LEN] = {0}, have[SINGA_CURSOR_LEN] = {0};
        singa_err ignored;
        l->type->get_cursor(l, want);
        c->type->get_cursor(c, have);
        if (memcmp(want, have, sizeof want) != 0)
            c->type->set_cursor(c, want, &ignored); /* copy 0 took the same cursor */
    }
}

void singa_pipeline_begin(singa_parts *pp)
{
    for (int k = 0; k < pp->n; k++)
        for (int j = 1; j < pp->m && pp->here[k]; j++) {
            singa_net *copy = singa_parts_copy(pp, j, k), *first = pp->nets[k];
            copy->profile = first->profile;
            copy->trace = first->trace;
            copy->progress = first->progress;
            copy->pool = first->pool;
            follow_cursors(pp, k, j);
        }
}

/* Whether layer l of a copy defers its params' gradients to deferred_grads. */
static bool defers(const singa_layer *l)
{
    return l->needs_grad && l->type->backward && singa_layer_can_defer(l);
}

int singa_pipeline_hold(singa_parts *pp)
{
    singa_params *ps = pp->nets[0]->params;
    float *a = realloc(pp->alpha, ((size_t)ps->n + 1) * sizeof *a);
    if (a)
        pp->alpha = a;
    float *b = a ? realloc(pp->beta, ((size_t)ps->n + 1) * sizeof *b) : NULL;
    if (b)
        pp->beta = b;
    bool *once = b ? realloc(pp->once, ((size_t)ps->n + 1) * sizeof *once) : NULL;
    if (!once)
        return -1;
    pp->once = once;
    for (int i = 0; i < ps->n; i++) {
        pp->alpha[i] = ps->items[i]->grad_alpha;
        pp->beta[i] = ps->items[i]->grad_beta;
        pp->once[i] = false;
    }
    for (int k = 0; k < pp->n; k++)
        for (int i = 0; i < pp->nets[k]->nlayers; i++)
            for (int q = 0; defers(pp->nets[k]->layers[i]) && q < pp->nets[k]->layers[i]->nparams; q++)
                pp->once[pp->nets[k]->layers[i]->params[q]->id] = true;
    pp->nheld_grads = ps->n;
    return 0;
}

void singa_pipeline_release(singa_parts *pp)
{
    singa_params *ps = pp->nets[0]->params;
    for (int i = 0; i < pp->nheld_grads && i < ps->n; i++) {
        ps->items[i]->grad_alpha = pp->alpha[i];
        ps->items[i]->grad_beta = pp->beta[i];
    }
}

/* Before copy j's backward at location k: its params' gradients add up over the micro-batches.
 * A replica's buffer is the copy's own (parts.c sums them after the pass). */
static void micro_grads(singa_parts *pp, int k, int j)
{
    const singa_net *net = singa_parts_copy(pp, j, k);
    for (int i = 0; i < net->nlayers; i++)
        for (int q = 0; q < net->layers[i]->nparams; q++) {
            singa_param *p = net->layers[i]->params[q];
            const singa_param_view *v = singa_param_view_of(p);
            int id = singa_param_whole(p)->id;
            p->grad_alpha = pp->alpha[id] / (float)pp->m;
            p->grad_beta = v && !v->disjoint ? 0.0f : j == 0 ? pp->beta[id] : 1.0f;
        }
}

static int micro_pass(singa_parts *pp, int k, int j, bool backward, singa_err *err)
{
    singa_net *net = singa_parts_copy(pp, j, k);
    double t0 = singa_trace_now();
    int rc;
    if (backward) {
        micro_grads(pp, k, j);
        rc = singa_net_backward_layers(net, err);
    } else {
        singa_metrics_reset(&net->metrics);
        rc = singa_net_forward_layers(net, err);
    }
    char name[32];
    snprintf(name, sizeof name, "%s %d", backward ? "backward" : "forward", j);
    singa_trace_span(pp->nets[k]->trace, "micro-batch", name, t0, singa_trace_now());
    return rc;
}

/* After location k's last backward of the step: the params' gradients its layers deferred, over
 * all the micro-batches at once, the last layer's first (as a backward pass reports them). */
static int deferred_grads(singa_parts *pp, int k, singa_err *err)
{
    singa_net *first = pp->nets[k];
    singa_layer **copies = pp->copies + (size_t)k * (size_t)pp->m;
    for (int i = first->nlayers - 1; i >= 0; i--) {
        singa_layer *l = first->layers[i];
        if (!defers(l))
            continue;
        for (int j = 0; j < pp->m; j++)
            copies[j] = singa_parts_copy(pp, j, k)->layers[i];
        for (int q = 0; q < l->nparams; q++) { /* each copy's loss is its micro-batch's mean */
            l->params[q]->grad_alpha = pp->alpha[l->params[q]->id] / (float)pp->m;
            l->params[q]->grad_beta = pp->beta[l->params[q]->id];
        }
        double t0 = singa_trace_now();
        singa_running before = singa_running_enter(l, "backward", NULL);
        int rc = singa_layer_param_grads(copies, pp->m, err);
        singa_running_leave(before);
        double t1 = singa_trace_now();
        if (first->profile)
            l->backward_seconds += t1 - t0;
        singa_trace_span(first->trace, "backward", l->name, t0, t1);
        if (rc < 0)
            return -1;
    }
    return 0;
}

int singa_pipeline_run(singa_parts *pp, int k, int mode, singa_err *err)
{
    int m = pp->m, f = 0, b = 0, rc = 0, warm = mode == PARTS_STEP ? pp->warm[k] : m;
    bool fw = mode != PARTS_BACKWARD, bw = mode != PARTS_FORWARD;
    double t0 = singa_trace_now();
    for (; fw && f < warm && rc == 0; f++)
        rc = micro_pass(pp, k, f, false, err);
    while (bw && b < m && rc == 0) {
        if (fw && f < m)
            rc = micro_pass(pp, k, f++, false, err);
        if (rc == 0)
            rc = micro_pass(pp, k, b++, true, err);
    }
    if (bw && rc == 0)
        rc = deferred_grads(pp, k, err);
    pp->stage[k] = singa_trace_now() - t0;
    return rc;
}

void singa_pipeline_end(singa_parts *pp)
{
    for (int k = 0; k < pp->n; k++)
        for (int j = 1; j < pp->m && pp->here[k]; j++) {
            singa_net *copy = singa_parts_copy(pp, j, k), *first = pp->nets[k];
            if (pp->mode != PARTS_BACKWARD)
                singa_metrics_merge(&first->metrics, &copy->metrics);
            for (int i = 0; i < first->nlayers; i++) { /* r.profile: the step's time of each layer */
                first->layers[i]->forward_seconds += copy->layers[i]->forward_seconds;
                first->layers[i]->backward_seconds += copy->layers[i]->backward_seconds;
                copy->layers[i]->forward_seconds = copy->layers[i]->backward_seconds = 0;
            }
        }
}

/* The configurations a job's net allows over n processes (frameworks, partitioning,
 * micro-batches, compression, sync_freq), each checked by partitioning the net as the job would
 * (singa_graph_build), then predicted (model.c) and ranked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/conf_edit.h"
#include "plan/plan.h"
#include "singa/partition.h"

enum { MAX_CANDIDATES = 16, SYNC_FREQ = 50, POWERSGD_RANK = 4 };

static singa_plan_config config(singa_plan_scheme scheme, int n, singa_compress_kind kind, const char *name)
{
    singa_plan_config c = {.scheme = scheme, .nprocs = n, .micro_batches = 1, .sync_freq = 1};
    c.compress = (singa_compress){kind, 0, false, kind};
    snprintf(c.name, sizeof c.name, "%s", name);
    return c;
}

static singa_plan_config topk(int n, singa_compress_kind values, const char *name)
{
    singa_plan_config c = config(SINGA_PLAN_ALLREDUCE, n, SINGA_COMPRESS_TOPK, name);
    c.compress = (singa_compress){SINGA_COMPRESS_TOPK, 0.01, true, values};
    return c;
}

/* The net's layers on the features over n workers: 0 when it builds with some layer cut so. */
static int feature_dims(singa_plan_profile *p, const singa_conf *conf, const singa_registry *reg, int n)
{
    singa_conf *net = singa_conf_clone(singa_conf_get(conf, "neuralnet"));
    singa_graph g = {0};
    singa_err err;
    int cut = 0;
    if (net && plan_conf_set(net, "partition_dim", singa_conf_new_num(1)) == 0 &&
        singa_graph_build(&g, net, SINGA_PHASE_TRAIN, n, reg, &err) == 0)
        for (int i = 0; i < p->nlayers; i++)
            for (int k = 0; k < g.nlayers; k++)
                if (strcmp(g.layers[k].name, p->layers[i].name) == 0)
                    p->layers[i].dim = g.layers[k].dim, cut |= g.layers[k].dim == 1;
    singa_graph_free(&g);
    singa_conf_free(net);
    return cut ? 0 : -1;
}

/* n stages of about equal compute, each starting at a layer with params; m micro-batches. */
static int pipeline_cut(const singa_plan_profile *p, int n, singa_plan_config *c)
{
    static const int ms[] = {8, 16, 4, 2};
    double total = 0, acc = 0;
    for (int i = 0; i < p->nlayers; i++)
        total += p->layers[i].fwd + p->layers[i].bwd;
    int s = 1;
    for (int i = 0; i < p->nlayers && s < n; i++) {
        if (acc >= total * s / n && p->layers[i].param_floats > 0)
            c->stage_start[s++] = i;
        acc += p->layers[i].fwd + p->layers[i].bwd;
    }
    c->micro_batches = 0;
    for (size_t k = 0; k < sizeof ms / sizeof *ms && !c->micro_batches; k++)
        if (ms[k] >= n && p->batch % ms[k] == 0)
            c->micro_batches = ms[k];
    return s == n && c->micro_batches ? 0 : -1;
}

/* The stage of each layer as the job's neuralnet.layer list sees it (location fields). */
singa_conf *plan_pipeline_net(const singa_plan_profile *p, const singa_plan_config *c, const singa_conf *netconf)
{
    singa_conf *net = singa_conf_clone(netconf);
    singa_conf *layers = net ? (singa_conf *)singa_conf_get(net, "layer") : NULL;
    if (!layers || plan_conf_set(net, "micro_batches", singa_conf_new_num(c->micro_batches)) < 0) {
        singa_conf_free(net);
        return NULL;
    }
    for (size_t k = 0; k < layers->n; k++) {
        const char *name = singa_conf_str(layers->items[k], "name", "");
        for (int i = 0, s = 0; i < p->nlayers; i++) {
            while (s + 1 < c->nprocs && c->stage_start[s + 1] <= i)
                s++;
            if (s > 0 && strcmp(p->layers[i].name, name) == 0 &&
                plan_conf_set(layers->items[k], "location", singa_conf_new_num(s)) < 0) {
                singa_conf_free(net);
                return NULL;
            }
        }
    }
    return net;
}

static int pipeline_ok(const singa_plan_profile *p, const singa_conf *conf, const singa_registry *reg,
                       singa_plan_config *c)
{
    if (c->nprocs > SINGA_PLAN_MAX_STAGES || pipeline_cut(p, c->nprocs, c) < 0)
        return -1;
    singa_conf *net = plan_pipeline_net(p, c, singa_conf_get(conf, "neuralnet"));
    singa_graph g = {0};
    singa_err err;
    int rc = net ? singa_graph_build(&g, net, SINGA_PHASE_TRAIN, c->nprocs, reg, &err) : -1;
    singa_graph_free(&g);
    singa_conf_free(net);
    return rc;
}

/* Why a net allows no configuration of several processes, or NULL. */
static const char *why_not(const singa_plan_profile *p, char *buf, size_t len)
{
    for (int i = 0; p->whole_batch && i < p->nlayers; i++)
        if (strcmp(p->layers[i].type, "kBM") == 0 || strcmp(p->layers[i].type, "kCSVOutput") == 0) {
            snprintf(buf, len, "layer '%s' (%s) needs the whole batch in one net of one process", p->layers[i].name,
                     p->layers[i].type);
            return buf;
        }
    if (p->whole_batch) {
        snprintf(buf, len, "a layer needs the whole batch in one net of one process");
        return buf;
    }
    return NULL;
}

/* The data-parallel configurations: the batch divided among the n processes. */
static int data_parallel(int n, singa_plan_config *out)
{
    int k = 0;
    out[k++] = config(SINGA_PLAN_ALLREDUCE, n, SINGA_COMPRESS_NONE, "allreduce");
    out[k++] = config(SINGA_PLAN_ALLREDUCE, n, SINGA_COMPRESS_FP16, "allreduce fp16");
    out[k++] = config(SINGA_PLAN_ALLREDUCE, n, SINGA_COMPRESS_BF16, "allreduce bf16");
    out[k++] = topk(n, SINGA_COMPRESS_FP16, "allreduce top-k 1%");
    out[k++] = topk(n, SINGA_COMPRESS_INT8, "allreduce top-k 1% int8");
    out[k] = config(SINGA_PLAN_ALLREDUCE, n, SINGA_COMPRESS_POWERSGD, "allreduce powersgd 4");
    out[k++].powersgd = POWERSGD_RANK;
    out[k++] = config(SINGA_PLAN_SANDBLASTER, n, SINGA_COMPRESS_NONE, "sandblaster");
    return k;
}

int plan_candidates(singa_plan *plan, const singa_conf *conf, const singa_registry *reg, int n,
                    singa_plan_config *out)
{
    singa_plan_profile *p = &plan->profile;
    int k = 0;
    out[k++] = config(SINGA_PLAN_ONE, 1, SINGA_COMPRESS_NONE, "one process");
    plan->why_none[0] = 0;
    if (n < 2)
        return k;
    if (why_not(p, plan->why_none, sizeof plan->why_none))
        return k;
    /* data-parallel and the feature cut divide the batch; Hogwild's groups and the pipeline's
     * micro-batches do not depend on n */
    bool divides = p->batch % n == 0;
    if (divides)
        k += data_parallel(n, out + k);
    for (int h = 0; h < 2; h++) {
        out[k] = config(SINGA_PLAN_HOGWILD, n, h ? SINGA_COMPRESS_FP16 : SINGA_COMPRESS_NONE,
                        h ? "hogwild outer fp16" : "hogwild outer");
        out[k++].sync_freq = SYNC_FREQ;
    }
    if (divides && p->kbp && feature_dims(p, conf, reg, n) == 0)
        out[k++] = config(SINGA_PLAN_FEATURE, n, SINGA_COMPRESS_NONE, "feature cut");
    out[k] = config(SINGA_PLAN_PIPELINE, n, SINGA_COMPRESS_NONE, "pipeline");
    if (p->kbp && pipeline_ok(p, conf, reg, &out[k]) == 0)
        snprintf(out[k].name, sizeof out[k].name, "pipeline m=%d", out[k].micro_batches), k++;
    return k;
}

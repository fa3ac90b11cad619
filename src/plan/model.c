/* The planner's cost model: a configuration's step from the profile's measured costs.  Each
 * term is one line of docs/03-clusters.md's "Planning": compute split by the framework's
 * partitioning (a process of one core each), transfers as bytes / bandwidth + a latency per
 * message each way of each round, the codecs' CPU per float, the pipeline's bubble; and what the
 * processes on one machine share (machine.c): its memory bandwidth, which params larger than a
 * core's L2 and the codecs' passes over them stream through at once, and its cores, which a
 * process with fewer of them than busy threads (worker, stub, server) shares with its stub and
 * server: their messages and copies come out of the worker's time, and no round hides behind its
 * compute; and a machine with fewer cores than processes runs each process's CPU terms that much
 * longer.  Processes spread over hosts (hosts.c) exchange over the local link within a host and
 * share the host's interface to the others. */
#include <math.h>
#include <stddef.h>

#include "plan/plan.h"

/* Passes over a param's floats a step streams from memory: the forward's, the data gradient's and
 * the weight gradient's products and the update; a codec's per float it codes (fp16, bf16, top-k,
 * int8: read, residual or half-width written, read back, written), PowerSGD's per float of M (the
 * gradient in, M read and written, Q' read, the update expanded, the server's shard and the
 * feedback: about 8, BENCHMARKS' count). */
enum { PARAM_PASSES = 4, CODEC_PASSES = 3, POWERSGD_PASSES = 8, BUSY_THREADS = 3 };

typedef struct sums {
    double C, bwd, P, M, F, A; /* layers' seconds, of which backward; params, 2-D, factors; features */
    double params;             /* how many */
    double first_bwd, first_P; /* the first layer with params: its gradient is ready last */
} sums;

static sums sum(const singa_plan_profile *p)
{
    sums s = {0};
    for (int i = 0; i < p->nlayers; i++) {
        const singa_plan_layer *l = &p->layers[i];
        s.C += l->fwd + l->bwd, s.bwd += l->bwd;
        s.params += l->params;
        s.P += l->param_floats, s.M += l->matrix_floats, s.F += l->factor_floats, s.A += l->out_floats;
        if (s.first_P == 0 && l->param_floats > 0)
            s.first_P = l->param_floats, s.first_bwd = l->bwd;
    }
    return s;
}

/* The processes of n that run at once on one machine (its cores and memory shared). */
static int sharing(const singa_plan_link *l, int n)
{
    int k = l->per_host < n ? l->per_host : n;
    k = k < 1 ? 1 : k;
    return k;
}

/* Seconds more a process's passes over arrays of `size` floats (`streamed` floats in all) take
 * when the processes on its machine stream theirs at once: k of them share the memory bandwidth
 * (none when the arrays fit in a core's L2). */
static double contention(const singa_plan_profile *p, const singa_plan_link *l, int n, double size, double streamed)
{
    const singa_plan_machine *m = &p->machine;
    int k = sharing(l, n) < m->cores ? sharing(l, n) : m->cores;
    if (k < 2 || m->memory <= 0 || 4 * size <= m->cache)
        return 0;
    return (k - 1) * 4 * streamed / m->memory;
}

/* The processes of a machine with fewer cores than processes take turns on them: each of its CPU
 * terms (and on one host its copies) takes processes / cores as long. */
static double crowding(const singa_plan_profile *p, const singa_plan_link *l, int n)
{
    int k = sharing(l, n), cores = p->machine.cores;
    return cores > 0 && k > cores ? (double)k / cores : 1;
}

/* A process has fewer cores than busy threads: its stub and server run on its worker's. */
static bool serial(const singa_plan_profile *p, const singa_plan_link *l, int n)
{
    return p->machine.cores > 0 && p->machine.cores < BUSY_THREADS * sharing(l, n);
}

/* The CPU of a process's stub and server when serial: each message it sends or gets from another
 * process, and over a network each byte's copies (on one host the transfer already counts them). */
static double stub_cpu(const singa_plan_profile *p, const singa_plan_link *l, int n, double messages, double bytes)
{
    return serial(p, l, n) ? messages * p->machine.message + (l->copies ? 0 : bytes * l->copy) : 0;
}

/* Bytes of one process's whole gradient on the wire (*g), of the answer back (*v), the rounds a
 * step takes, the codecs' seconds per process and the floats they stream from memory (*streamed,
 * passes counted). */
static void dense_wire(const singa_plan_config *cfg, const singa_plan_codec *c, const sums *s, double *g, double *v,
                       int *rounds, double *codec, double *streamed)
{
    int n = cfg->nprocs;
    double share = (double)(n - 1) / n, k = ceil(cfg->compress.topk * s->P);
    *rounds = 1;
    switch (cfg->compress.kind) {
    case SINGA_COMPRESS_FP16:
    case SINGA_COMPRESS_BF16:
        *g = *v = 2 * s->P;
        *codec = (cfg->compress.kind == SINGA_COMPRESS_FP16 ? c->fp16 : c->bf16) * s->P * (1 + share);
        *streamed = CODEC_PASSES * s->P * (1 + share);
        return;
    case SINGA_COMPRESS_TOPK: /* only the slices of other processes' servers go as top-k (with
                               * error feedback, as measured), except with values = "update" */
        *g = 8 * k;
        *streamed = CODEC_PASSES * share * s->P;
        switch (cfg->compress.values) {
        case SINGA_COMPRESS_NONE: *v = 4 * s->P, *codec = c->topk * share * s->P; break;
        case SINGA_COMPRESS_INT8: *v = s->P + s->P / 64, *codec = (c->topk + c->int8) * share * s->P; break;
        case SINGA_COMPRESS_UPDATE:
            *v = fmin(8 * k * n, 8 * s->P), *codec = c->topk * s->P, *streamed = CODEC_PASSES * s->P;
            break;
        default: *v = 2 * s->P, *codec = (c->topk + c->fp16) * share * s->P; break;
        }
        return;
    case SINGA_COMPRESS_POWERSGD: /* two rounds of factors both ways; 1-D params as fp16 */
        *g = *v = 4 * cfg->powersgd * s->F + 2 * (s->P - s->M);
        *rounds = 2;
        *codec = c->powersgd * s->M + c->fp16 * (s->P - s->M);
        *streamed = POWERSGD_PASSES * s->M;
        return;
    default:
        *g = *v = 4 * s->P;
        *codec = *streamed = 0;
    }
}

/* Bytes of error feedback's residuals a process keeps: what top-k did not send of the slices it
 * encodes (runtime's residuals.c). */
static double residual_bytes(const singa_compress *z, int n, double P)
{
    if (z->kind != SINGA_COMPRESS_TOPK || !z->error_feedback)
        return 0;
    return z->values == SINGA_COMPRESS_UPDATE ? 4 * P : 4 * P * (n - 1) / n;
}

/* Every replica applies the summed update itself: no dense values come back. */
static bool replicas_update(const singa_compress *c)
{
    return c->kind == SINGA_COMPRESS_POWERSGD || (c->kind == SINGA_COMPRESS_TOPK && c->values == SINGA_COMPRESS_UPDATE);
}

static void data_parallel(const singa_plan_profile *p, const singa_plan_link *l, const singa_plan_codec *c,
                          const singa_plan_config *cfg, const sums *s, singa_plan_prediction *o)
{
    int n = cfg->nprocs, rounds;
    double g, v, streamed, share = (double)(n - 1) / n;
    dense_wire(cfg, c, s, &g, &v, &rounds, &o->codec, &streamed);
    if (cfg->scheme == SINGA_PLAN_SANDBLASTER) { /* workers in n - 1 processes, the servers' in the last */
        o->compute = s->C / (n - 1) + p->update;
        double t = (n - 1) * fmax(g, v) / plan_link_bandwidth(l, n) + 2 * rounds * plan_link_latency(l, n);
        o->transfer = l->copies ? t : fmax(t - s->bwd / (n - 1), t * s->first_P / s->P);
        o->wire_bytes = (n - 1) * (g + v);
        o->memory_bytes = 4 * (3 * s->P) + 4 * 2 * s->A / (n - 1);
        return;
    }
    /* A process's rows: the net profiled at batch / n where it was, else the whole batch's / n. */
    sums at = p->share ? sum(p->share) : (sums){.C = s->C / n, .bwd = s->bwd / n, .first_bwd = s->first_bwd / n};
    /* every replica applies the summed update itself, and the servers their shards' too */
    o->compute = at.C + (replicas_update(&cfg->compress) ? p->update + p->update / n : p->update / n) +
                 contention(p, l, n, s->P, PARAM_PASSES * s->P + streamed);
    /* Over a network gradients leave as the backward pass makes them, and values come back before
     * the forward needs them: all but the first layer's round hide behind the backward of the
     * layers below, when the process has a core for its stub.  On one host the copies take the
     * cores the compute needs. */
    double t = plan_wire_seconds(l, n, g + v) + 2 * rounds * plan_link_latency(l, n);
    o->transfer = l->copies || serial(p, l, n) ? t : fmax(t - (at.bwd - at.first_bwd), t * s->first_P / s->P);
    /* between processes, per round: each param's n - 1 slices to other processes' servers and
     * back, and as many from the others to this process's server and back */
    o->stub = stub_cpu(p, l, n, 4.0 * (n - 1) * s->params * rounds, share * (g + v));
    o->wire_bytes = 2 * share * (g + v);
    o->memory_bytes = 4 * (2 + 1.0 / n) * s->P + 4 * 2 * s->A / n + residual_bytes(&cfg->compress, n, s->P);
}

/* The feature cut: every layer's work split n ways, a bridge round (gather forward, reduce
 * backward) wherever a layer on the features reads a whole input or a layer on the batch reads
 * features; nothing hides them, each layer waits on its bridge: its latencies, its bytes and, in a
 * process whose stub shares the worker's core, its messages through both stubs and its copies on
 * both sides.  Each process streams its rows of the weights.  The compute is the cut's own step
 * when the profile timed it among n threads (the waits at its bridges included), else the
 * layers' shares. */
static void feature(const singa_plan_profile *p, const singa_plan_link *l, const singa_plan_config *cfg,
                    const sums *s, singa_plan_prediction *o)
{
    int n = cfg->nprocs, bridges = 0;
    double full = 0, share = (double)(n - 1) / n;
    for (int i = 0; i < p->nlayers; i++) {
        const singa_plan_layer *a = &p->layers[i];
        if (a->src < 0)
            continue;
        const singa_plan_layer *src = &p->layers[a->src];
        if ((a->dim == 1 && a->param_floats > 0) || (a->dim == 0 && src->dim == 1))
            full += 2 * 4 * src->out_floats, bridges++;
    }
    double bytes = share * full;
    o->compute = p->cut_procs == n && p->cut > 0
                     ? p->cut
                     : s->C / n + p->update / n + contention(p, l, n, s->P / n, PARAM_PASSES * s->P / n);
    o->transfer = plan_wire_seconds(l, n, full) + 2 * bridges * plan_link_latency(l, n);
    /* a bridge's part out and the others' in, forward and backward (each param's rows go to a
     * server in this process) */
    o->stub = stub_cpu(p, l, n, 4.0 * bridges, 2 * bytes);
    o->wire_bytes = 2 * bytes;
    o->memory_bytes = 4 * (2 + 1.0 / n) * s->P + 4 * 2 * s->A / n;
}

/* The stage of layer i: the last whose first layer is at or before it. */
static int stage_of(const singa_plan_config *cfg, int i)
{
    int s = 0;
    while (s + 1 < cfg->nprocs && cfg->stage_start[s + 1] <= i)
        s++;
    return s;
}

/* One micro-batch of layer a (mb: a profiled at the micro-batch's rows, else NULL) of m.  A layer
 * that defers its params' gradients (net/pipeline.c) computes per micro-batch only its sources'
 * gradient, an inner product's one product as large as its forward, and once a step over the
 * whole batch its params' gradient, a product as large as the whole batch's forward (*once). */
static double micro_cost(const singa_plan_layer *a, const singa_plan_layer *mb, int m, double *once)
{
    double fwd = mb ? mb->fwd : a->fwd / m, bwd = mb ? mb->bwd : a->bwd / m;
    if (!a->defers)
        return fwd + bwd;
    *once += a->fwd;
    return 2 * fwd;
}

/* Layers placed in n stages, m micro-batches in 1F1B: a slot is the slowest stage's micro-batch
 * or a micro-batch's crossing, whichever is longer; m + S - 1 slots a step, S - 1 of them the
 * bubble, and the first micro-batch's crossings out and back exposed; then each stage's deferred
 * params' gradients and its update, once (the slowest stage's). */
static void pipeline(const singa_plan_profile *p, const singa_plan_link *l, const singa_plan_config *cfg,
                     const sums *s, singa_plan_prediction *o)
{
    int n = cfg->nprocs, m = cfg->micro_batches;
    double stage[SINGA_PLAN_MAX_STAGES] = {0}, once[SINGA_PLAN_MAX_STAGES] = {0};
    double params[SINGA_PLAN_MAX_STAGES] = {0}, feats[SINGA_PLAN_MAX_STAGES] = {0};
    double cross = 0, tau = 0, last = 0, memory = 0;
    for (int i = 0; i < p->nlayers; i++) {
        const singa_plan_layer *a = &p->layers[i], *mb = p->micro ? &p->micro->layers[i] : NULL;
        int at = stage_of(cfg, i);
        stage[at] += micro_cost(a, mb, m, &once[at]);
        once[at] += s->P > 0 ? p->update * a->param_floats / s->P : 0;
        params[at] += a->param_floats, feats[at] += a->out_floats;
        if (a->src >= 0 && stage_of(cfg, a->src) != at)
            cross = fmax(cross, 4 * p->layers[a->src].out_floats), o->wire_bytes += 2 * 4 * p->layers[a->src].out_floats;
    }
    for (int k = 0; k < n; k++)
        tau = fmax(tau, stage[k]), last = fmax(last, once[k]), memory = fmax(memory, 4 * (3 * params[k] + 2 * feats[k]));
    double hop = cross / m / plan_link_bandwidth(l, n) + plan_link_latency(l, n), slot = fmax(tau, hop);
    o->compute = m * tau + last;
    o->transfer = m * (slot - tau) + 2 * (n - 1) * hop;
    o->bubble = (n - 1) * slot;
    o->memory_bytes = memory;
}

/* A group per process training the whole batch; every sync_freq steps each group's change goes
 * to the slices' masters and the new values come back (fp16 or bf16 when compressed so).  The
 * servers sync while the workers train on, as in SINGA's Hogwild: over a network the link holds
 * the steps up only when it needs longer than they take; on one host its copies are the cores'
 * work. */
static void hogwild(const singa_plan_profile *p, const singa_plan_link *l, const singa_plan_codec *c,
                    const singa_plan_config *cfg, const sums *s, singa_plan_prediction *o)
{
    int n = cfg->nprocs;
    bool half = cfg->compress.kind == SINGA_COMPRESS_FP16 || cfg->compress.kind == SINGA_COMPRESS_BF16;
    double share = (double)(n - 1) / n, full = s->P * (half ? 2 : 4) * 2, bytes = share * full, h = cfg->sync_freq;
    o->compute = s->C + p->update + contention(p, l, n, s->P, PARAM_PASSES * s->P);
    double t = (plan_wire_seconds(l, n, full) + 2 * plan_link_latency(l, n)) / h;
    o->transfer = l->copies ? t : fmax(0, t - o->compute);
    o->stub = stub_cpu(p, l, n, 4.0 * (n - 1) * s->params / h, bytes / h);
    o->codec = half ? 2 * c->fp16 * s->P / h : 0;
    o->wire_bytes = 2 * bytes / h;
    o->memory_bytes = 4 * (5 * s->P + 2 * s->A);
}

void singa_plan_predict(const singa_plan_profile *p, const singa_plan_link *l, const singa_plan_codec *c,
                        const singa_plan_config *cfg, singa_plan_prediction *out)
{
    sums s = sum(p);
    *out = (singa_plan_prediction){0};
    switch (cfg->scheme) {
    case SINGA_PLAN_ONE:
        out->compute = p->step;
        out->memory_bytes = 4 * (3 * s.P + 2 * s.A);
        break;
    case SINGA_PLAN_ALLREDUCE:
    case SINGA_PLAN_SANDBLASTER: data_parallel(p, l, c, cfg, &s, out); break;
    case SINGA_PLAN_FEATURE: feature(p, l, cfg, &s, out); break;
    case SINGA_PLAN_PIPELINE: pipeline(p, l, cfg, &s, out); break;
    case SINGA_PLAN_HOGWILD: hogwild(p, l, c, cfg, &s, out); break;
    }
    out->transfer = fmax(0, out->transfer);
    if (cfg->scheme != SINGA_PLAN_ONE) {
        double f = crowding(p, l, cfg->nprocs);
        out->compute *= f, out->codec *= f, out->stub *= f;
        out->transfer *= l->copies ? f : 1;
    }
    out->step = out->compute + out->transfer + out->bubble + out->codec + out->stub;
    double images = cfg->scheme == SINGA_PLAN_HOGWILD ? (double)cfg->nprocs * p->batch : p->batch;
    out->images_per_sec = out->step > 0 ? images / out->step : 0;
    const double terms[] = {out->compute, out->transfer, out->bubble, out->codec, out->stub};
    static const char *const names[] = {"compute", "transfer", "bubble", "codec", "stub"};
    int big = 0;
    for (int k = 1; k < 5; k++)
        if (terms[k] > terms[big])
            big = k;
    out->bound = names[big];
}

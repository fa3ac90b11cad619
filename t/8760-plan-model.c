/* The planner's cost model (src/plan/model.c) on a hand-computed case: a net of a data layer, one
 * kInnerProduct (a 100 x 10 weight and 10 biases) and a loss, batch 10, over 2 processes on a link
 * of 1 MB/s and 100 us.  Every term of every framework is checked against the arithmetic written
 * out here, and the step against their sum, so dropping or changing a term fails.  Prints TAP. */
#include <math.h>
#include <string.h>

#include "singa/plan.h"
#include "tap.h"

static singa_plan_layer layers[3] = {
    {.name = "data", .type = "kIDXData", .fwd = 0.001, .out_floats = 100, .src = -1, .dim = 0},
    {.name = "fc1", .type = "kInnerProduct", .fwd = 0.004, .bwd = 0.006, .param_floats = 1010, .matrix_floats = 1000,
     .factor_floats = 110, .out_floats = 100, .src = 0, .dim = 1},
    {.name = "loss", .type = "kSoftmaxLoss", .fwd = 0.001, .bwd = 0.001, .out_floats = 10, .src = 1, .dim = 0},
};
static singa_plan_profile prof = {.layers = layers, .nlayers = 3, .batch = 10, .kbp = true, .step = 0.02,
                                        .update = 0.007, .steps = 5};
static const singa_plan_link link_ = {.name = "test", .bandwidth = 1e6, .latency = 1e-4};
static const singa_plan_codec codec = {.fp16 = 1e-8, .bf16 = 1e-8, .topk = 3e-8, .int8 = 4e-8, .powersgd = 2e-8};

static bool near(double a, double b) { return fabs(a - b) <= 1e-9 + 1e-9 * fabs(b); }

/* Predicts cfg and checks each term, the step (their sum) and images/s. */
static void check(const char *what, singa_plan_config cfg, double compute, double transfer, double bubble,
                  double codec_s, double wire, double images)
{
    singa_plan_prediction p;
    singa_plan_predict(&prof, &link_, &codec, &cfg, &p);
    double step = compute + transfer + bubble + codec_s;
    ok(near(p.compute, compute) && near(p.transfer, transfer) && near(p.bubble, bubble) && near(p.codec, codec_s) &&
           near(p.step, step) && near(p.wire_bytes, wire) && near(p.images_per_sec, images / step),
       "%s: compute %g transfer %g bubble %g codec %g (want %g %g %g %g), step %g (want %g), wire %g (want %g), "
       "images/s %g (want %g)", what, p.compute, p.transfer, p.bubble, p.codec, compute, transfer, bubble, codec_s,
       p.step, step, p.wire_bytes, wire, p.images_per_sec, images / step);
}

static singa_plan_config cfg(singa_plan_scheme s, singa_compress_kind k)
{
    return (singa_plan_config){.scheme = s, .nprocs = 2, .compress = {k, 0, false, k}, .micro_batches = 1, .sync_freq = 1};
}

int main(void)
{
    /* One process: the profile's step. */
    check("one process", (singa_plan_config){.scheme = SINGA_PLAN_ONE, .nprocs = 1}, 0.02, 0, 0, 0, 0, 10);
    /* AllReduce: layers and updates halved; half of the 4040-byte gradient out and of the values
     * back at 1 MB/s plus a round's two latencies; the only param layer's round hides nothing. */
    check("allreduce", cfg(SINGA_PLAN_ALLREDUCE, SINGA_COMPRESS_NONE), 0.01, 0.5 * 8080 / 1e6 + 2e-4, 0, 0, 8080, 10);
    /* fp16: half the bytes; each float encoded and decoded, the servers' share too (1.5 x 1010). */
    check("allreduce fp16", cfg(SINGA_PLAN_ALLREDUCE, SINGA_COMPRESS_FP16), 0.01, 0.5 * 4040 / 1e6 + 2e-4, 0,
          1e-8 * 1010 * 1.5, 4040, 10);
    /* PowerSGD rank 4: factors of 4 x (100 + 10) floats and the bias as fp16 both ways, two rounds;
     * every replica applies the whole update, and each server its half. */
    singa_plan_config psgd = cfg(SINGA_PLAN_ALLREDUCE, SINGA_COMPRESS_POWERSGD);
    psgd.powersgd = 4;
    double f = 4 * 4 * 110 + 2 * 10;
    check("allreduce powersgd 4", psgd, 0.0065 + 0.007 + 0.0035, 0.5 * 2 * f / 1e6 + 4e-4, 0, 2e-8 * 1000 + 1e-8 * 10, 2 * f, 10);
    /* top-k 1% with error feedback, values fp16: 11 (index, value) pairs out, the values back as
     * fp16; only the other process's half goes as top-k (and fp16), and only its half keeps a
     * residual (4 x 505 bytes more). */
    singa_plan_config tk = cfg(SINGA_PLAN_ALLREDUCE, SINGA_COMPRESS_TOPK);
    tk.compress = (singa_compress){SINGA_COMPRESS_TOPK, 0.01, true, SINGA_COMPRESS_FP16};
    check("allreduce top-k 1%", tk, 0.01, 0.5 * (88 + 2020) / 1e6 + 2e-4, 0, (3e-8 + 1e-8) * 505, 88 + 2020, 10);
    singa_plan_prediction with, without;
    singa_plan_predict(&prof, &link_, &codec, &tk, &with);
    tk.compress.error_feedback = false;
    singa_plan_predict(&prof, &link_, &codec, &tk, &without);
    ok(near(with.memory_bytes - without.memory_bytes, 4 * 505), "error feedback's residuals: %g bytes (want %d)",
       with.memory_bytes - without.memory_bytes, 4 * 505);
    /* The Lua and the conf of a top-k row say error_feedback = true, as the runtime reads it. */
    tk.compress.error_feedback = true;
    singa_plan plan = {.profile = prof, .nprocs = 2};
    singa_plan_row row = {.cfg = tk};
    singa_conf *job = singa_conf_new(SINGA_CONF_TABLE), *applied = NULL;
    singa_cluster cl;
    singa_err err = {{0}};
    bool read = job && singa_conf_add(job, "neuralnet", singa_conf_new(SINGA_CONF_TABLE)) == 0 &&
                (applied = singa_plan_apply(&plan, &row, job)) &&
                singa_cluster_read(&cl, singa_conf_get(applied, "cluster"), &err) == 0;
    ok(read && cl.compress.kind == SINGA_COMPRESS_TOPK && cl.compress.error_feedback,
       "cluster.plan = \"auto\"'s top-k cluster has error feedback on (%s)", read ? "read" : err.msg);
    singa_conf_free(job), singa_conf_free(applied);
    /* Sandblaster: one worker process computes it all, the servers' process updates. */
    check("sandblaster", cfg(SINGA_PLAN_SANDBLASTER, SINGA_COMPRESS_NONE), 0.02, 4040 / 1e6 + 2e-4, 0, 0, 8080, 10);
    /* Feature cut: two bridges (fc1 gathers the data's 100 floats, the loss fc1's), each half
     * out and half in both ways, a latency each way. */
    check("feature cut", cfg(SINGA_PLAN_FEATURE, SINGA_COMPRESS_NONE), 0.01, 800 / 1e6 + 4e-4, 0, 0, 1600, 10);
    /* The cut timed among 2 threads (its bridges' waits in it) is its compute; timed among 3, it
     * says nothing of 2 processes. */
    prof.cut = 0.015, prof.cut_procs = 2;
    check("feature cut, timed", cfg(SINGA_PLAN_FEATURE, SINGA_COMPRESS_NONE), 0.015, 800 / 1e6 + 4e-4, 0, 0, 1600, 10);
    prof.cut_procs = 3;
    check("feature cut, timed for 3", cfg(SINGA_PLAN_FEATURE, SINGA_COMPRESS_NONE), 0.01, 800 / 1e6 + 4e-4, 0, 0, 1600,
          10);
    prof.cut = 0, prof.cut_procs = 0;
    /* Pipeline, the loss alone on stage 1, m = 2: stage 0 holds 0.011 s of layers, a slot of
     * 0.0055 s a micro-batch, one slot the bubble, then the whole update (0.007) once; fc1's 400
     * bytes cross per step, 200 a micro-batch (0.0002 s + 100 us a hop), the first micro-batch's
     * hops exposed. */
    singa_plan_config pipe = cfg(SINGA_PLAN_PIPELINE, SINGA_COMPRESS_NONE);
    pipe.micro_batches = 2;
    pipe.stage_start[1] = 2;
    check("pipeline m=2", pipe, 2 * 0.0055 + 0.007, 2 * 0.0003, 0.0055, 0, 800, 10);
    /* fc1 deferring its params' gradients: a micro-batch's backward is its data gradient (as its
     * forward, 0.002 s), the weight gradient once over the whole batch (as the forward, 0.004 s):
     * slots of 0.0005 + 2 x 0.002 s, then 0.004 + 0.007 s once. */
    layers[1].defers = true;
    check("pipeline m=2, fc1 deferred", pipe, 2 * 0.0045 + 0.004 + 0.007, 2 * 0.0003, 0.0045, 0, 800, 10);
    layers[1].defers = false;
    /* Hogwild with an outer optimizer, sync every 50 steps: each process the whole step and batch;
     * the change out and the values back amortised, and the servers sync while the workers train,
     * so over this link they hide behind the steps. */
    singa_plan_config hog = cfg(SINGA_PLAN_HOGWILD, SINGA_COMPRESS_NONE);
    hog.sync_freq = 50;
    check("hogwild outer", hog, 0.02, 0, 0, 0, 2 * 4040 / 50.0, 20);
    {
        /* ... but not a link that needs longer than the steps (a sync every step at 0.1 MB/s),
         * nor on one host, where the copies take the cores */
        singa_plan_link slow = link_, here = link_;
        slow.bandwidth = 1e5, here.copies = true, here.local_bandwidth = 1e6, here.local_latency = 1e-4;
        singa_plan_prediction on_slow, on_host;
        hog.sync_freq = 1;
        singa_plan_predict(&prof, &slow, &codec, &hog, &on_slow);
        hog.sync_freq = 50;
        singa_plan_predict(&prof, &here, &codec, &hog, &on_host);
        ok(near(on_slow.transfer, 0.5 * 8080 / 1e5 + 2e-4 - 0.02) && near(on_host.transfer, (4040 / 1e6 + 2e-4) / 50),
           "hogwild: the link's time beyond the steps' (%g, want %g); on one host all of it (%g, want %g)",
           on_slow.transfer, 0.5 * 8080 / 1e5 + 2e-4 - 0.02, on_host.transfer, (4040 / 1e6 + 2e-4) / 50);
    }
    /* Profiled at a process's half of the batch (5 rows run slower than half of 10's time): its
     * layers' 0.009 s replace 0.013 / 2; the micro-batches' likewise in the pipeline (2 x 0.008
     * s in stage 0, plus its update once). */
    singa_plan_layer half[3];
    memcpy(half, layers, sizeof half);
    half[1].fwd = 0.003, half[1].bwd = 0.004, half[2].fwd = half[2].bwd = 0.0005;
    singa_plan_profile share = prof;
    share.layers = half;
    prof.share = prof.micro = &share;
    check("allreduce at half the batch", cfg(SINGA_PLAN_ALLREDUCE, SINGA_COMPRESS_NONE), 0.009 + 0.0035,
          0.5 * 8080 / 1e6 + 2e-4, 0, 0, 8080, 10);
    check("pipeline m=2 at micro-batches", pipe, 2 * 0.008 + 0.007, 2 * 0.0003, 0.008, 0, 800, 10);
    prof.share = prof.micro = NULL;
    /* A net whose loss has params too: over a network the backward below the loss (fc1's, halved
     * over the 2 processes) hides part of the rounds; on one host the transfers are the CPU's
     * copies, and nothing hides them. */
    singa_plan_layer two[3];
    memcpy(two, layers, sizeof two);
    two[2].param_floats = 1010, two[2].bwd = 0.003;
    singa_plan_profile prof2 = prof;
    prof2.layers = two;
    prof2.step = 0.022;
    singa_plan_link net = link_, local = link_;
    local.copies = true;
    singa_plan_config ar2 = cfg(SINGA_PLAN_ALLREDUCE, SINGA_COMPRESS_NONE);
    singa_plan_prediction over_net, on_host;
    singa_plan_predict(&prof2, &net, &codec, &ar2, &over_net);
    singa_plan_predict(&prof2, &local, &codec, &ar2, &on_host);
    double t2 = 0.5 * 16160 / 1e6 + 2e-4; /* both layers' gradients and values */
    ok(near(on_host.transfer, t2) && near(over_net.transfer, t2 - 0.003 / 2),
       "one host: the whole transfer %g (want %g); a network: less the loss's backward %g (want %g)",
       on_host.transfer, t2, over_net.transfer, t2 - 0.0015);
    singa_plan_prediction p;
    singa_plan_predict(&prof, &link_, &codec, &pipe, &p);
    ok(strcmp(p.bound, "compute") == 0, "the pipeline's largest term is its compute (got %s)", p.bound);
    singa_plan_link slow = link_;
    slow.bandwidth = 1e3;
    singa_plan_config ar = cfg(SINGA_PLAN_ALLREDUCE, SINGA_COMPRESS_NONE);
    singa_plan_predict(&prof, &slow, &codec, &ar, &p);
    ok(strcmp(p.bound, "transfer") == 0, "at 1 kB/s allreduce is bound by its transfers (got %s)", p.bound);
    /* The ranking: by speed, but fp16 at 100 images/s and none at 98.5 tie (within 3%), so none
     * goes first; top-k at 98 does not pass fp16 (it compresses more), nor none at 90 top-k. */
    singa_plan_row rows[4] = {{.cfg = cfg(SINGA_PLAN_ALLREDUCE, SINGA_COMPRESS_TOPK), .pred.images_per_sec = 98},
                              {.cfg = cfg(SINGA_PLAN_ALLREDUCE, SINGA_COMPRESS_NONE), .pred.images_per_sec = 90},
                              {.cfg = cfg(SINGA_PLAN_HOGWILD, SINGA_COMPRESS_FP16), .pred.images_per_sec = 100},
                              {.cfg = cfg(SINGA_PLAN_HOGWILD, SINGA_COMPRESS_NONE), .pred.images_per_sec = 98.5}};
    singa_plan_order(rows, 4);
    ok(rows[0].pred.images_per_sec == 98.5 && rows[1].pred.images_per_sec == 100 && rows[2].pred.images_per_sec == 98 &&
           rows[3].pred.images_per_sec == 90,
       "ranked %g %g %g %g (want 98.5 100 98 90)", rows[0].pred.images_per_sec, rows[1].pred.images_per_sec,
       rows[2].pred.images_per_sec, rows[3].pred.images_per_sec);
    return done_testing();
}

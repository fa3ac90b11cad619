/* The planner's terms for what processes on one machine share (src/plan/model.c, machine.c), on
 * t/8760's hand-computed net (a 100 x 10 weight, batch 10, 2 processes): the memory bandwidth that
 * params larger than a core's L2 and the codecs' passes over them stream through at once, and the
 * cores a process with fewer of them than busy threads shares with its stub and server (their
 * messages and copies serialised with the worker's compute, no round hidden behind it), and the
 * feature cut's bridges charged their messages.  Each checked against the arithmetic written out,
 * and against the same prediction with the term off.  Prints TAP. */
#include <math.h>
#include <string.h>

#include "singa/plan.h"
#include "plan-fixture.h"
#include "tap.h"

/* 2 cores, memory at 1 MB/s, an L2 of 1000 bytes (the 8080 bytes of params do not fit), 10 us a message */
static const singa_plan_machine two_cores = {.cores = 2, .memory = 1e6, .cache = 1000, .message = 1e-5};

static singa_plan_prediction predict(singa_plan_machine m, singa_plan_link l, singa_plan_scheme s,
                                     singa_compress_kind k)
{
    singa_plan_profile p = {.layers = layers, .nlayers = 3, .batch = 10, .kbp = true, .step = 0.022, .update = 0.007,
                            .steps = 5, .machine = m};
    singa_plan_config c = {.scheme = s, .nprocs = 2, .compress = {k, 0, false, k}, .micro_batches = 1,
                           .sync_freq = s == SINGA_PLAN_HOGWILD ? 50 : 1, .powersgd = 4};
    singa_plan_prediction o;
    singa_plan_predict(&p, &l, &codec, &c, &o);
    return o;
}

int main(void)
{
    const double P = 2020, B = 1e6;
    singa_plan_link net = {.name = "net", .bandwidth = 1e6, .latency = 1e-4, .copy = 1e-9, .per_host = 2};
    singa_plan_link apart = net;
    apart.per_host = 1;
    singa_plan_machine roomy = two_cores, none = {0};
    roomy.cores = 8;
    roomy.cache = 1e9;

    /* Memory: both processes stream the params' 4 passes at once, each pass twice as long. */
    singa_plan_prediction ar = predict(roomy, net, SINGA_PLAN_ALLREDUCE, SINGA_COMPRESS_NONE),
                          shared = predict(two_cores, net, SINGA_PLAN_ALLREDUCE, SINGA_COMPRESS_NONE);
    ok(near(shared.compute - ar.compute, 4 * 4 * P / B), "2 processes on one machine: allreduce's compute %g more "
       "(want %g: 4 passes over 8080 bytes at 1 MB/s)", shared.compute - ar.compute, 4 * 4 * P / B);
    singa_plan_prediction hog = predict(roomy, net, SINGA_PLAN_HOGWILD, SINGA_COMPRESS_NONE),
                          hog2 = predict(two_cores, net, SINGA_PLAN_HOGWILD, SINGA_COMPRESS_NONE);
    ok(near(hog2.compute - hog.compute, 4 * 4 * P / B), "Hogwild's groups stream their whole params at once: %g more",
       hog2.compute - hog.compute);
    singa_plan_prediction far = predict(two_cores, apart, SINGA_PLAN_ALLREDUCE, SINGA_COMPRESS_NONE);
    ok(near(far.compute, ar.compute), "a process alone on its machine shares no memory (%g, want %g)", far.compute,
       ar.compute);

    /* Codec work: PowerSGD's 8 passes over M streamed with the params'; more codec work, fewer images. */
    singa_plan_prediction ps = predict(two_cores, net, SINGA_PLAN_ALLREDUCE, SINGA_COMPRESS_POWERSGD),
                          ps_roomy = predict(roomy, net, SINGA_PLAN_ALLREDUCE, SINGA_COMPRESS_POWERSGD);
    ok(near(ps.compute - ps_roomy.compute, 4 * (4 * P + 8 * 2000) / B),
       "PowerSGD: its 8 passes over M's 2000 floats contend too (%g more, want %g)", ps.compute - ps_roomy.compute,
       4 * (4 * P + 8 * 2000) / B);
    singa_plan_prediction fp = predict(two_cores, net, SINGA_PLAN_ALLREDUCE, SINGA_COMPRESS_FP16);
    ok(fp.compute > shared.compute && ps.images_per_sec < predict(roomy, net, SINGA_PLAN_ALLREDUCE,
       SINGA_COMPRESS_POWERSGD).images_per_sec, "a codec's passes lower the predicted rate (fp16 compute %g > %g)",
       fp.compute, shared.compute);

    /* Cores: 2 cores for 2 processes of 3 busy threads: the stub's messages and a network's copies
     * come out of the worker's time, and no round hides behind the backward pass. */
    /* each of the 4 params: its slice to the other process and back, and the other's to this one */
    double msgs = 4 * 1 * 4, bytes = 0.5 * 2 * 4 * P;
    ok(near(shared.stub, msgs * 1e-5 + bytes * 1e-9) && near(ar.stub, 0),
       "one core per process: the stub's %g messages and %g bytes' copies, %g s (want %g); with cores to spare 0 (%g)",
       msgs, bytes, shared.stub, msgs * 1e-5 + bytes * 1e-9, ar.stub);
    double t = bytes / 1e6 + 2e-4;
    ok(near(shared.transfer, t) && ar.transfer < t, "one core per process: the whole transfer %g (want %g); with "
       "cores to spare less (%g)", shared.transfer, t, ar.transfer);
    ok(near(shared.step, shared.compute + shared.transfer + shared.codec + shared.stub),
       "the step is its terms' sum, the stub's included (%g)", shared.step);
    singa_plan_link host = net;
    host.copies = true;
    singa_plan_prediction local = predict(two_cores, host, SINGA_PLAN_ALLREDUCE, SINGA_COMPRESS_NONE);
    ok(near(local.stub, msgs * 1e-5), "on one host the copies are the transfer's, the stub charged its messages only "
       "(%g)", local.stub);

    /* The feature cut: each bridge's part out and the other's in, forward and backward, the bridges'
     * bytes copied on both sides; its rows of the params contend. */
    singa_plan_prediction fc = predict(two_cores, net, SINGA_PLAN_FEATURE, SINGA_COMPRESS_NONE),
                          fc_roomy = predict(roomy, net, SINGA_PLAN_FEATURE, SINGA_COMPRESS_NONE);
    double bridge_bytes = 0.5 * 2 * 4 * (100 + 100); /* fc1 gathers the data, the loss reduces fc1's */
    ok(near(fc.stub, 4 * 2 * 1e-5 + 2 * bridge_bytes * 1e-9) && near(fc_roomy.stub, 0),
       "feature cut: its bridges' messages and copies %g (want %g)", fc.stub, 4 * 2 * 1e-5 + 2 * bridge_bytes * 1e-9);
    ok(near(fc.compute - fc_roomy.compute, 4 * 4 * P / 2 / B), "feature cut: half the params each, contending (%g)",
       fc.compute - fc_roomy.compute);

    /* A machine not measured charges none of it (t/8760's case). */
    singa_plan_prediction bare = predict(none, net, SINGA_PLAN_ALLREDUCE, SINGA_COMPRESS_NONE);
    ok(near(bare.compute, ar.compute) && bare.stub == 0, "no machine measured: no term (%g, %g)", bare.compute,
       bare.stub);

    /* The measurement itself. */
    singa_plan_machine m;
    singa_plan_machine_measure(&m);
    ok(m.cores >= 1 && m.memory > 1e8 && m.cache > 0 && m.message > 0 && m.message < 0.1,
       "this machine: %d cores, memory %.2g B/s, L2 %.0f bytes, a message %.3g s", m.cores, m.memory, m.cache,
       m.message);
    return done_testing();
}

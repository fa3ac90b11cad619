/* The planner's model of processes spread over hosts (src/plan/hosts.c, --procs N --hosts ...)
 * and of a machine with fewer cores than processes (model.c), on t/8760's hand-computed net (a
 * 100 x 10 weight, batch 10): 4 processes over 2 hosts exchange over the local link within a host
 * and share its interface to the other, so each is slower than over 4 hosts; the slower link
 * bounds a round; all on one host, only the local link counts; and 4 processes on 2 cores take
 * twice each CPU term.  Each checked against the arithmetic written out.  Prints TAP. */
#include <math.h>

#include "singa/plan.h"
#include "plan-fixture.h"
#include "tap.h"

static singa_plan_prediction predict(int cores, singa_plan_link l, singa_plan_scheme s, singa_compress_kind k)
{
    singa_plan_profile p = {.layers = layers, .nlayers = 3, .batch = 12, .kbp = true, .step = 0.022, .update = 0.007,
                            .steps = 5, .machine = {.cores = cores, .memory = 1e6, .cache = 1e9, .message = 1e-5}};
    singa_plan_config c = {.scheme = s, .nprocs = 4, .compress = {k, 0, false, k}, .micro_batches = 1,
                           .sync_freq = s == SINGA_PLAN_HOGWILD ? 50 : 1, .powersgd = 4};
    singa_plan_prediction o;
    singa_plan_predict(&p, &l, &codec, &c, &o);
    return o;
}

int main(void)
{
    const double full = 8 * 2020; /* allreduce: a process's gradient out and values back, bytes */
    /* 1 MB/s and 100 us between hosts, 10 MB/s and 10 us within one */
    singa_plan_link four = {.name = "net", .bandwidth = 1e6, .latency = 1e-4, .copy = 1e-9, .per_host = 1,
                            .local_bandwidth = 1e7, .local_latency = 1e-5};
    singa_plan_link two = four;
    two.per_host = two.per_nic = 2;

    /* 2 cores: a process of 3 busy threads on each, so no round hides behind the backward pass */
    singa_plan_prediction apart = predict(2, four, SINGA_PLAN_ALLREDUCE, SINGA_COMPRESS_NONE),
                          paired = predict(2, two, SINGA_PLAN_ALLREDUCE, SINGA_COMPRESS_NONE);
    ok(near(apart.transfer, 0.75 * full / 1e6 + 2e-4), "4 hosts: each process's 3 shares of 4 over its own interface, "
       "%g s (want %g)", apart.transfer, 0.75 * full / 1e6 + 2e-4);
    ok(near(paired.transfer, 2 * 2 / 4.0 * full / 1e6 + 2e-4),
       "2 hosts of 2: the interface carries both processes' 2 shares to the other host, %g s (want %g)",
       paired.transfer, full / 1e6 + 2e-4);
    ok(paired.images_per_sec < apart.images_per_sec, "4 processes over 2 hosts are slower than over 4 (%g < %g images/s)",
       paired.images_per_sec, apart.images_per_sec);

    singa_plan_link slow_local = two;
    slow_local.local_bandwidth = 1e5, slow_local.local_latency = 1e-3;
    singa_plan_prediction bound = predict(2, slow_local, SINGA_PLAN_ALLREDUCE, SINGA_COMPRESS_NONE);
    ok(near(bound.transfer, 0.25 * full / 1e5 + 2e-3), "the slower link bounds: a local link at 100 kB/s carries the "
       "share to the host's other process, %g s (want %g)", bound.transfer, 0.25 * full / 1e5 + 2e-3);

    singa_plan_link one = four;
    one.per_host = one.per_nic = 4;
    singa_plan_prediction local = predict(8, one, SINGA_PLAN_ALLREDUCE, SINGA_COMPRESS_NONE);
    ok(near(local.transfer, 0.75 * full / 1e7 + 2e-5), "all 4 on one host: only the local link, %g s (want %g)",
       local.transfer, 0.75 * full / 1e7 + 2e-5);

    /* Hogwild's rounds hide behind the steps at 1 MB/s; at 1 kB/s they need longer, and what
     * they need beyond the steps counts */
    singa_plan_link four_slow = four, two_slow = two;
    four_slow.bandwidth = two_slow.bandwidth = 1e3;
    singa_plan_prediction hog4 = predict(2, four_slow, SINGA_PLAN_HOGWILD, SINGA_COMPRESS_NONE),
                          hog2 = predict(2, two_slow, SINGA_PLAN_HOGWILD, SINGA_COMPRESS_NONE),
                          hidden = predict(2, two, SINGA_PLAN_HOGWILD, SINGA_COMPRESS_NONE);
    ok(hog4.transfer > 0 && near(hog2.transfer - hog4.transfer, (full - 0.75 * full) / 1e3 / 50) && hidden.transfer == 0,
       "Hogwild's round every 50 steps at 1 kB/s: 2 hosts of 2 take %g s more a step (want %g); at 1 MB/s hidden (%g)",
       hog2.transfer - hog4.transfer, 0.25 * full / 1e3 / 50, hidden.transfer);

    /* Cores: 2 processes a host on 2 cores, and on 1 (--plan-cores 1): each CPU term twice as long. */
    singa_plan_prediction crowded = predict(1, two, SINGA_PLAN_ALLREDUCE, SINGA_COMPRESS_FP16),
                          fits = predict(2, two, SINGA_PLAN_ALLREDUCE, SINGA_COMPRESS_FP16);
    ok(near(crowded.compute, 2 * fits.compute) && near(crowded.codec, 2 * fits.codec) && near(crowded.stub, 2 * fits.stub),
       "2 processes on 1 core: compute %g, codec %g, stub %g, twice those on 2 cores (%g, %g, %g)", crowded.compute,
       crowded.codec, crowded.stub, fits.compute, fits.codec, fits.stub);
    ok(near(crowded.transfer, fits.transfer), "over a network the transfer is not the cores' (%g, %g)", crowded.transfer,
       fits.transfer);
    singa_plan_prediction crowded_hog = predict(1, two, SINGA_PLAN_HOGWILD, SINGA_COMPRESS_NONE);
    ok(crowded_hog.images_per_sec < hidden.images_per_sec, "Hogwild's groups on shared cores: fewer images/s (%g < %g)",
       crowded_hog.images_per_sec, hidden.images_per_sec);
    return done_testing();
}

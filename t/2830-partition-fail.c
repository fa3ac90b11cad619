/* A worker's part that fails stops the whole partitioned net, never leaving another worker
 * waiting at a bridge: a layer that fails its forward pass on a chosen step, placed on worker 1
 * (the lead, worker 0, waits for its output) and on worker 0 (worker 1 waits for the lead's),
 * makes singa_net_forward return that error, named after the worker, after the steps before it
 * ran; the net is freed and its threads end.  An alarm turns a hang into a failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "layers/layers.h"
#include "singa/singa.h"
#include "tap.h"

typedef struct fail_state {
    int passes;
} fail_state;

static const singa_field fail_fields[] = {{"fail_at", SINGA_FIELD_INT}, {NULL, 0}};

/* The identity, until its forward pass number fail_at. */
static int fail_forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    fail_state *s = l->state;
    if (s->passes++ == singa_conf_int(l->conf, "fail_at", -1))
        return singa_layer_err(l, err, "failed on purpose in pass %d", s->passes - 1);
    return singa_layer_copy_forward(l, phase, err);
}

static const singa_layer_type fail_type = {
    .name = "kFailAt", .fields = fail_fields, .min_src = 1, .max_src = 1, .state_size = sizeof(fail_state),
    .setup = singa_layer_setup_copy, .forward = fail_forward, .backward = singa_layer_copy_backward,
};

/* Runs passes of net text `text` cut over 2 workers until one fails; returns the passes that
 * succeeded (-1 when the net cannot be built) and the error in err. */
static int run(const singa_registry *reg, const char *text, singa_err *err)
{
    singa_conf *conf = singa_conf_parse_text(text, err);
    singa_graph g = {0};
    singa_params params;
    singa_rng rng;
    singa_net *net = NULL;
    singa_params_init(&params);
    singa_rng_seed(&rng, 1, 0);
    int passes = -1;
    if (conf && singa_graph_build(&g, conf, SINGA_PHASE_TRAIN, 2, reg, err) == 0 &&
        singa_net_create_parts(&net, &g, reg, &params, &rng, 1, NULL, err) == 0)
        for (passes = 0; passes < 10; passes++)
            if (singa_net_forward(net, err) < 0 || singa_net_backward(net, err) < 0)
                break;
    singa_net_free(net);
    singa_graph_free(&g);
    singa_params_free(&params);
    singa_conf_free(conf);
    return passes;
}

int main(void)
{
    alarm(60);
    char csv[] = "/tmp/singa-2830-XXXXXX";
    int fd = mkstemp(csv);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    for (int i = 0; f && i < 16; i++)
        fprintf(f, "%d,%.2f,%.2f,%.2f,%.2f\n", i % 2, i * 0.1, 1 - i * 0.05, (i % 3) * 0.3, 0.5);
    if (f)
        fclose(f);
    singa_registry *reg = singa_registry_new();
    singa_err err = {{0}};
    ok(f && singa_registry_add(reg, &fail_type, &err) == 0, "a layer type that fails on purpose%s%s",
       err.msg[0] ? ": " : "", err.msg);
    for (int at = 0; at < 2; at++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "{ layer = {"
                 " { name = 'data', type = 'kCSVInput', path = '%s', batchsize = 8 },"
                 " { name = 'label', type = 'kLabel', srclayer = 'data', location = 0 },"
                 " { name = 'fc1', type = 'kInnerProduct', srclayer = 'data', num_output = 4, location = %d },"
                 " { name = 'fail', type = 'kFailAt', srclayer = 'fc1', fail_at = 3, location = %d },"
                 " { name = 'fc2', type = 'kInnerProduct', srclayer = 'fail', num_output = 2, location = %d },"
                 " { name = 'loss', type = 'kSoftmaxLoss', srclayer = { 'fc2', 'label' }, location = 0 } } }",
                 csv, 1 - at, at, 1 - at);
        err.msg[0] = 0;
        int passes = run(reg, text, &err);
        char worker[64];
        snprintf(worker, sizeof worker, "worker %d of the group: ", at);
        ok(passes == 3 && strstr(err.msg, "failed on purpose in pass 3") && (at == 0 || strstr(err.msg, worker)),
           "a part failing on worker %d: 3 steps, then its error%s (%d passes: %s); the threads end", at,
           at ? ", named after the worker" : "", passes, err.msg);
    }
    singa_registry_free(reg);
    unlink(csv);
    return done_testing();
}

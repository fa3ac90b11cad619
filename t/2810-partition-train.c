/* Training a partitioned net is training the net: the Fashion-MNIST MLP and LeNet, cut over 2
 * and 4 workers on the batch, on the features, placed layer by layer by location, and hybrid
 * (convolutions on the batch, fully connected layers on the features), give the loss of the
 * unpartitioned net at each of 50 steps of SGD to 1e-4 relative, and end with its params: with
 * every part and connection layer in one net, and with each worker's parts computed by a
 * thread of its own (bridges between threads). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "singa/singa.h"
#include "tap.h"

enum { STEPS = 50 };
static const float LR = 0.05f;

typedef struct run {
    double loss[STEPS];
    singa_params params;
} run;

/* The MLP or LeNet: `net` opens the neuralnet table (a net-wide partition_dim), and the other
 * texts end the fields of the input layers, convolutions and poolings, ip1 and relu1, ip2, and
 * the loss (", partition_dim = 0", ", location = 1", ...). */
static singa_conf *net_conf(const char *dir, bool lenet, const char *net, const char *data, const char *conv,
                            const char *fc, const char *last, const char *loss)
{
    char text[4096];
    int n = snprintf(text, sizeof text,
                     "{ %s layer = {"
                     " { name = 'data', type = 'kIDXData', batchsize = 64, shuffle = true,"
                     "   images = '%s/train-images-idx3-ubyte.gz', labels = '%s/train-labels-idx1-ubyte.gz'%s },"
                     " { name = 'mnist', type = 'kMnist', srclayer = 'data', norm_a = 255%s },"
                     " { name = 'label', type = 'kLabel', srclayer = 'data'%s },",
                     net, dir, dir, data, data, data);
    if (lenet)
        n += snprintf(text + n, sizeof text - (size_t)n,
                      " { name = 'conv1', type = 'kConvolution', srclayer = 'mnist', num_filters = 8, kernel = 5%s },"
                      " { name = 'pool1', type = 'kPooling', srclayer = 'conv1', pool = 'MAX', kernel = 2, stride = 2%s },"
                      " { name = 'conv2', type = 'kConvolution', srclayer = 'pool1', num_filters = 16, kernel = 5%s },"
                      " { name = 'pool2', type = 'kPooling', srclayer = 'conv2', pool = 'MAX', kernel = 2, stride = 2%s },"
                      " { name = 'ip1', type = 'kInnerProduct', srclayer = 'pool2', num_output = 64%s },",
                      conv, conv, conv, conv, fc);
    else
        n += snprintf(text + n, sizeof text - (size_t)n,
                      " { name = 'ip1', type = 'kInnerProduct', srclayer = 'mnist', num_output = 64%s },", fc);
    snprintf(text + n, sizeof text - (size_t)n,
             " { name = 'relu1', type = 'kReLU', srclayer = 'ip1'%s },"
             " { name = 'ip2', type = 'kInnerProduct', srclayer = 'relu1', num_output = 10%s },"
             " { name = 'loss', type = 'kSoftmaxLoss', srclayer = { 'ip2', 'label' }%s } } }",
             fc, last, loss);
    singa_err err = {{0}};
    singa_conf *c = singa_conf_parse_text(text, &err);
    if (!c)
        printf("# %s\n", err.msg);
    return c;
}

/* Trains STEPS steps of plain SGD; workers 0: the net as it is, else partitioned over them, in
 * one net or in a thread per worker. */
static int train(const singa_registry *reg, const singa_conf *conf, int workers, bool threads, run *r,
                 singa_err *err)
{
    singa_rng rng;
    singa_net *net = NULL;
    singa_graph g = {0};
    singa_params_init(&r->params);
    singa_rng_seed(&rng, 5, 0);
    int rc = workers ? singa_graph_build(&g, conf, SINGA_PHASE_TRAIN, workers, reg, err) : 0;
    if (rc == 0)
        rc = !workers  ? singa_net_create(&net, conf, SINGA_PHASE_TRAIN, reg, &r->params, &rng, 5, NULL, err)
             : threads ? singa_net_create_parts(&net, &g, reg, &r->params, &rng, 5, NULL, err)
                       : singa_net_create_graph(&net, &g, reg, &r->params, &rng, 5, NULL, err);
    for (int step = 0; step < STEPS && rc == 0; step++) {
        if ((rc = singa_net_forward(net, err)) < 0)
            break;
        r->loss[step] = singa_metrics_avg(&net->metrics, "loss", NAN);
        if ((rc = singa_net_backward(net, err)) < 0)
            break;
        for (int i = 0; i < r->params.n; i++) {
            singa_param *p = r->params.items[i];
            if (p->trained && !p->owner && !p->state)
                singa_tensor_axpy(-LR, &p->grad, &p->data);
        }
    }
    singa_net_free(net);
    singa_graph_free(&g);
    return rc;
}

/* The largest relative difference of the losses, and of the params, to the reference. */
static double loss_diff(const run *a, const run *ref)
{
    double worst = 0;
    for (int s = 0; s < STEPS; s++) {
        double d = fabs(a->loss[s] - ref->loss[s]) / fmax(fabs(ref->loss[s]), 1e-12);
        worst = isnan(d) ? INFINITY : fmax(worst, d);
    }
    return worst;
}

static double param_diff(const run *a, const run *ref)
{
    double worst = a->params.n == ref->params.n ? 0 : INFINITY;
    for (int i = 0; i < ref->params.n && worst < INFINITY; i++) {
        const singa_param *p = ref->params.items[i], *q = singa_params_find(&a->params, p->name);
        if (!q || q->data.size != p->data.size)
            return INFINITY;
        double num = 0, den = 0;
        for (size_t k = 0; k < p->data.size; k++) {
            num += fabs((double)q->data.data[k] - p->data.data[k]);
            den += fabs((double)p->data.data[k]);
        }
        worst = fmax(worst, num / fmax(den, 1e-12));
    }
    return worst;
}

int main(void)
{
    const char *dir = getenv("FMNIST_DIR") ? getenv("FMNIST_DIR") : "/usr/share/datasets/fashion-mnist";
    char probe[4096];
    snprintf(probe, sizeof probe, "%s/train-images-idx3-ubyte.gz", dir);
    FILE *f = fopen(probe, "rb");
    if (!f) {
        printf("1..0 # SKIP no Fashion-MNIST in %s (Debian: dataset-fashion-mnist)\n", dir);
        return 0;
    }
    fclose(f);
    singa_registry *reg = singa_registry_new();
    /* the texts of net_conf; "LAST" stands for the last worker */
    static const struct {
        const char *name, *net, *data, *conv, *fc, *last, *loss;
    } schemes[] = {
        {"the batch (partition_dim = 0)", "partition_dim = 0,", "", "", "", "", ""},
        {"the features (partition_dim = 1 where a layer can take it)", "partition_dim = 1,", "", "", "", "", ""},
        {"layers placed by location", "", ", location = 0", ", location = 1", ", location = LAST", ", location = LAST",
         ", location = 0"},
        {"hybrid: convolutions on the batch, fully connected layers on the features", "partition_dim = 1,", "",
         ", partition_dim = 0", "", "", ""},
    };
    for (int lenet = 0; lenet < 2; lenet++) {
        const char *what = lenet ? "LeNet" : "the MLP";
        singa_err err = {{0}};
        singa_conf *plain = net_conf(dir, lenet, "", "", "", "", "", "");
        run ref = {.loss = {0}};
        int rc = plain ? train(reg, plain, 0, false, &ref, &err) : -1;
        ok(rc == 0 && ref.loss[STEPS - 1] < ref.loss[0], "%s unpartitioned trains: loss %.4f -> %.4f%s%s", what,
           ref.loss[0], ref.loss[STEPS - 1], rc ? ": " : "", rc ? err.msg : "");
        for (size_t s = 0; s < sizeof schemes / sizeof *schemes; s++)
            for (int workers = 2; workers <= 4; workers += 2) {
                char last[32], fc[64], ip2[64];
                snprintf(last, sizeof last, ", location = %d", workers - 1);
                snprintf(fc, sizeof fc, "%s", strcmp(schemes[s].fc, ", location = LAST") == 0 ? last : schemes[s].fc);
                snprintf(ip2, sizeof ip2, "%s", strcmp(schemes[s].last, ", location = LAST") == 0 ? last : schemes[s].last);
                singa_conf *conf = net_conf(dir, lenet, schemes[s].net, schemes[s].data, schemes[s].conv, fc, ip2,
                                            schemes[s].loss);
                for (int threads = 0; threads < 2; threads++) {
                    run r = {.loss = {0}};
                    err.msg[0] = 0;
                    int trc = conf ? train(reg, conf, workers, threads, &r, &err) : -1;
                    double dl = trc == 0 ? loss_diff(&r, &ref) : INFINITY;
                    double dp = trc == 0 ? param_diff(&r, &ref) : INFINITY;
                    ok(trc == 0 && dl <= 1e-4 && dp <= 1e-4,
                       "%s on %d workers (%s), %s: the same loss at each of %d steps (worst %.1e) and params (%.1e)%s%s",
                       what, workers, threads ? "a thread each" : "in one net", schemes[s].name, STEPS, dl, dp,
                       trc ? ": " : "", trc ? err.msg : "");
                    singa_params_free(&r.params);
                }
                singa_conf_free(conf);
            }
        singa_params_free(&ref.params);
        singa_conf_free(plain);
    }
    singa_registry_free(reg);
    return done_testing();
}

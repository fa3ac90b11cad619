/* A test-only plugin for the straggler tests (t/6300-stragglers.sh): kSlow passes its source
 * through and, in training, sleeps sleep_ms in every forward pass of worker `worker` of group
 * `group` (0; -1: of every group) (its index in the group, net->split.index), so that one worker of
 * a group is slow on purpose, or a job's groups take a time that does not depend on the machine. */
#include <string.h>
#include <time.h>
#include <singa/net.h> /* net->split: which worker runs this layer */
#include <singa/plugin.h>

typedef struct slow_state {
    double ms;
    int worker, group;
} slow_state;

static const singa_field fields[] = {{"sleep_ms", SINGA_FIELD_NUM}, {"worker", SINGA_FIELD_INT},
                                     {"group", SINGA_FIELD_INT}, {NULL, 0}};

static int setup(singa_layer *l, singa_err *err)
{
    slow_state *s = l->state;
    s->ms = singa_conf_num(l->conf, "sleep_ms", 0);
    s->worker = singa_conf_int(l->conf, "worker", 0);
    s->group = singa_conf_int(l->conf, "group", 0);
    const singa_tensor *x = &l->src[0]->data;
    return singa_layer_shape(l, x->ndim, x->shape, err);
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    const slow_state *s = l->state;
    const singa_tensor *x = &l->src[0]->data;
    int rows = singa_tensor_rows(x), cols = singa_tensor_cols(x);
    for (int r = 0; r < rows; r++)
        memcpy(l->data.data + (size_t)r * (size_t)l->data.ld, x->data + (size_t)r * (size_t)x->ld,
               (size_t)cols * sizeof(float));
    if (phase == SINGA_PHASE_TRAIN && (s->group < 0 || l->net->split.group == s->group) && l->net->split.index == s->worker && s->ms > 0) {
        long ns = (long)(s->ms * 1e6);
        nanosleep(&(struct timespec){.tv_sec = ns / 1000000000L, .tv_nsec = ns % 1000000000L}, NULL);
    }
    return 0;
}

static void backward(singa_layer *l)
{
    singa_layer *src = l->src[0];
    if (!src->needs_grad)
        return;
    const singa_tensor *x = &src->data;
    int rows = singa_tensor_rows(x), cols = singa_tensor_cols(x);
    float acc = singa_layer_grad_beta(src);
    for (int r = 0; r < rows; r++) {
        const float *dy = l->grad.data + (size_t)r * (size_t)l->grad.ld;
        float *dx = src->grad.data + (size_t)r * (size_t)src->grad.ld;
        for (int c = 0; c < cols; c++)
            dx[c] = acc != 0.0f ? dx[c] + dy[c] : dy[c];
    }
}

static int init(singa_plugin_ctx *ctx, singa_err *err)
{
    const singa_layer_type slow = {.name = "kSlow", .fields = fields, .min_src = 1, .max_src = 1,
                                   .state_size = sizeof(slow_state), .setup = setup, .forward = forward,
                                   .backward = backward};
    return singa_plugin_add_layer(ctx, &slow, NULL, err);
}

SINGA_PLUGIN("slow", "1", "test: sleeps in one worker's forward passes", init);

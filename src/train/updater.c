/* Updaters and learning-rate schedules.  Where nothing needs the raw gradient (kSGD with
 * momentum, no clipping, no shared param) the backward pass writes straight into the momentum
 * history: h = m h - lr g happens inside the layer's GEMM (alpha = -lr, beta = m), and w += h
 * runs as soon as the layer reports the gradient ready, while it is warm in cache.  That saves
 * a gradient buffer per param and two of the update's passes over memory. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "singa/updater.h"

const singa_field singa_updater_fields[] = {
    {"type", SINGA_FIELD_STR},         {"learning_rate", SINGA_FIELD_TABLE},
    {"momentum", SINGA_FIELD_NUM},     {"weight_decay", SINGA_FIELD_NUM},
    {"clip_low", SINGA_FIELD_NUM},     {"clip_high", SINGA_FIELD_NUM},
    {NULL, 0},
};

const singa_field singa_lr_fields[] = {
    {"type", SINGA_FIELD_STR},  {"base_lr", SINGA_FIELD_NUM}, {"gamma", SINGA_FIELD_NUM},
    {"change_freq", SINGA_FIELD_INT}, {NULL, 0},
};

typedef enum { UPD_SGD, UPD_NESTEROV } upd_kind;
typedef enum { LR_FIXED, LR_STEP } lr_kind;

struct singa_updater {
    upd_kind kind;
    lr_kind lr;
    double base_lr, gamma;
    int change_freq;
    float momentum, weight_decay, clip_low, clip_high;
    bool clip, fuse;
    singa_params *params;
    int nparams;           /* the params of the training net, updated here */
    singa_tensor *history; /* per param: momentum history (empty tensor when unused) */
    size_t *applied;       /* per param: elements already updated during this step's backward */
    bool *fused;           /* per param: the backward pass writes into the history */
};

static int pick(const char *what, const char *field, const char *value, const char *const *names,
                int n, singa_err *err)
{
    for (int i = 0; i < n; i++)
        if (strcmp(value, names[i]) == 0)
            return i;
    return singa_err_unknown(err, what, field, value, names, (size_t)n);
}

/* w += h on a block the backward pass has finished (fused kSGD with momentum). */
static void apply_ready(void *ud, singa_param *p, size_t begin, size_t end)
{
    singa_updater *u = ud;
    /* OpenBLAS's saxpy uses every BLAS thread; the rest of this step's serial work does not. */
    cblas_saxpy((int)(end - begin), 1.0f, p->grad.data + begin, 1, p->data.data + begin, 1);
    u->applied[p->id] += end - begin;
}

static bool has_history(const singa_updater *u) { return u->kind == UPD_NESTEROV || u->momentum != 0; }

int singa_updater_create(singa_updater **out, const singa_conf *conf, singa_params *params,
                         singa_err *err)
{
    static const char *const kinds[] = {"kSGD", "kNesterov"};
    static const char *const lrs[] = {"kFixed", "kStep"};
    const singa_field *const us[] = {singa_updater_fields, NULL}, *const ls[] = {singa_lr_fields, NULL};
    *out = NULL;
    if (singa_conf_check(conf, us, "updater", err) < 0)
        return -1;
    const singa_conf *lr = singa_conf_get(conf, "learning_rate");
    if (!lr)
        return singa_err_set(err, "updater: field 'learning_rate' is required, e.g. learning_rate = { type = \"kFixed\", base_lr = 0.01 }");
    if (singa_conf_check(lr, ls, "updater.learning_rate", err) < 0)
        return -1;
    int kind = pick("updater", "type", singa_conf_str(conf, "type", "kSGD"), kinds, 2, err);
    int lk = pick("updater.learning_rate", "type", singa_conf_str(lr, "type", "kFixed"), lrs, 2, err);
    if (kind < 0 || lk < 0)
        return -1;
    singa_updater v = {
        .kind = (upd_kind)kind,
        .lr = (lr_kind)lk,
        .base_lr = singa_conf_num(lr, "base_lr", -1),
        .gamma = singa_conf_num(lr, "gamma", 1),
        .change_freq = singa_conf_int(lr, "change_freq", 0),
        .momentum = (float)singa_conf_num(conf, "momentum", 0),
        .weight_decay = (float)singa_conf_num(conf, "weight_decay", 0),
        .clip = singa_conf_get(conf, "clip_low") || singa_conf_get(conf, "clip_high"),
        .clip_low = (float)singa_conf_num(conf, "clip_low", -INFINITY),
        .clip_high = (float)singa_conf_num(conf, "clip_high", INFINITY),
        .params = params,
        .nparams = params->n,
    };
    if (!(v.base_lr >= 0))
        return singa_err_set(err, "updater.learning_rate: field 'base_lr' is required and must be >= 0");
    if (v.lr == LR_STEP && v.change_freq <= 0)
        return singa_err_set(err, "updater.learning_rate: kStep needs 'change_freq' > 0");
    if (v.clip && !(v.clip_low < v.clip_high))
        return singa_err_set(err, "updater: clip_low (%g) must be below clip_high (%g)", v.clip_low, v.clip_high);
    if (v.momentum < 0 || v.momentum >= 1 || v.weight_decay < 0)
        return singa_err_set(err, "updater: momentum must be in [0, 1) and weight_decay >= 0");
    singa_updater *u = malloc(sizeof *u);
    if (!u)
        return singa_err_set(err, "out of memory");
    *u = v;
    u->fuse = u->kind == UPD_SGD && u->momentum != 0 && !u->clip;
    size_t np = (size_t)(u->nparams ? u->nparams : 1);
    u->history = calloc(np, sizeof *u->history);
    u->applied = calloc(np, sizeof *u->applied);
    u->fused = calloc(np, sizeof *u->fused);
    if (!u->history || !u->applied || !u->fused) {
        singa_updater_free(u);
        return singa_err_set(err, "out of memory");
    }
    for (int i = 0; i < u->nparams && has_history(u); i++) {
        singa_param *p = params->items[i];
        if (p->owner || !p->trained)
            continue;
        if (singa_tensor_init_like(&u->history[i], &p->data, err) < 0) {
            singa_updater_free(u);
            return -1;
        }
        if ((u->fused[i] = u->fuse && p->nsharers == 0)) {
            /* The gradient lives in the history from now on; the separate buffer goes. */
            singa_tensor_free(&p->grad);
            p->grad = u->history[i];
            p->grad.owns = false;
            p->grad_ready = apply_ready;
            p->grad_ready_ud = u;
        }
    }
    *out = u;
    return 0;
}

void singa_updater_free(singa_updater *u)
{
    if (!u)
        return;
    for (int i = 0; i < u->nparams; i++) {
        singa_param *p = u->params->items[i];
        if (p->grad_ready_ud == u)
            p->grad_ready = NULL;
        if (u->history)
            singa_tensor_free(&u->history[i]);
    }
    free(u->history);
    free(u->applied);
    free(u->fused);
    free(u);
}

float singa_updater_lr(const singa_updater *u, int step)
{
    if (u->lr == LR_STEP)
        return (float)(u->base_lr * pow(u->gamma, floor((double)step / u->change_freq)));
    return (float)u->base_lr;
}

void singa_updater_prepare(singa_updater *u, int step)
{
    float lr = singa_updater_lr(u, step);
    for (int i = 0; i < u->nparams; i++) {
        singa_param *p = u->params->items[i];
        if (!u->fused[i])
            continue;
        float plr = lr * p->lr_scale, wd = u->weight_decay * p->wd_scale;
        p->grad_alpha = -plr;
        p->grad_beta = u->momentum;
        if (wd > 0) { /* h = m h - lr wd w now; the backward pass adds -lr g */
            float *h = p->grad.data, *w = p->data.data, m = u->momentum, c = plr * wd;
            for (size_t k = 0; k < p->data.size; k++)
                h[k] = m * h[k] - c * w[k];
            p->grad_beta = 1.0f;
        }
    }
}

/* Sums the gradients of params sharing p's value into p's gradient; returns the count. */
static int gather_sharers(singa_updater *u, singa_param *p)
{
    int n = 1;
    for (int j = 0; j < u->nparams && p->nsharers; j++) {
        singa_param *q = u->params->items[j];
        if (q->owner == p && q->trained) {
            singa_tensor_axpy(1.0f, &q->grad, &p->grad);
            n++;
        }
    }
    return n;
}

void singa_updater_apply(singa_updater *u, int step)
{
    float lr = singa_updater_lr(u, step), m = u->momentum;
    for (int i = 0; i < u->nparams; i++) {
        singa_param *p = u->params->items[i];
        float *w = p->data.data, *g = p->grad.data, *h = u->history[i].data;
        size_t n = p->data.size;
        if (p->owner || !p->trained)
            continue;
        if (u->fused[i]) {
            /* Layers report a param's gradient in full or not at all; unreported ones apply now. */
            if (u->applied[i] == 0)
                apply_ready(u, p, 0, n);
            u->applied[i] = 0;
            continue;
        }
        float scale = 1.0f / (float)gather_sharers(u, p);
        float plr = lr * p->lr_scale, wd = u->weight_decay * p->wd_scale;
        for (size_t k = 0; k < n; k++) {
            float gk = g[k] * scale + wd * w[k];
            if (u->clip)
                gk = fminf(fmaxf(gk, u->clip_low), u->clip_high);
            if (u->kind == UPD_NESTEROV) {
                float prev = h[k];
                h[k] = m * h[k] + plr * gk;
                w[k] -= (1 + m) * h[k] - m * prev;
            } else if (h) {
                h[k] = m * h[k] - plr * gk;
                w[k] += h[k];
            } else {
                w[k] -= plr * gk;
            }
        }
    }
}

int singa_updater_nslots(const singa_updater *u) { return has_history(u) ? 1 : 0; }

const char *singa_updater_slot_name(const singa_updater *u, int slot) { return "history"; }

singa_tensor *singa_updater_slot(singa_updater *u, int param_id, int slot)
{
    if (param_id >= u->nparams || !u->history[param_id].data)
        return NULL;
    return &u->history[param_id];
}

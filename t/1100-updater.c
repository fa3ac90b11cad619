/* Updaters and learning-rate schedules against a plain double-precision reference written here
 * from the formulas (docs/02-jobs-and-layers.md's Updater section), on a hand-made param store:
 * per-param lr_scale and wd_scale, weight decay, clipping, a param shared by two (gradients
 * averaged) and one the training net does not declare (left alone). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "singa/singa.h"
#include "tap.h"

/* ---- Configurations from "key=value ..." words ----
 * A value is a number, a comma-separated list of numbers, or else a string; keys that start with
 * "lr." go into the learning_rate table. */
static singa_conf *value_of(const char *s)
{
    char *end;
    if (strchr(s, ',')) {
        singa_conf *list = singa_conf_new(SINGA_CONF_LIST);
        for (const char *p = s; *p;) {
            double v = strtod(p, &end);
            if (end != p)
                singa_conf_add(list, NULL, singa_conf_new_num(v));
            p = *end == ',' ? end + 1 : end + (*end != 0);
        }
        return list;
    }
    double v = strtod(s, &end);
    return *s && !*end ? singa_conf_new_num(v) : singa_conf_new_str(s);
}

static singa_conf *conf_of(const char *spec)
{
    singa_conf *c = singa_conf_new(SINGA_CONF_TABLE), *lr = singa_conf_new(SINGA_CONF_TABLE);
    char buf[512], *save = NULL;
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(tok, '=');
        *eq = 0;
        bool in_lr = strncmp(tok, "lr.", 3) == 0;
        singa_conf_add(in_lr ? lr : c, in_lr ? tok + 3 : tok, value_of(eq + 1));
    }
    singa_conf_add(c, "learning_rate", lr);
    return c;
}

/* ---- The reference ---- */
static double nums_at(const singa_conf *v, size_t i) { return v->kind == SINGA_CONF_LIST ? v->items[i]->num : v->num; }
static size_t nums_len(const singa_conf *v) { return v->kind == SINGA_CONF_LIST ? v->n : 1; }

static double ref_lr(const singa_conf *c, int step)
{
    const char *type = singa_conf_str(c, "type", "kFixed");
    double s = step, base = singa_conf_num(c, "base_lr", 0), gamma = singa_conf_num(c, "gamma", 1);
    double freq = singa_conf_num(c, "change_freq", 0), final = singa_conf_num(c, "final_lr", 0);
    if (strcmp(type, "kStep") == 0)
        return base * pow(gamma, floor(s / freq));
    if (strcmp(type, "kExponential") == 0)
        return base / pow(2, s / freq);
    if (strcmp(type, "kLinear") == 0)
        return s >= freq ? final : (1 - s / freq) * base + s / freq * final;
    if (strcmp(type, "kInverse") == 0)
        return base * pow(1 + gamma * s, -singa_conf_num(c, "pow", 0));
    if (strcmp(type, "kInverseT") == 0)
        return base / (1 + s / final);
    if (strcmp(type, "kFixedStep") == 0) {
        const singa_conf *st = singa_conf_get(c, "step"), *lr = singa_conf_get(c, "step_lr");
        double r = singa_conf_get(c, "base_lr") ? base : nums_at(lr, 0);
        for (size_t i = 0; i < nums_len(st); i++)
            if (s >= nums_at(st, i))
                r = nums_at(lr, i);
        return r;
    }
    return base;
}

typedef struct {
    double *w, *s0, *s1;
    size_t n;
} ref_param;

/* One step of the updater `c` on one param, given its averaged raw gradient g. */
static void ref_update(const singa_conf *c, int step, const singa_param *p, ref_param *r, const double *g)
{
    const char *type = singa_conf_str(c, "type", "kSGD");
    double lr = ref_lr(singa_conf_get(c, "learning_rate"), step) * p->lr_scale;
    double wd = singa_conf_num(c, "weight_decay", 0) * p->wd_scale, m = singa_conf_num(c, "momentum", 0);
    double lo = singa_conf_num(c, "clip_low", -INFINITY), hi = singa_conf_num(c, "clip_high", INFINITY);
    double delta = singa_conf_num(c, "delta", 1e-8);
    double rho = singa_conf_num(c, "rho", strcmp(type, "kRMSProp") == 0 ? 0.99 : 0.9);
    double b1 = singa_conf_num(c, "beta1", 0.9), b2 = singa_conf_num(c, "beta2", 0.999), t = step + 1;
    for (size_t k = 0; k < r->n; k++) {
        double *w = &r->w[k], *h = &r->s0[k], *u = &r->s1[k];
        double gk = fmin(fmax(g[k] + wd * *w, lo), hi);
        if (strcmp(type, "kSGD") == 0 && m == 0) {
            *w -= lr * gk;
        } else if (strcmp(type, "kSGD") == 0) {
            *h = m * *h - lr * gk;
            *w += *h;
        } else if (strcmp(type, "kNesterov") == 0) {
            double prev = *h;
            *h = m * *h + lr * gk;
            *w -= (1 + m) * *h - m * prev;
        } else if (strcmp(type, "kAdaGrad") == 0) {
            *h += gk * gk;
            *w -= lr * gk / sqrt(*h + delta);
        } else if (strcmp(type, "kRMSProp") == 0) {
            *h = rho * *h + (1 - rho) * gk * gk;
            *w -= lr * gk / sqrt(*h + delta);
        } else if (strcmp(type, "kAdaDelta") == 0) {
            *h = rho * *h + (1 - rho) * gk * gk;
            double d = sqrt(*u + delta) / sqrt(*h + delta) * gk;
            *u = rho * *u + (1 - rho) * d * d;
            *w -= lr * d;
        } else if (strcmp(type, "kAdam") == 0) {
            *h = b1 * *h + (1 - b1) * gk;
            *u = b2 * *u + (1 - b2) * gk * gk;
            double mhat = *h / (1 - pow(b1, t)), vhat = *u / (1 - pow(b2, t));
            *w -= lr * mhat / (sqrt(vhat) + delta);
        } else if (strcmp(type, "kAdamMax") == 0) {
            *h = b1 * *h + (1 - b1) * gk;
            *u = fmax(b2 * *u, fabs(gk));
            *w -= lr / (1 - pow(b1, t)) * *h / (*u + delta);
        }
    }
}

/* ---- The store: a (3x4), b (5, lr_scale 0.5, wd_scale 2), c (2x3) shared by c2, and frozen
 * (4, not trained). ---- */
enum { A, B, C, C2, FROZEN, NP };

static void make_store(singa_params *ps)
{
    static const struct {
        const char *name;
        int ndim, shape[2];
    } decl[NP] = {{"a", 2, {3, 4}}, {"b", 1, {5}}, {"c", 2, {2, 3}}, {"c2", 2, {2, 3}}, {"frozen", 1, {4}}};
    singa_err err;
    singa_params_init(ps);
    for (int i = 0; i < NP; i++) {
        singa_param *p = singa_params_declare(ps, decl[i].name, "test", decl[i].ndim, decl[i].shape, &err);
        for (size_t k = 0; k < p->data.size; k++)
            p->data.data[k] = (float)sin(2.1 * (double)k + 1.7 * i + 0.3);
        p->trained = i != FROZEN;
    }
    singa_param *b = ps->items[B], *c = ps->items[C], *c2 = ps->items[C2];
    b->lr_scale = 0.5f;
    b->wd_scale = 2.0f;
    singa_tensor_free(&c2->data); /* as share_from does: c2's value is a view of c's */
    c2->data = c->data;
    c2->data.owns = false;
    c2->owner = c;
    c->nsharers = 1;
}

/* The gradient the "backward pass" produces for param i at a step: signs and sizes vary, some
 * beyond the clipping range, with a drift so momentum-like state builds up. */
static double grad_of(int i, size_t k, int step) { return 0.8 * sin(0.9 * (double)k + 1.3 * step + 0.5 * i) + 0.1 * (step % 3); }

/* Largest |got - want| over the largest |want| (a norm-wise relative error). */
static double rel_err(const float *got, const double *want, size_t n)
{
    double diff = 0, scale = 1e-30;
    for (size_t k = 0; k < n; k++) {
        diff = fmax(diff, fabs(got[k] - want[k]));
        scale = fmax(scale, fabs(want[k]));
    }
    return diff / scale;
}

/* Runs updater `spec` for `steps` steps on a fresh store beside the reference; compares values
 * and state at the check steps. */
static void check_updater(const char *spec, const char *slot0, const char *slot1, int steps)
{
    static const int checks[] = {0, 1, 4, 11, 19};
    singa_params ps;
    singa_err err;
    make_store(&ps);
    singa_conf *conf = conf_of(spec);
    singa_updater *u;
    if (singa_updater_create(&u, conf, &ps, &err) < 0) {
        ok(0, "%s: created (%s)", spec, err.msg);
        singa_conf_free(conf);
        singa_params_free(&ps);
        return;
    }
    int nslots = singa_updater_nslots(u), want_slots = slot1 ? 2 : slot0 ? 1 : 0;
    ok(nslots == want_slots && (!slot0 || strcmp(singa_updater_slot_name(u, 0), slot0) == 0) &&
           (!slot1 || strcmp(singa_updater_slot_name(u, 1), slot1) == 0),
       "%s: %d state slots named %s %s", spec, want_slots, slot0 ? slot0 : "", slot1 ? slot1 : "");
    ok(singa_updater_slot(u, C2, 0) == NULL && singa_updater_slot(u, FROZEN, 0) == NULL &&
           (nslots == 0 || singa_updater_slot(u, A, nslots - 1) != NULL),
       "%s: state only for the params it updates", spec);

    ref_param ref[NP];
    for (int i = 0; i < NP; i++) {
        size_t n = ps.items[i]->data.size;
        ref[i] = (ref_param){calloc(n, sizeof(double)), calloc(n, sizeof(double)), calloc(n, sizeof(double)), n};
        for (size_t k = 0; k < n; k++)
            ref[i].w[k] = ps.items[i]->data.data[k];
    }
    double werr = 0, serr = 0;
    size_t next = 0;
    for (int step = 0; step < steps; step++) {
        singa_updater_prepare(u, step, &err);
        for (int i = 0; i < NP; i++) { /* what a layer does: grad = alpha dL/dw + beta grad */
            singa_param *p = ps.items[i];
            if (!p->trained)
                continue;
            for (size_t k = 0; k < p->grad.size; k++)
                p->grad.data[k] = p->grad_alpha * (float)grad_of(i, k, step) + p->grad_beta * p->grad.data[k];
            if (step % 2) /* some steps report the gradient ready, the others leave it to apply */
                singa_param_grad_done(p);
        }
        singa_updater_apply(u, step, &err);
        for (int i = 0; i < NP; i++) {
            if (i == C2 || i == FROZEN)
                continue;
            double g[16];
            for (size_t k = 0; k < ref[i].n; k++)
                g[k] = i == C ? (grad_of(C, k, step) + grad_of(C2, k, step)) / 2 : grad_of(i, k, step);
            ref_update(conf, step, ps.items[i], &ref[i], g);
        }
        if (next < sizeof checks / sizeof *checks && step == checks[next]) {
            next++;
            for (int i = 0; i < NP; i++) {
                if (i == C2 || i == FROZEN)
                    continue;
                werr = fmax(werr, rel_err(ps.items[i]->data.data, ref[i].w, ref[i].n));
                for (int s = 0; s < nslots; s++)
                    serr = fmax(serr, rel_err(singa_updater_slot(u, i, s)->data, s ? ref[i].s1 : ref[i].s0, ref[i].n));
            }
        }
    }
    ok(werr < 1e-6, "%s: values match the reference at steps 1, 2, 5, 12, 20 (relative error %.2g)", spec, werr);
    ok(serr < 1e-6, "%s: state matches the reference (relative error %.2g)", spec, serr);
    ok(rel_err(ps.items[FROZEN]->data.data, ref[FROZEN].w, ref[FROZEN].n) == 0 &&
           ps.items[C2]->data.data == ps.items[C]->data.data,
       "%s: an untrained param is untouched; the sharer still sees the owner's value", spec);
    for (int i = 0; i < NP; i++) {
        free(ref[i].w);
        free(ref[i].s0);
        free(ref[i].s1);
    }
    singa_updater_free(u);
    singa_conf_free(conf);
    singa_params_free(&ps);
}

/* The schedule `spec` (lr.* fields) against its formula at the given steps. */
static void check_schedule(const char *spec, const int *steps, int n)
{
    singa_params ps;
    singa_err err;
    singa_params_init(&ps);
    char full[400];
    snprintf(full, sizeof full, "type=kSGD %s", spec);
    singa_conf *conf = conf_of(full);
    singa_updater *u;
    if (singa_updater_create(&u, conf, &ps, &err) < 0) {
        ok(0, "%s: created (%s)", spec, err.msg);
    } else {
        double worst = 0;
        char where[200] = "";
        for (int i = 0; i < n; i++) {
            double want = ref_lr(singa_conf_get(conf, "learning_rate"), steps[i]);
            double got = singa_updater_lr(u, steps[i]), e = fabs(got - want) / fmax(fabs(want), 1e-30);
            worst = fmax(worst, e);
            singa_appendf(where, sizeof where, "%s%d: %.6g", i ? ", " : "", steps[i], got);
        }
        ok(worst < 1e-6, "%s: rate at steps %s (relative error %.2g)", spec, where, worst);
        singa_updater_free(u);
    }
    singa_conf_free(conf);
    singa_params_free(&ps);
}

/* singa_updater_apply_span, piece by piece, gives param a the bits apply_one gives it whole
 * (what PowerSGD's replicas and servers rely on: replica_update.c), values and state, for 6 steps. */
static void check_span(const char *spec)
{
    singa_params ps[2];
    singa_updater *u[2] = {NULL, NULL};
    singa_err err;
    singa_conf *conf = conf_of(spec);
    bool created = true, same = true;
    for (int w = 0; w < 2; w++) {
        make_store(&ps[w]);
        created &= singa_updater_create_ex(&u[w], conf, &ps[w], SINGA_UPDATER_SEPARATE_GRAD, &err) == 0;
    }
    size_t n = ps[0].items[A]->data.size, cut[] = {0, 5, 7, n};
    for (int step = 0; created && step < 6; step++) {
        float g[2][16];
        for (size_t k = 0; k < n; k++)
            g[0][k] = g[1][k] = (float)grad_of(A, k, step);
        singa_updater_apply_one(u[0], A, step, g[0], 0.5f, &err);
        for (int piece = 0; piece < 3; piece++)
            singa_updater_apply_span(u[1], A, step, g[1] + cut[piece], 0.5f, cut[piece], cut[piece + 1] - cut[piece],
                                     &err);
        same &= memcmp(ps[0].items[A]->data.data, ps[1].items[A]->data.data, n * sizeof(float)) == 0;
        for (int sl = 0; sl < singa_updater_nslots(u[0]); sl++)
            same &= memcmp(singa_updater_slot(u[0], A, sl)->data, singa_updater_slot(u[1], A, sl)->data,
                           n * sizeof(float)) == 0;
    }
    ok(created && same && singa_updater_elementwise(u[0]), "%s: applied in 3 spans, the bits of the whole", spec);
    for (int w = 0; w < 2; w++) {
        singa_updater_free(u[w]);
        singa_params_free(&ps[w]);
    }
    singa_conf_free(conf);
}

int main(void)
{
    /* Updaters: each type with its defaults and with its fields set, with weight decay and
     * clipping.  kSGD with momentum and no clipping takes the fused path for a and b. */
    static const struct {
        const char *spec, *slot0, *slot1;
    } cases[] = {
        {"type=kSGD lr.base_lr=0.1", NULL, NULL},
        {"type=kSGD weight_decay=0.01 clip_low=-0.5 clip_high=0.6 lr.base_lr=0.1", NULL, NULL},
        {"type=kSGD momentum=0.9 weight_decay=0.01 lr.type=kStep lr.base_lr=0.1 lr.gamma=0.5 lr.change_freq=4",
         "history", NULL},
        {"type=kSGD momentum=0.8 weight_decay=0.01 clip_low=-0.5 clip_high=0.5 lr.base_lr=0.05", "history", NULL},
        {"type=kNesterov momentum=0.9 weight_decay=0.005 lr.base_lr=0.05", "history", NULL},
        {"type=kNesterov lr.base_lr=0.05 clip_high=0.4", "history", NULL},
        {"type=kAdaGrad weight_decay=0.01 lr.base_lr=0.1", "history", NULL},
        {"type=kAdaGrad delta=1e-6 clip_high=0.3 lr.type=kInverse lr.base_lr=0.1 lr.gamma=0.1 lr.pow=0.75",
         "history", NULL},
        {"type=kRMSProp weight_decay=0.01 lr.base_lr=0.01", "history", NULL},
        {"type=kRMSProp rho=0.5 delta=1e-4 clip_low=-0.3 lr.base_lr=0.02", "history", NULL},
        {"type=kAdaDelta weight_decay=0.01 lr.base_lr=1", "history", "update"},
        {"type=kAdaDelta rho=0.95 delta=1e-6 clip_low=-0.5 clip_high=0.5 lr.base_lr=0.5", "history", "update"},
        {"type=kAdam weight_decay=0.01 lr.base_lr=0.01", "m", "v"},
        {"type=kAdam beta1=0.5 beta2=0.9 delta=1e-6 clip_low=-0.4 clip_high=0.6 lr.type=kExponential "
         "lr.base_lr=0.05 lr.change_freq=5",
         "m", "v"},
        {"type=kAdamMax weight_decay=0.01 lr.base_lr=0.02", "m", "u"},
        {"type=kAdamMax beta1=0.7 beta2=0.95 delta=1e-6 clip_high=0.5 lr.base_lr=0.02", "m", "u"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_updater(cases[i].spec, cases[i].slot0, cases[i].slot1, 20);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_span(cases[i].spec);

    /* Schedules at 0, 1, around change_freq (7) and well past it. */
    static const int at[] = {0, 1, 6, 7, 8, 13, 14, 70, 1000};
    static const char *const schedules[] = {
        "lr.type=kFixed lr.base_lr=0.1",
        "lr.type=kStep lr.base_lr=0.1 lr.gamma=0.5 lr.change_freq=7",
        "lr.type=kExponential lr.base_lr=0.1 lr.change_freq=7",
        "lr.type=kLinear lr.base_lr=0.1 lr.final_lr=0.01 lr.change_freq=7",
        "lr.type=kInverse lr.base_lr=0.1 lr.gamma=0.05 lr.pow=0.75",
        "lr.type=kInverseT lr.base_lr=0.1 lr.final_lr=7",
        "lr.type=kFixedStep lr.step=1,7,14 lr.step_lr=0.05,0.01,0.001",
        "lr.type=kFixedStep lr.base_lr=0.1 lr.step=7,14 lr.step_lr=0.01,0.001",
        "lr.type=kFixedStep lr.base_lr=0.1 lr.step=0 lr.step_lr=0.02",
    };
    for (size_t i = 0; i < sizeof schedules / sizeof *schedules; i++)
        check_schedule(schedules[i], at, (int)(sizeof at / sizeof *at));

    /* Spot values written out, so a reference that shares a mistake with the code shows. */
    struct {
        const char *spec;
        int step;
        double want;
    } spots[] = {
        {"lr.type=kStep lr.base_lr=0.1 lr.gamma=0.5 lr.change_freq=7", 14, 0.025},
        {"lr.type=kExponential lr.base_lr=0.1 lr.change_freq=7", 14, 0.025},
        {"lr.type=kLinear lr.base_lr=0.1 lr.final_lr=0.01 lr.change_freq=10", 5, 0.055},
        {"lr.type=kLinear lr.base_lr=0.1 lr.final_lr=0.01 lr.change_freq=10", 100, 0.01},
        {"lr.type=kInverse lr.base_lr=0.1 lr.gamma=1 lr.pow=2", 3, 0.1 / 16},
        {"lr.type=kInverseT lr.base_lr=0.1 lr.final_lr=5", 15, 0.025},
        {"lr.type=kFixedStep lr.step=5,10 lr.step_lr=0.5,0.25", 4, 0.5},
        {"lr.type=kFixedStep lr.base_lr=1 lr.step=5,10 lr.step_lr=0.5,0.25", 4, 1},
        {"lr.type=kFixedStep lr.base_lr=1 lr.step=5,10 lr.step_lr=0.5,0.25", 9, 0.5},
        {"lr.type=kFixedStep lr.base_lr=1 lr.step=5,10 lr.step_lr=0.5,0.25", 10, 0.25},
    };
    for (size_t i = 0; i < sizeof spots / sizeof *spots; i++) {
        singa_params ps;
        singa_err err;
        singa_params_init(&ps);
        char full[300];
        snprintf(full, sizeof full, "type=kSGD %s", spots[i].spec);
        singa_conf *conf = conf_of(full);
        singa_updater *u = NULL;
        double got = singa_updater_create(&u, conf, &ps, &err) < 0 ? -1 : singa_updater_lr(u, spots[i].step);
        ok(fabs(got - spots[i].want) <= 1e-7 * spots[i].want, "%s at step %d is %g (got %g)", spots[i].spec,
           spots[i].step, spots[i].want, got);
        singa_updater_free(u);
        singa_conf_free(conf);
        singa_params_free(&ps);
    }

    /* Bad values are refused naming the field. */
    static const struct {
        const char *spec, *want;
    } bad[] = {
        {"type=kRMSProp rho=1 lr.base_lr=0.1", "'rho' must be in [0, 1)"},
        {"type=kAdaDelta rho=-0.1 lr.base_lr=0.1", "'rho' must be in [0, 1)"},
        {"type=kAdam beta1=1 lr.base_lr=0.1", "'beta1' must be in [0, 1)"},
        {"type=kAdamMax beta2=1.5 lr.base_lr=0.1", "'beta2' must be in [0, 1)"},
        {"type=kAdaGrad delta=0 lr.base_lr=0.1", "'delta' must be > 0"},
        {"type=kAdam momentum=0.9 lr.base_lr=0.1", "'momentum' does not apply to kAdam (it is for kSGD, kNesterov)"},
        {"type=kSGD rho=0.9 lr.base_lr=0.1", "'rho' does not apply to kSGD (it is for kRMSProp, kAdaDelta)"},
        {"type=kSGD beta1=0.9 lr.base_lr=0.1", "'beta1' does not apply to kSGD (it is for kAdam, kAdamMax)"},
        {"type=kSGD delta=1e-6 lr.base_lr=0.1", "'delta' does not apply to kSGD"},
        {"lr.type=kLinear lr.base_lr=0.1 lr.change_freq=10", "'final_lr' is required for kLinear"},
        {"lr.type=kInverse lr.base_lr=0.1 lr.gamma=0.1", "'pow' is required for kInverse"},
        {"lr.type=kInverseT lr.base_lr=0.1 lr.final_lr=0", "'final_lr' must be > 0"},
        {"lr.type=kExponential lr.base_lr=0.1", "'change_freq' is required for kExponential"},
        {"lr.type=kFixed lr.base_lr=0.1 lr.gamma=0.5", "'gamma' does not apply to kFixed (it is for kStep, kInverse)"},
        {"lr.type=kFixedStep lr.step=1,2", "'step_lr' is required for kFixedStep"},
        {"lr.type=kFixedStep lr.step=1,2 lr.step_lr=0.1", "'step' has 2 entries but 'step_lr' has 1"},
        {"lr.type=kFixedStep lr.step=5,2 lr.step_lr=0.1,0.2", "'step' must be ascending, but 2 follows 5"},
        {"lr.type=kFixedStep lr.step=1.5 lr.step_lr=0.1", "'step' must list whole numbers"},
        {"lr.type=kFixedStep lr.step=1 lr.step_lr=-0.1", "'step_lr' must list rates >= 0"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        singa_params ps;
        singa_err err = {""};
        singa_params_init(&ps);
        singa_conf *conf = conf_of(bad[i].spec);
        singa_updater *u = NULL;
        int rc = singa_updater_create(&u, conf, &ps, &err);
        ok(rc < 0 && u == NULL && strstr(err.msg, bad[i].want), "%s is refused: %s", bad[i].spec, err.msg);
        singa_conf_free(conf);
        singa_params_free(&ps);
    }
    return done_testing();
}

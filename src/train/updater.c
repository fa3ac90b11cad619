/* Updaters and learning-rate schedules.  Two tables describe them: per updater type its state
 * slots and the type-specific fields it takes, per schedule the fields it takes and needs; the
 * checks, the checkpoint slots and the messages all read those tables.  Every updater runs
 * through one per-element loop (update_elems) that forms the effective gradient (sharers
 * averaged, weight decay added, clipped) and applies the type's rule; it is instantiated once
 * per type so each copy compiles to a tight, branch-free loop.
 *
 * Where nothing needs the raw gradient (kSGD with momentum, no clipping, no shared param) the
 * backward pass writes straight into the momentum history: h = m h - lr g happens inside the
 * layer's GEMM (alpha = -lr, beta = m), and w += h runs as soon as the layer reports the
 * gradient ready, while it is warm in cache.  That saves a gradient buffer per param and two of
 * the update's passes over memory.
 *
 * kLua hands each param to a host function (a singa_func from the configuration) after the same
 * effective-gradient step, so clipping, weight decay and sharing work for it as for the others;
 * its state slots are named by the configuration and checkpointed like the built-in ones. */
#include <cblas.h>
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "layers/param_state.h"
#include "singa/updater.h"

const singa_field singa_updater_fields[] = {
    {"type", SINGA_FIELD_STR},         {"learning_rate", SINGA_FIELD_TABLE_OR_FUNC},
    {"momentum", SINGA_FIELD_NUM},     {"weight_decay", SINGA_FIELD_NUM},
    {"clip_low", SINGA_FIELD_NUM},     {"clip_high", SINGA_FIELD_NUM},
    {"delta", SINGA_FIELD_NUM},        {"rho", SINGA_FIELD_NUM},
    {"beta1", SINGA_FIELD_NUM},        {"beta2", SINGA_FIELD_NUM},
    {"update", SINGA_FIELD_FUNC},      {"state", SINGA_FIELD_STRS},
    {NULL, 0},
};

const singa_field singa_lr_fields[] = {
    {"type", SINGA_FIELD_STR},        {"base_lr", SINGA_FIELD_NUM},  {"gamma", SINGA_FIELD_NUM},
    {"change_freq", SINGA_FIELD_INT}, {"final_lr", SINGA_FIELD_NUM}, {"pow", SINGA_FIELD_NUM},
    {"step", SINGA_FIELD_NUMS},       {"step_lr", SINGA_FIELD_NUMS}, {"schedule", SINGA_FIELD_FUNC},
    {NULL, 0},
};

/* A field that only some types take, and the bit that says a type takes (or needs) it. */
typedef struct {
    const char *name;
    unsigned bit;
} typed_field;

/* Checks `c` against a type's `takes` and `needs` masks: a field of `fields` the type does not
 * take, or one it needs that is missing, is refused naming the types that do take it. */
static int check_typed_fields(const singa_conf *c, const typed_field *fields, int nfields,
                              const char *const *types, const unsigned *takes, const unsigned *needs,
                              int ntypes, int type, const char *what, singa_err *err)
{
    for (int f = 0; f < nfields; f++) {
        unsigned bit = fields[f].bit;
        bool has = singa_conf_get(c, fields[f].name) != NULL;
        if (has ? (takes[type] & bit) != 0 : !(needs[type] & bit))
            continue;
        char users[200] = "";
        for (int t = 0; t < ntypes; t++)
            if (takes[t] & bit)
                singa_appendf(users, sizeof users, "%s%s", users[0] ? ", " : "", types[t]);
        if (has)
            return singa_err_set(err, "%s: field '%s' does not apply to %s (it is for %s)", what,
                                 fields[f].name, types[type], users);
        return singa_err_set(err, "%s: field '%s' is required for %s", what, fields[f].name, types[type]);
    }
    return 0;
}

/* Updater types.  SINGA v0.x's kSGD and kNesterov, the adaptive methods, and kLua (a host
 * function). */
typedef enum { UPD_SGD, UPD_NESTEROV, UPD_ADAGRAD, UPD_RMSPROP, UPD_ADADELTA, UPD_ADAM, UPD_ADAMAX, UPD_LUA } upd_kind;
enum { NUPD = UPD_LUA + 1, MAX_SLOTS = SINGA_UPDATER_MAX_SLOTS };
enum { F_MOMENTUM = 1, F_DELTA = 2, F_RHO = 4, F_BETA = 8, F_UPDATE = 16, F_STATE = 32 };
static const typed_field upd_typed[] = {
    {"momentum", F_MOMENTUM}, {"delta", F_DELTA}, {"rho", F_RHO}, {"beta1", F_BETA}, {"beta2", F_BETA},
    {"update", F_UPDATE},     {"state", F_STATE},
};
static const char *const upd_names[NUPD] = {"kSGD", "kNesterov", "kAdaGrad", "kRMSProp",
                                            "kAdaDelta", "kAdam", "kAdamMax", "kLua"};
static const unsigned upd_takes[NUPD] = {
    [UPD_SGD] = F_MOMENTUM,         [UPD_NESTEROV] = F_MOMENTUM,      [UPD_ADAGRAD] = F_DELTA,
    [UPD_RMSPROP] = F_DELTA | F_RHO, [UPD_ADADELTA] = F_DELTA | F_RHO, [UPD_ADAM] = F_DELTA | F_BETA,
    [UPD_ADAMAX] = F_DELTA | F_BETA, [UPD_LUA] = F_UPDATE | F_STATE,
};
static const unsigned upd_needs[NUPD] = {[UPD_LUA] = F_UPDATE};
/* Per-param state, by checkpoint name (kSGD has its slot only with momentum). */
static const char *const upd_slots[NUPD][MAX_SLOTS] = {
    [UPD_SGD] = {"history"},  [UPD_NESTEROV] = {"history"},           [UPD_ADAGRAD] = {"history"},
    [UPD_RMSPROP] = {"history"}, [UPD_ADADELTA] = {"history", "update"}, [UPD_ADAM] = {"m", "v"},
    [UPD_ADAMAX] = {"m", "u"},
};
/* rho's default: SINGA required it; these are PyTorch's (RMSprop alpha, Adadelta rho). */
static const double upd_rho[NUPD] = {[UPD_RMSPROP] = 0.99, [UPD_ADADELTA] = 0.9};

/* Schedules. */
typedef enum { LR_FIXED, LR_STEP, LR_EXPONENTIAL, LR_LINEAR, LR_INVERSE, LR_INVERSET, LR_FIXEDSTEP, LR_LUA } lr_kind;
enum { NLR = LR_LUA + 1 };
enum { L_BASE = 1, L_GAMMA = 2, L_FREQ = 4, L_FINAL = 8, L_POW = 16, L_STEP = 32, L_STEPLR = 64, L_SCHED = 128 };
static const typed_field lr_typed[] = {
    {"base_lr", L_BASE}, {"gamma", L_GAMMA}, {"change_freq", L_FREQ}, {"final_lr", L_FINAL},
    {"pow", L_POW},      {"step", L_STEP},   {"step_lr", L_STEPLR},   {"schedule", L_SCHED},
};
static const char *const lr_names[NLR] = {"kFixed",   "kStep",     "kExponential", "kLinear",
                                          "kInverse", "kInverseT", "kFixedStep",   "kLua"};
static const unsigned lr_takes[NLR] = {
    [LR_FIXED] = L_BASE,
    [LR_STEP] = L_BASE | L_GAMMA | L_FREQ,
    [LR_EXPONENTIAL] = L_BASE | L_FREQ,
    [LR_LINEAR] = L_BASE | L_FREQ | L_FINAL,
    [LR_INVERSE] = L_BASE | L_GAMMA | L_POW,
    [LR_INVERSET] = L_BASE | L_FINAL,
    [LR_FIXEDSTEP] = L_BASE | L_STEP | L_STEPLR,
    [LR_LUA] = L_SCHED,
};
static const unsigned lr_needs[NLR] = {
    [LR_FIXED] = L_BASE,
    [LR_STEP] = L_BASE | L_FREQ, /* gamma defaults to 1, as before */
    [LR_EXPONENTIAL] = L_BASE | L_FREQ,
    [LR_LINEAR] = L_BASE | L_FREQ | L_FINAL,
    [LR_INVERSE] = L_BASE | L_GAMMA | L_POW,
    [LR_INVERSET] = L_BASE | L_FINAL,
    [LR_FIXEDSTEP] = L_STEP | L_STEPLR,
    [LR_LUA] = L_SCHED,
};

struct singa_updater {
    upd_kind kind;
    lr_kind lr;
    double base_lr, gamma, final_lr, pow;
    int change_freq;
    int nfixed;            /* kFixedStep: fixed_step[i] starts rate fixed_lr[i] */
    int *fixed_step;
    double *fixed_lr;
    float momentum, weight_decay, clip_low, clip_high, delta;
    double rho, beta1, beta2;
    bool clip, fuse;
    int nslots;
    singa_params *params;
    int nparams;           /* the params of the training net, updated here */
    singa_tensor *slots[MAX_SLOTS]; /* per slot, per param: state (empty tensor when unused) */
    size_t *applied;       /* per param: elements already updated during this step's backward */
    bool *fused;           /* per param: the backward pass writes into the history */
    singa_func *update;    /* kLua: the rule (a reference held here) */
    char *state_names[MAX_SLOTS]; /* kLua: its slots' names */
    singa_func *schedule;  /* schedule kLua: step -> rate */
    int rate_step;         /* the step whose rate the schedule gave last (-1: none) */
    float rate;
    float lr_mult;         /* the host's multiplier (singa_updater_set_lr_scale) */
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

static const singa_grad_sink apply_sink = {.ready = apply_ready};

/* A field of type SINGA_FIELD_NUMS: one number or a list. */
static size_t nums_len(const singa_conf *v) { return v->kind == SINGA_CONF_LIST ? v->n : 1; }
static double nums_at(const singa_conf *v, size_t i) { return v->kind == SINGA_CONF_LIST ? v->items[i]->num : v->num; }

/* Reads and checks kFixedStep's `step` and `step_lr` lists. */
static int read_fixed_steps(singa_updater *v, const singa_conf *lr, singa_err *err)
{
    const singa_conf *st = singa_conf_get(lr, "step"), *sl = singa_conf_get(lr, "step_lr");
    size_t n = nums_len(st);
    if (n == 0)
        return singa_err_set(err, "updater.learning_rate: field 'step' of kFixedStep must list at least one step");
    if (nums_len(sl) != n)
        return singa_err_set(err, "updater.learning_rate: kFixedStep's 'step' has %zu entries but 'step_lr' has %zu; they must pair up",
                             n, nums_len(sl));
    if (!(v->fixed_step = malloc(n * sizeof *v->fixed_step)) || !(v->fixed_lr = malloc(n * sizeof *v->fixed_lr)))
        return singa_err_set(err, "out of memory");
    v->nfixed = (int)n;
    for (size_t i = 0; i < n; i++) {
        double s = nums_at(st, i), r = nums_at(sl, i);
        if (!(s >= 0 && s < 2e9 && s == floor(s)))
            return singa_err_set(err, "updater.learning_rate: field 'step' must list whole numbers >= 0, got %g", s);
        if (i > 0 && !(s > v->fixed_step[i - 1]))
            return singa_err_set(err, "updater.learning_rate: field 'step' must be ascending, but %g follows %d", s,
                                 v->fixed_step[i - 1]);
        if (!(r >= 0))
            return singa_err_set(err, "updater.learning_rate: field 'step_lr' must list rates >= 0, got %g", r);
        v->fixed_step[i] = (int)s;
        v->fixed_lr[i] = r;
    }
    return 0;
}

/* Reads the schedule into v; checks every field it uses. */
static int read_schedule(singa_updater *v, const singa_conf *lr, singa_err *err)
{
    const char *what = "updater.learning_rate";
    if (lr->kind == SINGA_CONF_FUNC) { /* learning_rate = f: short for { type = "kLua", schedule = f } */
        v->lr = LR_LUA;
        v->schedule = singa_func_retain(lr->func);
        return 0;
    }
    int lk = pick(what, "type", singa_conf_str(lr, "type", "kFixed"), lr_names, NLR, err);
    if (lk < 0 || check_typed_fields(lr, lr_typed, (int)(sizeof lr_typed / sizeof *lr_typed), lr_names,
                                     lr_takes, lr_needs, NLR, lk, what, err) < 0)
        return -1;
    v->lr = (lr_kind)lk;
    v->base_lr = singa_conf_num(lr, "base_lr", -1);
    v->gamma = singa_conf_num(lr, "gamma", 1);
    v->change_freq = singa_conf_int(lr, "change_freq", 0);
    v->final_lr = singa_conf_num(lr, "final_lr", 0);
    v->pow = singa_conf_num(lr, "pow", 0);
    if (singa_conf_get(lr, "base_lr") && !(v->base_lr >= 0))
        return singa_err_set(err, "%s: field 'base_lr' must be >= 0, got %g", what, v->base_lr);
    if ((lr_takes[lk] & L_FREQ) && v->change_freq <= 0)
        return singa_err_set(err, "%s: field 'change_freq' must be > 0 for %s, got %d", what, lr_names[lk], v->change_freq);
    if (!(v->gamma >= 0))
        return singa_err_set(err, "%s: field 'gamma' must be >= 0, got %g", what, v->gamma);
    if (!(v->pow >= 0))
        return singa_err_set(err, "%s: field 'pow' must be >= 0, got %g", what, v->pow);
    if (lk == LR_LINEAR && !(v->final_lr >= 0))
        return singa_err_set(err, "%s: field 'final_lr' must be >= 0, got %g", what, v->final_lr);
    if (lk == LR_INVERSET && !(v->final_lr > 0))
        return singa_err_set(err, "%s: field 'final_lr' must be > 0 for kInverseT (it divides the step), got %g", what,
                             v->final_lr);
    if (lk == LR_FIXEDSTEP)
        return read_fixed_steps(v, lr, err);
    v->schedule = singa_func_retain(singa_conf_func(lr, "schedule"));
    return 0;
}

/* kLua's `state`: the names of its slots, which become checkpoint entry names. */
static int read_state_names(singa_updater *v, const singa_conf *conf, singa_err *err)
{
    size_t n = singa_conf_strs_len(conf, "state");
    if (n > MAX_SLOTS)
        return singa_err_set(err, "updater (kLua): field 'state' names %zu slots; at most %d are supported", n, MAX_SLOTS);
    for (size_t i = 0; i < n; i++) {
        const char *name = singa_conf_strs_at(conf, "state", i);
        bool ok = *name && strlen(name) <= 64;
        for (const char *c = name; ok && *c; c++)
            ok = isalnum((unsigned char)*c) || *c == '_';
        if (!ok)
            return singa_err_set(err, "updater (kLua): state slot name '%s' must be 1 to 64 letters, digits or '_'", name);
        for (size_t j = 0; j < i; j++)
            if (strcmp(v->state_names[j], name) == 0)
                return singa_err_set(err, "updater (kLua): field 'state' names slot '%s' twice", name);
        if (!(v->state_names[i] = strdup(name)))
            return singa_err_set(err, "out of memory");
        v->nslots = (int)i + 1;
    }
    return 0;
}

/* Reads the updater's own fields into v. */
static int read_method(singa_updater *v, const singa_conf *conf, singa_err *err)
{
    int kind = pick("updater", "type", singa_conf_str(conf, "type", "kSGD"), upd_names, NUPD, err);
    if (kind < 0 || check_typed_fields(conf, upd_typed, (int)(sizeof upd_typed / sizeof *upd_typed), upd_names,
                                       upd_takes, upd_needs, NUPD, kind, "updater", err) < 0)
        return -1;
    v->kind = (upd_kind)kind;
    v->momentum = (float)singa_conf_num(conf, "momentum", 0);
    v->weight_decay = (float)singa_conf_num(conf, "weight_decay", 0);
    v->clip = singa_conf_get(conf, "clip_low") || singa_conf_get(conf, "clip_high");
    v->clip_low = (float)singa_conf_num(conf, "clip_low", -INFINITY);
    v->clip_high = (float)singa_conf_num(conf, "clip_high", INFINITY);
    v->delta = (float)singa_conf_num(conf, "delta", 1e-8);
    v->rho = singa_conf_num(conf, "rho", upd_rho[kind]);
    v->beta1 = singa_conf_num(conf, "beta1", 0.9);
    v->beta2 = singa_conf_num(conf, "beta2", 0.999);
    const char *const unit[] = {"momentum", "rho", "beta1", "beta2"};
    const double val[] = {v->momentum, v->rho, v->beta1, v->beta2};
    for (int i = 0; i < 4; i++)
        if (!(val[i] >= 0 && val[i] < 1))
            return singa_err_set(err, "updater (%s): field '%s' must be in [0, 1), got %g", upd_names[kind], unit[i],
                                 val[i]);
    if (!(v->delta > 0))
        return singa_err_set(err, "updater (%s): field 'delta' must be > 0, got %g", upd_names[kind], v->delta);
    if (!(v->weight_decay >= 0))
        return singa_err_set(err, "updater: field 'weight_decay' must be >= 0, got %g", v->weight_decay);
    if (v->clip && !(v->clip_low < v->clip_high))
        return singa_err_set(err, "updater: clip_low (%g) must be below clip_high (%g)", v->clip_low, v->clip_high);
    v->nslots = 0;
    while (v->nslots < MAX_SLOTS && upd_slots[kind][v->nslots])
        v->nslots++;
    if (kind == UPD_SGD && v->momentum == 0)
        v->nslots = 0; /* plain SGD keeps no state */
    if (kind == UPD_LUA) {
        v->update = singa_func_retain(singa_conf_func(conf, "update"));
        return read_state_names(v, conf, err);
    }
    return 0;
}

int singa_updater_create(singa_updater **out, const singa_conf *conf, singa_params *params,
                         singa_err *err)
{
    return singa_updater_create_ex(out, conf, params, 0, err);
}

/* A schedule's field written on the updater itself (base_lr = 0.01 beside type = "kSGD") is
 * refused saying where it belongs, which a "did you mean" among the updater's fields cannot. */
static int misplaced_lr_field(const singa_conf *conf, singa_err *err)
{
    if (!conf || conf->kind != SINGA_CONF_TABLE)
        return 0;
    for (const singa_field *f = singa_lr_fields; f->name; f++)
        if (strcmp(f->name, "type") != 0 && singa_conf_get(conf, f->name))
            return singa_err_set(err, "updater: unknown field '%s': it belongs in learning_rate, e.g. learning_rate = "
                                      "{ type = \"kFixed\", %s = ... }", f->name, f->name);
    return 0;
}

int singa_updater_create_ex(singa_updater **out, const singa_conf *conf, singa_params *params,
                            unsigned flags, singa_err *err)
{
    const singa_field *const us[] = {singa_updater_fields, NULL}, *const ls[] = {singa_lr_fields, NULL};
    *out = NULL;
    if (misplaced_lr_field(conf, err) < 0 || singa_conf_check(conf, us, "updater", err) < 0)
        return -1;
    const singa_conf *lr = singa_conf_get(conf, "learning_rate");
    if (!lr)
        return singa_err_set(err, "updater: field 'learning_rate' is required, e.g. learning_rate = { type = \"kFixed\", base_lr = 0.01 }");
    if (lr->kind != SINGA_CONF_FUNC && singa_conf_check(lr, ls, "updater.learning_rate", err) < 0)
        return -1;
    singa_updater *u = calloc(1, sizeof *u);
    if (!u)
        return singa_err_set(err, "out of memory");
    u->rate_step = -1;
    u->lr_mult = 1.0f;
    u->params = params;
    u->nparams = params ? params->n : 0;
    if (read_method(u, conf, err) < 0 || read_schedule(u, lr, err) < 0) {
        singa_updater_free(u);
        return -1;
    }
    float m;
    u->fuse = singa_updater_history_grad(u, &m) && !(flags & SINGA_UPDATER_SEPARATE_GRAD);
    size_t np = (size_t)(u->nparams ? u->nparams : 1);
    bool oom = !(u->applied = calloc(np, sizeof *u->applied)) || !(u->fused = calloc(np, sizeof *u->fused));
    for (int s = 0; s < MAX_SLOTS; s++)
        oom = oom || !(u->slots[s] = calloc(np, sizeof *u->slots[s]));
    if (oom) {
        singa_updater_free(u);
        return singa_err_set(err, "out of memory");
    }
    for (int i = 0; i < u->nparams; i++) {
        singa_param *p = params->items[i];
        if (p->owner || !p->trained)
            continue;
        for (int s = 0; s < u->nslots; s++)
            if (singa_tensor_init_like(&u->slots[s][i], &p->data, err) < 0) {
                singa_updater_free(u);
                return -1;
            }
        if ((u->fused[i] = u->fuse && p->nsharers == 0)) {
            /* The gradient lives in the history from now on; the separate buffer goes. */
            singa_tensor_free(&p->grad);
            p->grad = u->slots[0][i];
            p->grad.owns = false;
            singa_param_set_sink(p, &apply_sink, u);
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
        if (singa_param_state_of(p)->sink_ud == u)
            singa_param_set_sink(p, NULL, NULL);
        for (int s = 0; s < MAX_SLOTS; s++)
            if (u->slots[s])
                singa_tensor_free(&u->slots[s][i]);
    }
    for (int s = 0; s < MAX_SLOTS; s++) {
        free(u->slots[s]);
        free(u->state_names[s]);
    }
    singa_func_release(u->update);
    singa_func_release(u->schedule);
    free(u->fixed_step);
    free(u->fixed_lr);
    free(u->applied);
    free(u->fused);
    free(u);
}

/* Calls the kLua schedule for `step` and checks what it returns. */
static int call_schedule(singa_func *f, int step, float *rate, singa_err *err)
{
    singa_value arg = {.kind = SINGA_VALUE_INT, .num = step};
    double r;
    if (f->call(f, &arg, 1, &r, err) < 0)
        return singa_err_prefix(err, "updater.learning_rate (kLua) at step %d: ", step);
    if (!(r >= 0 && isfinite(r)))
        return singa_err_set(err, "updater.learning_rate (kLua) at step %d: the schedule returned %g; a rate must be a finite number >= 0",
                             step, r);
    *rate = (float)r;
    return 0;
}

/* The rate at `step`, calling a kLua schedule once per step. */
static int rate_at(singa_updater *u, int step, float *rate, singa_err *err)
{
    if (u->lr != LR_LUA) {
        *rate = singa_updater_lr(u, step);
        return 0;
    }
    if (step != u->rate_step) {
        if (call_schedule(u->schedule, step, &u->rate, err) < 0)
            return -1;
        u->rate_step = step;
    }
    *rate = u->rate * u->lr_mult;
    return 0;
}

void singa_updater_set_lr_scale(singa_updater *u, float scale) { u->lr_mult = scale; }

static float schedule_lr(const singa_updater *u, int step);

float singa_updater_lr(const singa_updater *u, int step) { return schedule_lr(u, step) * u->lr_mult; }

/* The schedule's rate at `step`, without the host's multiplier. */
static float schedule_lr(const singa_updater *u, int step)
{
    double s = step, b = u->base_lr, r;
    switch (u->lr) {
    case LR_FIXED:
        break;
    case LR_STEP:
        return (float)(b * pow(u->gamma, floor(s / u->change_freq)));
    case LR_EXPONENTIAL:
        return (float)(b / pow(2.0, s / u->change_freq));
    case LR_LINEAR: /* held at final_lr after change_freq steps (SINGA went on, below 0) */
        r = fmin(s / u->change_freq, 1.0);
        return (float)((1 - r) * b + r * u->final_lr);
    case LR_INVERSE:
        return (float)(b * pow(1 + u->gamma * s, -u->pow));
    case LR_INVERSET:
        return (float)(b / (1 + s / u->final_lr));
    case LR_FIXEDSTEP:
        r = b >= 0 ? b : u->fixed_lr[0];
        for (int i = 0; i < u->nfixed && step >= u->fixed_step[i]; i++)
            r = u->fixed_lr[i];
        return (float)r;
    case LR_LUA: {
        singa_err ignored;
        float rate;
        if (step == u->rate_step)
            return u->rate;
        return call_schedule(u->schedule, step, &rate, &ignored) < 0 ? NAN : rate;
    }
    }
    return (float)b;
}

int singa_updater_prepare(singa_updater *u, int step, singa_err *err)
{
    float lr;
    if (rate_at(u, step, &lr, err) < 0)
        return -1;
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
    return 0;
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

/* One param's coefficients for one step. */
typedef struct {
    float scale, wd, lo, hi; /* effective gradient: clip(g * scale + wd * w, lo, hi) */
    float lr;                /* lr, or for kAdam/kAdamMax lr / (1 - beta1^t) */
    float m, delta;
    float rho, rho_c, b1, b1_c, b2, b2_c; /* x_c = 1 - x, rounded once from the double */
    float vhat;              /* kAdam: 1 / (1 - beta2^t) */
} coefs;

/* The one update loop.  Always inlined with a constant `kind`, so the switch folds away and each
 * instantiation is a plain loop.  s0, s1 are the type's slots (NULL when it has fewer). */
static inline __attribute__((always_inline)) void
update_elems(upd_kind kind, bool clip, const coefs *c, size_t n, float *restrict w, const float *restrict g,
             float *restrict s0, float *restrict s1)
{
    const float scale = c->scale, wd = c->wd, lo = c->lo, hi = c->hi, lr = c->lr, m = c->m, delta = c->delta;
    const float rho = c->rho, rho_c = c->rho_c, b1 = c->b1, b1_c = c->b1_c, b2 = c->b2, b2_c = c->b2_c;
    const float vhat = c->vhat;
    for (size_t k = 0; k < n; k++) {
        float gk = g[k] * scale + wd * w[k];
        if (clip) /* not fminf/fmaxf, which do not vectorise (and would turn a NaN into lo) */
            gk = gk < lo ? lo : gk > hi ? hi : gk;
        switch (kind) {
        case UPD_SGD:
            if (s0) {
                s0[k] = m * s0[k] - lr * gk;
                w[k] += s0[k];
            } else {
                w[k] -= lr * gk;
            }
            break;
        case UPD_NESTEROV: {
            float prev = s0[k];
            s0[k] = m * s0[k] + lr * gk;
            w[k] -= (1 + m) * s0[k] - m * prev;
            break;
        }
        case UPD_ADAGRAD:
            s0[k] += gk * gk;
            w[k] -= lr * gk / sqrtf(s0[k] + delta);
            break;
        case UPD_RMSPROP:
            s0[k] = rho * s0[k] + rho_c * gk * gk;
            w[k] -= lr * gk / sqrtf(s0[k] + delta);
            break;
        case UPD_ADADELTA: { /* s0: E[g^2], s1: E[d^2] */
            s0[k] = rho * s0[k] + rho_c * gk * gk;
            float d = sqrtf(s1[k] + delta) / sqrtf(s0[k] + delta) * gk;
            s1[k] = rho * s1[k] + rho_c * d * d;
            w[k] -= lr * d;
            break;
        }
        case UPD_ADAM:
            s0[k] = b1 * s0[k] + b1_c * gk;
            s1[k] = b2 * s1[k] + b2_c * gk * gk;
            w[k] -= lr * s0[k] / (sqrtf(s1[k] * vhat) + delta);
            break;
        case UPD_ADAMAX:
            s0[k] = b1 * s0[k] + b1_c * gk;
            s1[k] = fmaxf(b2 * s1[k], fabsf(gk));
            w[k] -= lr * s0[k] / (s1[k] + delta);
            break;
        case UPD_LUA: /* apply_lua */
            break;
        }
    }
}

#define UPDATE_CASE(K)                                                                             \
    case K:                                                                                        \
        if (clip)                                                                                  \
            update_elems(K, true, c, n, w, g, s0, s1);                                             \
        else                                                                                       \
            update_elems(K, false, c, n, w, g, s0, s1);                                            \
        break

static void update_param(upd_kind kind, bool clip, const coefs *c, size_t n, float *w, const float *g,
                         float *s0, float *s1)
{
    switch (kind) {
        UPDATE_CASE(UPD_SGD);
        UPDATE_CASE(UPD_NESTEROV);
        UPDATE_CASE(UPD_ADAGRAD);
        UPDATE_CASE(UPD_RMSPROP);
        UPDATE_CASE(UPD_ADADELTA);
        UPDATE_CASE(UPD_ADAM);
        UPDATE_CASE(UPD_ADAMAX);
    case UPD_LUA:
        break;
    }
}

/* g = clip(g * scale + wd * w) in place: the effective gradient kLua is given, computed as
 * update_elems computes it. */
static void effective_grad(bool clip, float scale, float wd, float lo, float hi, size_t n,
                           const float *restrict w, float *restrict g)
{
    for (size_t k = 0; k < n; k++) {
        float gk = g[k] * scale + wd * w[k];
        if (clip)
            gk = gk < lo ? lo : gk > hi ? hi : gk;
        g[k] = gk;
    }
}

/* kLua: update(step, param, grad, state, lr, name) for param i, whose gradient is `g` scaled. */
static int apply_lua(singa_updater *u, int i, int step, float lr, float scale, float *g, singa_err *err)
{
    singa_param *p = u->params->items[i];
    float wd = u->weight_decay * p->wd_scale;
    if (scale != 1.0f || wd != 0.0f || u->clip)
        effective_grad(u->clip, scale, wd, u->clip_low, u->clip_high, p->data.size, p->data.data, g);
    singa_tensor grad = p->data;
    grad.data = g;
    grad.owns = false;
    singa_tensor *state[MAX_SLOTS];
    for (int s = 0; s < u->nslots; s++)
        state[s] = &u->slots[s][i];
    const singa_value args[] = {
        {.kind = SINGA_VALUE_INT, .num = step},
        {.kind = SINGA_VALUE_TENSOR, .tensor = &p->data},
        {.kind = SINGA_VALUE_TENSOR, .tensor = &grad},
        {.kind = SINGA_VALUE_TENSORS, .n = u->nslots, .tensors = state, .names = (const char *const *)u->state_names},
        {.kind = SINGA_VALUE_NUM, .num = (float)(lr * p->lr_scale)}, /* as the built-in types round it */
        {.kind = SINGA_VALUE_STR, .str = p->name},
    };
    if (u->update->call(u->update, args, (int)(sizeof args / sizeof *args), NULL, err) < 0)
        return singa_err_prefix(err, "updater kLua, param '%s': ", p->name);
    return 0;
}

static void apply_elems(singa_updater *u, int i, int step, float lr, float scale, const float *g, size_t off, size_t n);

/* Param i's update from gradient g times scale, at rate lr. */
static int apply_param(singa_updater *u, int i, int step, float lr, float scale, float *g, singa_err *err)
{
    if (u->kind == UPD_LUA)
        return apply_lua(u, i, step, lr, scale, g, err);
    apply_elems(u, i, step, lr, scale, g, 0, u->params->items[i]->data.size);
    return 0;
}

/* Elements [off, off + n) of param i (not kLua's) from g[0, n). */
static void apply_elems(singa_updater *u, int i, int step, float lr, float scale, const float *g, size_t off, size_t n)
{
    singa_param *p = u->params->items[i];
    /* Adam's bias corrections, with t = step + 1 (the step's own gradient is the t-th one). */
    double t = (double)step + 1, c1 = 1, vhat = 1;
    if (u->kind == UPD_ADAM || u->kind == UPD_ADAMAX) {
        c1 = 1 - pow(u->beta1, t);
        vhat = 1 / (1 - pow(u->beta2, t));
    }
    coefs c = {
        .scale = scale,
        .wd = u->weight_decay * p->wd_scale,
        .lo = u->clip_low,
        .hi = u->clip_high,
        .lr = (float)(lr * p->lr_scale / c1),
        .m = u->momentum,
        .delta = u->delta,
        .rho = (float)u->rho,
        .rho_c = (float)(1 - u->rho),
        .b1 = (float)u->beta1,
        .b1_c = (float)(1 - u->beta1),
        .b2 = (float)u->beta2,
        .b2_c = (float)(1 - u->beta2),
        .vhat = (float)vhat,
    };
    float *s0 = u->slots[0][i].data, *s1 = u->slots[1][i].data;
    update_param(u->kind, u->clip, &c, n, p->data.data + off, g, s0 ? s0 + off : NULL, s1 ? s1 + off : NULL);
}

int singa_updater_apply(singa_updater *u, int step, singa_err *err)
{
    float lr;
    if (rate_at(u, step, &lr, err) < 0)
        return -1;
    for (int i = 0; i < u->nparams; i++) {
        singa_param *p = u->params->items[i];
        if (p->owner || !p->trained)
            continue;
        if (u->fused[i]) {
            /* Layers report a param's gradient in full or not at all; unreported ones apply now. */
            if (u->applied[i] == 0)
                apply_ready(u, p, 0, p->data.size);
            u->applied[i] = 0;
            continue;
        }
        if (apply_param(u, i, step, lr, 1.0f / (float)gather_sharers(u, p), p->grad.data, err) < 0)
            return -1;
    }
    return 0;
}

int singa_updater_apply_one(singa_updater *u, int param_id, int step, float *grad, float scale, singa_err *err)
{
    float lr;
    if (rate_at(u, step, &lr, err) < 0)
        return -1;
    return apply_param(u, param_id, step, lr, scale, grad, err);
}

bool singa_updater_elementwise(const singa_updater *u) { return u->kind != UPD_LUA; }

int singa_updater_apply_span(singa_updater *u, int param_id, int step, const float *grad, float scale, size_t offset,
                             size_t n, singa_err *err)
{
    float lr;
    if (u->kind == UPD_LUA)
        return singa_err_set(err, "updater kLua: its update takes a whole param");
    if (rate_at(u, step, &lr, err) < 0)
        return -1;
    apply_elems(u, param_id, step, lr, scale, grad, offset, n);
    return 0;
}

bool singa_updater_history_grad(const singa_updater *u, float *momentum)
{
    *momentum = u->momentum;
    return u->kind == UPD_SGD && u->momentum != 0 && !u->clip;
}

bool singa_updater_set_momentum(singa_updater *u, float momentum)
{
    if ((u->kind != UPD_SGD && u->kind != UPD_NESTEROV) || !(momentum >= 0 && momentum <= u->momentum))
        return false;
    u->momentum = momentum;
    return true;
}

void singa_updater_adopt_slot(singa_updater *u, int param_id, int slot, float *mem)
{
    singa_tensor *t = &u->slots[slot][param_id];
    memcpy(mem, t->data, t->size * sizeof(float));
    singa_tensor_rebind(t, mem);
}

int singa_updater_apply_history(singa_updater *u, int param_id, int step, singa_err *err)
{
    float lr;
    if (rate_at(u, step, &lr, err) < 0)
        return -1;
    singa_param *p = u->params->items[param_id];
    float *h = u->slots[0][param_id].data, *w = p->data.data, c = lr * p->lr_scale * u->weight_decay * p->wd_scale;
    size_t n = p->data.size;
    if (c == 0) {
        cblas_saxpy((int)n, 1.0f, h, 1, w, 1);
        return 0;
    }
    for (size_t k = 0; k < n; k++) { /* one pass: h = m h - lr g was written, - lr wd w is added here */
        h[k] -= c * w[k];
        w[k] += h[k];
    }
    return 0;
}

int singa_updater_nslots(const singa_updater *u) { return u->nslots; }

const char *singa_updater_slot_name(const singa_updater *u, int slot)
{
    if (slot < 0 || slot >= u->nslots)
        return NULL;
    return u->kind == UPD_LUA ? u->state_names[slot] : upd_slots[u->kind][slot];
}

singa_tensor *singa_updater_slot(singa_updater *u, int param_id, int slot)
{
    if (param_id < 0 || param_id >= u->nparams || slot < 0 || slot >= u->nslots || !u->slots[slot][param_id].data)
        return NULL;
    return &u->slots[slot][param_id];
}

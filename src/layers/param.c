/* The param store, param initialisation (SINGA's ParamGenProto methods), and the way a
 * gradient reaches its sink (param_state.h). */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layers/param_state.h"

/* singa_param as plugins built against ABI 1.0 to 1.3 see it: what they may read stays put. */
struct param_abi_1_3 {
    char *name;
    int id;
    char *layer;
    singa_tensor data, grad;
    float grad_alpha, grad_beta, lr_scale, wd_scale;
    int fan_in, fan_out;
    singa_conf *init;
    const char *default_init;
    singa_param *owner;
    int nsharers;
    bool trained, state;
    void (*grad_ready)(void);
    void *grad_ready_ud;
    const void *net, *decl;
    singa_param *whole;
    bool disjoint;
    int nviews, nviews_done;
    bool claimed, partial;
    void (*grad_turn)(void);
    int grad_parts;
    bool turn_held;
    double default_value;
};
#define SAME_OFFSET(m)                                                                        \
    _Static_assert(offsetof(singa_param, m) == offsetof(struct param_abi_1_3, m),             \
                   "singa_param." #m " moved: plugins built for ABI 1.0 to 1.3 read it elsewhere")
SAME_OFFSET(name);
SAME_OFFSET(id);
SAME_OFFSET(layer);
SAME_OFFSET(data);
SAME_OFFSET(grad);
SAME_OFFSET(grad_alpha);
SAME_OFFSET(grad_beta);
SAME_OFFSET(lr_scale);
SAME_OFFSET(wd_scale);
SAME_OFFSET(fan_in);
SAME_OFFSET(fan_out);
SAME_OFFSET(init);
SAME_OFFSET(default_init);
SAME_OFFSET(owner);
SAME_OFFSET(nsharers);
SAME_OFFSET(trained);
SAME_OFFSET(state);
SAME_OFFSET(default_value);

const singa_field singa_param_fields[] = {
    {"name", SINGA_FIELD_STR},      {"init", SINGA_FIELD_TABLE},
    {"lr_scale", SINGA_FIELD_NUM},  {"wd_scale", SINGA_FIELD_NUM},
    {"share_from", SINGA_FIELD_STR}, {NULL, 0},
};

const singa_field singa_init_fields[] = {
    {"type", SINGA_FIELD_STR}, {"value", SINGA_FIELD_NUM}, {"mean", SINGA_FIELD_NUM},
    {"std", SINGA_FIELD_NUM},  {"low", SINGA_FIELD_NUM},   {"high", SINGA_FIELD_NUM},
    {NULL, 0},
};

void singa_params_init(singa_params *ps) { memset(ps, 0, sizeof *ps); }

void singa_params_free(singa_params *ps)
{
    for (int i = 0; i < ps->n; i++) {
        singa_param *p = ps->items[i];
        singa_tensor_free(&p->data);
        singa_tensor_free(&p->grad);
        singa_conf_free(p->init);
        free(p->name);
        free(p->layer);
        free(p);
    }
    free(ps->items);
    memset(ps, 0, sizeof *ps);
}

singa_param *singa_params_find(const singa_params *ps, const char *name)
{
    for (int i = 0; i < ps->n; i++)
        if (strcmp(ps->items[i]->name, name) == 0)
            return ps->items[i];
    return NULL;
}

singa_param *singa_params_declare(singa_params *ps, const char *name, const char *layer, int ndim,
                                  const int *shape, singa_err *err)
{
    singa_param *p = singa_params_find(ps, name);
    if (p) {
        singa_tensor want = {.ndim = ndim};
        memcpy(want.shape, shape, (size_t)ndim * sizeof *shape);
        if (!singa_tensor_same_shape(&p->data, &want)) {
            char a[64], b[64];
            want.size = 1;
            singa_err_set(err, "param '%s' has shape %s here but %s in layer '%s'", name,
                          singa_tensor_shape_str(&want, a, sizeof a),
                          singa_tensor_shape_str(&p->data, b, sizeof b), p->layer);
            return NULL;
        }
        return p;
    }
    if (ps->n == ps->cap) {
        int cap = ps->cap ? 2 * ps->cap : 16;
        singa_param **items = realloc(ps->items, (size_t)cap * sizeof *items);
        if (!items) {
            singa_err_set(err, "out of memory");
            return NULL;
        }
        ps->items = items;
        ps->cap = cap;
    }
    singa_param_state *st = calloc(1, sizeof *st);
    if (!(p = st ? &st->p : NULL) || !(p->name = strdup(name)) || !(p->layer = strdup(layer))) {
        if (p)
            free(p->name);
        free(p);
        singa_err_set(err, "out of memory");
        return NULL;
    }
    if (singa_tensor_init(&p->data, ndim, shape, err) < 0 ||
        singa_tensor_init(&p->grad, ndim, shape, err) < 0) {
        singa_tensor_free(&p->data);
        free(p->name);
        free(p->layer);
        free(p);
        return NULL;
    }
    p->grad_alpha = 1.0f;
    p->id = ps->n;
    p->lr_scale = p->wd_scale = 1.0f;
    ps->items[ps->n++] = p;
    return p;
}

void singa_param_set_sink(singa_param *p, const singa_grad_sink *sink, void *ud)
{
    singa_param_state *s = singa_param_state_of(p);
    s->sink = sink;
    s->sink_ud = ud;
}

int singa_param_want(singa_param *p, singa_err *err)
{
    singa_param *whole = p->owner ? p->owner : p;
    const singa_param_state *s = singa_param_state_of(whole);
    return s->sink && s->sink->want ? s->sink->want(s->sink_ud, whole, err) : 0;
}

/* The blocks p's gradient is written in turn, or 0 when it is not written in turns. */
static int turn_parts(const singa_param_state *s)
{
    return s->sink && s->sink->turn ? (s->grad_parts > 1 ? s->grad_parts : 1) : 0;
}

void singa_param_grad_begin(singa_param *p)
{
    singa_param_state *s = singa_param_state_of(p);
    int n = turn_parts(s);
    if (n == 0 || s->turn_held)
        return;
    for (int j = 0; j < n; j++)
        s->sink->turn(s->sink_ud, p, j, true);
    s->turn_held = true;
}

void singa_param_grad_gemm(singa_param *p, bool trans_a, const singa_tensor *a, bool trans_b,
                           const singa_tensor *b)
{
    singa_param_state *s = singa_param_state_of(p);
    singa_tensor g = singa_tensor_view_matrix(&p->grad), am = singa_tensor_view_matrix(a);
    int n = turn_parts(s), rows = singa_tensor_rows(&g);
    if (n <= 1 || rows < n) {
        singa_param_grad_begin(p);
        singa_tensor_gemm(trans_a, trans_b, p->grad_alpha, &am, b, p->grad_beta, &g);
    } else {
        for (int j = 0; j < n; j++) { /* rows [r0, r1) of op(A) make rows [r0, r1) of the gradient */
            int r0 = rows * j / n, r1 = rows * (j + 1) / n;
            singa_tensor gj = singa_tensor_view_rows(&g, r0, r1 - r0);
            singa_tensor aj = trans_a ? singa_tensor_view_cols(&am, r0, r1 - r0) : singa_tensor_view_rows(&am, r0, r1 - r0);
            s->sink->turn(s->sink_ud, p, j, true);
            singa_tensor_gemm(trans_a, trans_b, p->grad_alpha, &aj, b, p->grad_beta, &gj);
            s->sink->turn(s->sink_ud, p, j, false);
        }
    }
    singa_param_grad_done(p);
}

void singa_param_grad_done(singa_param *p)
{
    singa_param_state *s = singa_param_state_of(p);
    if (s->turn_held) {
        for (int j = 0; j < turn_parts(s); j++)
            s->sink->turn(s->sink_ud, p, j, false);
        s->turn_held = false;
    }
    singa_param_view *v = singa_param_view_of(p);
    if (v) {
        p = v->whole;
        s = singa_param_state_of(p);
        /* views of one param may be final in several threads (a partitioned net's locations) */
        if (__atomic_add_fetch(&s->nviews_done, 1, __ATOMIC_ACQ_REL) < s->nviews)
            return;
        s->nviews_done = 0;
    }
    if (s->sink && s->sink->ready)
        s->sink->ready(s->sink_ud, p, 0, p->grad.size);
}

singa_param *singa_param_view_new(singa_param *w, const char *layer, int index, int axis, int at, int n)
{
    singa_param_view *v = calloc(1, sizeof *v);
    size_t len = strlen(w->name) + 16;
    singa_param *p = v ? &v->st.p : NULL;
    if (!v || !(p->name = malloc(len)) || !(p->layer = strdup(layer))) {
        if (v)
            free(p->name);
        free(v);
        return NULL;
    }
    snprintf(p->name, len, "%s@%d", w->name, index);
    v->st.is_view = true;
    v->whole = w;
    p->data = w->data;
    p->grad = w->grad;
    p->data.owns = p->grad.owns = false;
    if (axis >= 0) {
        if (w->data.ndim == 1) { /* a range of a vector */
            p->data.data += at;
            p->grad.data += at;
            p->data.shape[0] = p->grad.shape[0] = n;
            p->data.size = p->grad.size = (size_t)n;
        } else {
            p->data = axis == 0 ? singa_tensor_view_rows(&w->data, at, n) : singa_tensor_view_cols(&w->data, at, n);
            p->grad = axis == 0 ? singa_tensor_view_rows(&w->grad, at, n) : singa_tensor_view_cols(&w->grad, at, n);
        }
        v->disjoint = true;
    }
    singa_param_state_of(w)->nviews++;
    return p;
}

void singa_param_view_begin(singa_param *view)
{
    singa_param_view *v = singa_param_view_of(view);
    singa_param_state *w = singa_param_state_of(v->whole);
    view->grad_alpha = w->p.grad_alpha;
    view->grad_beta = v->disjoint || !w->claimed ? w->p.grad_beta : 1.0f;
    w->claimed |= !v->disjoint;
}

void singa_param_view_free(singa_param *view)
{
    singa_param_view *v = view ? singa_param_view_of(view) : NULL;
    if (!v)
        return;
    singa_param_state_of(v->whole)->nviews--;
    free(view->name);
    free(view->layer);
    free(v);
}

int singa_param_init_values(singa_param *p, singa_rng *rng, singa_err *err)
{
    const size_t all[1][2] = {{0, p->data.size}};
    return singa_param_init_held(p, rng, all, 1, err);
}

int singa_param_init_held(singa_param *p, singa_rng *rng, const size_t (*held)[2], int nheld, singa_err *err)
{
    const singa_conf *c = p->init;
    const char *type = singa_conf_str(c, "type", p->default_init);
    /* Without an init table a param gets its layer's default type and value (0 for a bias). */
    double value = c ? singa_conf_num(c, "value", 1.0) : p->default_value, mean = singa_conf_num(c, "mean", 0.0);
    double sd = singa_conf_num(c, "std", 1.0), low = singa_conf_num(c, "low", -1.0);
    double high = singa_conf_num(c, "high", 1.0);
    double fan_in = p->fan_in > 0 ? p->fan_in : 1, fan_out = p->fan_out > 0 ? p->fan_out : 1;
    enum { CONST, UNIFORM, GAUSS } kind;
    double scale = 1.0;
    if (strcmp(type, "kConstant") == 0) {
        kind = CONST;
    } else if (strcmp(type, "kUniform") == 0) {
        kind = UNIFORM;
        scale = value;
    } else if (strcmp(type, "kGaussian") == 0) {
        kind = GAUSS;
        scale = value;
    } else if (strcmp(type, "kGaussianSqrtFanIn") == 0) {
        kind = GAUSS;
        scale = 1.0 / sqrt(fan_in);
    } else if (strcmp(type, "kUniformSqrtFanIn") == 0) {
        kind = UNIFORM;
        scale = 1.0 / sqrt(fan_in / 3.0);
    } else if (strcmp(type, "kUniformSqrtFanInOut") == 0) {
        kind = UNIFORM;
        scale = 1.0 / sqrt(fan_in + fan_out);
    } else {
        static const char *const known[] = {"kConstant",          "kUniform",
                                            "kGaussian",          "kGaussianSqrtFanIn",
                                            "kUniformSqrtFanIn",  "kUniformSqrtFanInOut"};
        return singa_err_unknown(err, NULL, "init type", type, known, 6);
    }
    if (kind == UNIFORM && !(low < high))
        return singa_err_set(err, "init needs low < high (got %g, %g)", low, high);
    if (!held)
        return 0;
    float *w = p->data.data;
    int r = 0;
    for (size_t i = 0; i < p->data.size; i++) {
        double v = value; /* drawn for every element, so the held ones get the whole param's values */
        if (kind == UNIFORM)
            v = (low + (high - low) * singa_rng_uniform(rng)) * scale;
        else if (kind == GAUSS)
            v = (mean + sd * singa_rng_gaussian(rng)) * scale;
        while (r < nheld && held[r][1] <= i)
            r++;
        if (r < nheld && held[r][0] <= i)
            w[i] = (float)v;
    }
    return 0;
}

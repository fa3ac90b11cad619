/* A layer declaring its params (singa_layer_param_value and the two older entry points of
 * singa/layer.h): the job's param table, the param's name (an unrolled copy's is its copy 0's),
 * share_from, the store's one param of that name, its first declaration's settings and initial
 * values, and in a part of a partitioned layer the part's view of it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layers/ctx.h"
#include "layers/param_state.h"
#include "singa/net.h"

/* What the layer asks for, as the public functions' arguments give it. */
typedef struct request {
    int index;
    const char *suffix;
    int ndim;
    const int *shape;
    int axis;
    int fan_in, fan_out;
    const char *default_init;
    double default_value;
} request;

/* The index-th entry of the layer's param list, checked, or NULL when it has none. */
static int read_entry(const singa_layer *l, int index, const char *what, const singa_conf **pc, singa_err *err)
{
    const singa_conf *list = singa_conf_get(l->conf, "param");
    *pc = list && (size_t)index < list->n ? list->items[index] : NULL;
    const singa_field *const schemas[] = {singa_param_fields, NULL};
    return *pc ? singa_conf_check(*pc, schemas, what, err) : 0;
}

/* The param's name into name[cap] and whom it shares its value with (*share, or NULL): the
 * list's name, else "<layer>_<suffix>"; a copy of an unrolled layer shares copy 0's. */
static int name_param(const singa_layer *l, const request *rq, const singa_conf *pc, const char *what, char *name,
                      size_t cap, const char **share, singa_err *err)
{
    char defname[2 * SINGA_NAME_MAX + 2];
    snprintf(defname, sizeof defname, "%s_%s", singa_conf_str(l->conf, "name", l->name), rq->suffix);
    const char *given = singa_conf_str(pc, "name", defname);
    *share = singa_conf_str(pc, "share_from", NULL);
    if (l->unroll_index > 0) { /* copies of an unrolled layer share copy 0's params */
        if (rq->index >= l->unroll_first->nparams)
            return singa_err_set(err, "%s: copy %d declares more params than copy 0", what, l->unroll_index);
        *share = l->unroll_first->params[rq->index]->name;
        snprintf(name, cap, "%s#%d", *share, l->unroll_index);
        given = name;
    }
    if (strlen(given) >= sizeof defname || !*given)
        return singa_err_set(err, "%s: a param name must have 1 to %zu characters", what, sizeof defname - 1);
    if (given != name)
        snprintf(name, cap, "%s", given);
    return 0;
}

/* The param whose value share_from names, followed to the one that owns it. */
static singa_param *find_owner(const singa_params *ps, const char *share, const char *what, const char *name,
                               singa_err *err)
{
    singa_param *owner = singa_params_find(ps, share);
    if (!owner) {
        singa_err_set(err, "%s ('%s'): share_from names unknown param '%s' (it must be declared by an earlier layer)",
                      what, name, share);
        return NULL;
    }
    while (owner->owner)
        owner = owner->owner;
    return owner;
}

/* Room for one more param in l's list, which the layer fills in order. */
static int grow_list(singa_layer *l, int index, const char *what, singa_err *err)
{
    if (index != l->nparams)
        return singa_err_set(err, "%s: params must be declared in order", what);
    singa_param **arr = realloc(l->params, (size_t)(l->nparams + 1) * sizeof *arr);
    if (!arr)
        return singa_err_set(err, "out of memory");
    l->params = arr;
    return 0;
}

/* A name used by another layer of this net (its parts of a partitioned layer excepted). */
static int check_unused(const singa_layer *l, const singa_params *ps, const char *name, bool part, const char *what,
                        singa_err *err)
{
    singa_param *prev = singa_params_find(ps, name);
    const singa_param_state *s = prev ? singa_param_state_c(prev) : NULL;
    if (s && s->net == l->net && !(part && s->decl == l->conf))
        return singa_err_set(err, "%s: param name '%s' is already used by layer '%s' in this net (use share_from to share a value)",
                             what, name, prev->layer);
    return 0;
}

/* The param list's init table, checked and copied into p. */
static int copy_init(singa_param *p, const singa_conf *pc, const char *what, singa_err *err)
{
    const singa_conf *init = singa_conf_get(pc, "init");
    if (!init)
        return 0;
    const singa_field *const schemas[] = {singa_init_fields, NULL};
    char iw[200];
    snprintf(iw, sizeof iw, "%s ('%s'): init", what, p->name);
    if (singa_conf_check(init, schemas, iw, err) < 0)
        return -1;
    if (!(p->init = singa_conf_clone(init)))
        return singa_err_set(err, "out of memory");
    return 0;
}

/* p's value becomes a view of its owner's. */
static int share_value(singa_param *p, singa_param *owner, const char *what, singa_err *err)
{
    if (!singa_tensor_same_shape(&owner->data, &p->data)) {
        char a[64], b[64];
        return singa_err_set(err, "%s ('%s'): shape %s differs from shared param '%s' (%s)", what, p->name,
                             singa_tensor_shape_str(&p->data, a, sizeof a), owner->name,
                             singa_tensor_shape_str(&owner->data, b, sizeof b));
    }
    singa_tensor_free(&p->data);
    p->data = owner->data;
    p->data.owns = false;
    p->owner = owner;
    return 0;
}

/* The first declaration of p: its settings from the param list and the layer, then its value,
 * shared with owner or drawn (only checked, when the store defers drawing). */
static int first_declaration(singa_layer *l, singa_param *p, const request *rq, const singa_conf *pc,
                             singa_param *owner, const char *what, singa_err *err)
{
    p->lr_scale = (float)singa_conf_num(pc, "lr_scale", 1.0);
    p->wd_scale = (float)singa_conf_num(pc, "wd_scale", 1.0);
    p->fan_in = rq->fan_in;
    p->fan_out = rq->fan_out;
    p->default_init = rq->default_init;
    p->default_value = rq->default_value;
    if (copy_init(p, pc, what, err) < 0)
        return -1;
    if (owner)
        return share_value(p, owner, what, err);
    if (l->ctx->params->defer_init ? singa_param_init_held(p, l->ctx->rng, NULL, 0, err) < 0
                                   : singa_param_init_values(p, l->ctx->rng, err) < 0)
        return singa_err_prefix(err, "%s ('%s'): ", what, p->name);
    return 0;
}

/* Appends the part's view of whole param p along rq->axis (all of p when the axis is -1 or the
 * part is on the batch) to l's params. */
static singa_param *add_view(singa_layer *l, singa_param *p, const request *rq, const char *what, singa_err *err)
{
    int axis = l->part.dim == 1 ? rq->axis : -1, n = 0;
    if (axis >= 0) {
        if (p->data.shape[axis] % l->part.count != 0) {
            singa_err_set(err, "%s ('%s'): dimension %d (%d) does not divide into %d parts on the features", what,
                          p->name, axis, p->data.shape[axis], l->part.count);
            return NULL;
        }
        n = p->data.shape[axis] / l->part.count;
    }
    singa_param *v = singa_param_view_new(p, l->name, l->part.index, axis, n * l->part.index, n);
    if (!v) {
        singa_err_set(err, "out of memory");
        return NULL;
    }
    l->params[l->nparams++] = v;
    return v;
}

static singa_param *declare(singa_layer *l, const request *rq, singa_err *err)
{
    char what[SINGA_NAME_MAX + 64], name[2 * SINGA_NAME_MAX + 2 + 16];
    snprintf(what, sizeof what, "layer '%s' (%s): param %d", l->name, l->type->name, rq->index + 1);
    const singa_conf *pc;
    const char *share;
    if (read_entry(l, rq->index, what, &pc, err) < 0 || name_param(l, rq, pc, what, name, sizeof name, &share, err) < 0)
        return NULL;
    singa_params *ps = l->ctx->params;
    singa_param *owner = share ? find_owner(ps, share, what, name, err) : NULL;
    if ((share && !owner) || grow_list(l, rq->index, what, err) < 0)
        return NULL;
    bool part = l->part.count > 1;
    if (part && (l->unroll_len > 1 || share)) {
        singa_err_set(err, "%s: a partitioned layer's params can be neither unrolled nor shared (share_from), so far", what);
        return NULL;
    }
    if (check_unused(l, ps, name, part, what, err) < 0)
        return NULL;
    bool existed = singa_params_find(ps, name) != NULL;
    singa_param *p = singa_params_declare(ps, name, l->name, rq->ndim, rq->shape, err);
    if (!p) {
        singa_err_prefix(err, "%s: ", what);
        return NULL;
    }
    if (!existed && first_declaration(l, p, rq, pc, owner, what, err) < 0)
        return NULL;
    singa_param_state *s = singa_param_state_of(p);
    s->net = l->net;
    s->decl = l->conf;
    if (l->ctx->phase == SINGA_PHASE_TRAIN && !p->trained) {
        p->trained = true;
        if (p->owner)
            p->owner->nsharers++;
    }
    if (part)
        return add_view(l, p, rq, what, err);
    l->params[l->nparams++] = p;
    return p;
}

singa_param *singa_layer_param_value(singa_layer *l, int index, const char *suffix, int ndim,
                                     const int *shape, int axis, int fan_in, int fan_out,
                                     const char *default_init, double default_value, singa_err *err)
{
    const request rq = {index, suffix, ndim, shape, axis, fan_in, fan_out, default_init, default_value};
    return declare(l, &rq, err);
}

/* The symbols plugins built before ABI 1.3 call (singa/layer.h): their default value was 0. */
#undef singa_layer_param
#undef singa_layer_param_split
singa_param *singa_layer_param(singa_layer *l, int index, const char *suffix, int ndim,
                               const int *shape, int fan_in, int fan_out, const char *default_init,
                               singa_err *err)
{
    return singa_layer_param_value(l, index, suffix, ndim, shape, -1, fan_in, fan_out, default_init, 0.0, err);
}

singa_param *singa_layer_param_split(singa_layer *l, int index, const char *suffix, int ndim,
                                     const int *shape, int axis, int fan_in, int fan_out,
                                     const char *default_init, singa_err *err)
{
    return singa_layer_param_value(l, index, suffix, ndim, shape, axis, fan_in, fan_out, default_init, 0.0, err);
}

/* The state of a replica that applies its group's update itself (replica_update.h): PowerSGD's Q
 * and residuals per slice (top-k's residuals are residuals.c's), the replica's own updater, their
 * checkpoint entries. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/replica_update.h"

static rt_psgd_geom geom_of(const rt_ctx *rt, int k)
{
    const rt_slice *sl = &rt->slices[k];
    if (rt->c->compress.kind == SINGA_COMPRESS_TOPK)
        return (rt_psgd_geom){.mode = RT_PSGD_SPARSE, .n = sl->len};
    const singa_tensor *t = &rt->final_params[sl->param]->data;
    return rt_psgd_geom_of(t->shape, t->ndim, sl->offset, sl->len, rt->c->powersgd);
}

rt_psgd_geom rt_replica_mode_at(const rt_ctx *rt, int k, int step)
{
    rt_psgd_geom g = geom_of(rt, k);
    if (step < rt->self_update->start)
        g.mode = RT_PSGD_F32;
    return g;
}

size_t rt_replica_max_frame(const rt_ctx *rt, int k)
{
    const singa_compress *c = &rt->c->compress;
    size_t n = rt->slices[k].len, scale = sizeof(float);
    if (c->kind == SINGA_COMPRESS_TOPK && c->values == SINGA_COMPRESS_UPDATE)
        return 8 * n + scale;
    if (c->kind != SINGA_COMPRESS_POWERSGD)
        return 0;
    rt_psgd_geom g = geom_of(rt, k);
    size_t most = n * sizeof(float) + scale;
    if (g.mode != RT_PSGD_LOWRANK)
        return most;
    size_t factor = (rt_psgd_p_len(&g) > rt_psgd_q_len(&g) ? rt_psgd_p_len(&g) : rt_psgd_q_len(&g)) * sizeof(float);
    return factor + scale > most ? factor + scale : most;
}

/* Whether a server here updates group g's values of slice k in place (server.c's shared). */
static bool server_shares(const rt_ctx *rt, int g, int k)
{
    const singa_cluster *c = rt->c;
    return c->share_memory && c->nworker_groups == 1 &&
           rt_server_proc(rt, singa_cluster_server_group(c, g), rt->slices[k].server) == rt->rank;
}

static int slice_state(rt_ctx *rt, int g, int k, rt_replica_slice *x, singa_err *err)
{
    x->geom = geom_of(rt, k);
    x->applies = !server_shares(rt, g, k);
    x->store = -1;
    if (x->geom.mode == RT_PSGD_LOWRANK) {
        const rt_psgd_geom *ge = &x->geom;
        size_t qlen = rt_psgd_q_len(ge) * sizeof(float);
        if (!(x->q = malloc(qlen)) || !(x->qloc = malloc(qlen)) || !(x->p = malloc(rt_psgd_p_len(ge) * sizeof(float))) ||
            !(x->m = calloc(rt_psgd_m_len(ge), sizeof(float))))
            return singa_err_set(err, "out of memory");
        rt_psgd_init_q(x->q, ge, (unsigned)k);
    }
    if (!x->applies)
        return 0;
    const rt_slice *sl = &rt->slices[k];
    char name[600];
    snprintf(name, sizeof name, "%s@%zu", rt->params[sl->param].name, sl->offset);
    singa_param *p = rt_slice_param(rt, &rt->self_update->groups[g].store, k, name, err);
    if (!p)
        return -1;
    singa_tensor_rebind(&p->data, rt->replica[g][sl->param]->data.data + sl->offset);
    x->store = p->id;
    return 0;
}

/* The replica's updater state from the model resumed, as the servers take theirs
 * (rt_server_load): every slot checked before any is copied. */
static int load_updater(rt_ctx *rt, rt_replica_group *pg, const singa_ckpt_set *set, singa_err *err)
{
    char name[700];
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < rt->nslices; k++) {
            const rt_slice *sl = &rt->slices[k];
            const rt_param *dp = &rt->params[sl->param];
            for (int s = 0; pg->sl[k].applies && s < singa_updater_nslots(pg->upd); s++) {
                singa_tensor *t = singa_updater_slot(pg->upd, pg->sl[k].store, s);
                if (!t)
                    continue;
                snprintf(name, sizeof name, "updater/%s/%s", dp->name, singa_updater_slot_name(pg->upd, s));
                const singa_ckpt_entry *e = singa_ckpt_find(&set->model, name);
                if (!e || e->dtype != SINGA_CKPT_F32 || e->bytes != dp->size * sizeof(float))
                    return singa_err_set(err, "resume: checkpoint '%s': tensor '%s' is %s", set->where, name,
                                         e ? "not of the param's size" : "missing");
                if (pass == 1)
                    memcpy(t->data, (const float *)e->data + sl->offset, sl->len * sizeof(float));
            }
        }
    return 0;
}

/* Q and the residuals of group g from worker (g, id)'s file of the checkpoint resumed, when the
 * topology that wrote it is this one; counts what was taken and what was not. */
static void load_state(rt_ctx *rt, int g, int id, int *loaded, int *dropped)
{
    const singa_ckpt_set *set = rt->resumed;
    bool same = memcmp(set->topology, rt->topology, sizeof rt->topology) == 0;
    const singa_ckpt *state = NULL;
    for (size_t i = 0; i < set->nworkers; i++)
        if (set->workers[i].group == g && set->workers[i].id == id)
            state = &set->workers[i].state;
    for (int k = 0; k < rt->nslices; k++) {
        rt_replica_slice *x = &rt->self_update->groups[g].sl[k];
        if (x->geom.mode != RT_PSGD_LOWRANK)
            continue;
        char name[64];
        snprintf(name, sizeof name, "powersgd/q/%d", k);
        const singa_ckpt_entry *q = state && same ? singa_ckpt_find(state, name) : NULL;
        snprintf(name, sizeof name, "powersgd/residual/%d", k);
        const singa_ckpt_entry *r = state && same ? singa_ckpt_find(state, name) : NULL;
        bool want_r = rt->self_update->feedback;
        if (!q || q->bytes != rt_psgd_q_len(&x->geom) * sizeof(float) ||
            (want_r && (!r || r->bytes != x->geom.n * sizeof(float)))) {
            (*dropped)++;
            continue;
        }
        memcpy(x->q, q->data, q->bytes);
        if (want_r)
            memcpy(x->m + x->geom.pad, r->data, r->bytes);
        (*loaded)++;
    }
}

static int group_setup(rt_ctx *rt, int g, int *loaded, int *dropped, singa_err *err)
{
    rt_replica_group *pg = &rt->self_update->groups[g];
    singa_params_init(&pg->store);
    if (!(pg->sl = calloc((size_t)rt->nslices, sizeof *pg->sl)))
        return singa_err_set(err, "out of memory");
    for (int k = 0; k < rt->nslices; k++)
        if (slice_state(rt, g, k, &pg->sl[k], err) < 0)
            return -1;
    if (singa_updater_create_ex(&pg->upd, singa_conf_get(rt->conf, "updater"), &pg->store,
                                SINGA_UPDATER_SEPARATE_GRAD, err) < 0)
        return -1;
    if (!rt->resumed)
        return 0;
    int id = 0;
    while (!rt_residual_keeper(rt, g, id))
        id++;
    load_state(rt, g, id, loaded, dropped);
    return load_updater(rt, pg, rt->resumed, err);
}

/* Rank 0 names once each 2-D param that goes uncompressed. */
static void log_small(rt_ctx *rt)
{
    for (int k = 0; rt->rank == 0 && k < rt->nparams; k++) {
        const singa_tensor *t = &rt->final_params[k]->data;
        rt_psgd_geom g = rt_psgd_geom_of(t->shape, t->ndim, 0, t->size, rt->self_update->rank);
        if (t->ndim >= 2 && g.mode != RT_PSGD_LOWRANK)
            rt_log(rt, "compress: powersgd = %d is not below the smaller side of param '%s' (%d x %zu): it goes "
                       "uncompressed", rt->self_update->rank, rt->params[k].name, t->shape[0],
                   t->size / (size_t)t->shape[0]);
    }
}

int rt_replica_setup(rt_ctx *rt, singa_err *err)
{
    const singa_compress *c = &rt->c->compress;
    if ((c->kind != SINGA_COMPRESS_POWERSGD && c->values != SINGA_COMPRESS_UPDATE) || rt->nprocs < 2)
        return 0;
    if (rt->cut)
        return singa_err_set(err, "cluster.compress: %s applies the update to whole replicas; this net is cut "
                                  "among its workers (partition_dim), whose bridges carry features: use fp16 or no "
                                  "compression",
                             c->kind == SINGA_COMPRESS_POWERSGD ? "powersgd" : "values = \"update\"");
    if (!(rt->self_update = calloc(1, sizeof *rt->self_update)) ||
        !(rt->self_update->groups = calloc((size_t)rt->c->nworker_groups, sizeof *rt->self_update->groups)))
        return singa_err_set(err, "out of memory");
    rt->self_update->rank = rt->c->powersgd;
    rt->self_update->start = rt->c->powersgd_start;
    rt->self_update->feedback = c->error_feedback;
    size_t most = 1;
    for (int k = 0; k < rt->nslices; k++) {
        rt_psgd_geom g = geom_of(rt, k);
        size_t len = 2 * rt_psgd_q_len(&g) + g.cols;
        most = g.mode == RT_PSGD_LOWRANK && len > most ? len : most;
    }
    if (!(rt->self_update->scratch = malloc(most * sizeof(float))))
        return singa_err_set(err, "out of memory");
    if (c->kind == SINGA_COMPRESS_POWERSGD)
        log_small(rt);
    int loaded = 0, dropped = 0;
    for (int g = 0; g < rt->c->nworker_groups; g++)
        if (rt->replica && rt->replica[g] && group_setup(rt, g, &loaded, &dropped, err) < 0)
            return -1;
    if (dropped)
        rt_log(rt, "compress: powersgd's Q and residuals of %d slice%s not resumed (another topology wrote %s, or it "
                   "lacks them): Q starts from its seed, the residuals from zero", dropped, dropped == 1 ? "" : "s",
               rt->resumed->where);
    else if (loaded)
        rt_log(rt, "compress: powersgd's Q and residuals of %d slice%s resumed", loaded, loaded == 1 ? "" : "s");
    return 0;
}

void rt_replica_free(rt_ctx *rt)
{
    if (!rt->self_update)
        return;
    for (int g = 0; rt->self_update->groups && g < rt->c->nworker_groups; g++) {
        rt_replica_group *pg = &rt->self_update->groups[g];
        for (int k = 0; pg->sl && k < rt->nslices; k++) {
            free(pg->sl[k].q);
            free(pg->sl[k].m);
            free(pg->sl[k].p);
            free(pg->sl[k].qloc);
        }
        if (pg->sl) {
            singa_updater_free(pg->upd);
            singa_params_free(&pg->store);
        }
        free(pg->sl);
    }
    free(rt->self_update->groups);
    free(rt->self_update->scratch);
    free(rt->self_update);
    rt->self_update = NULL;
}

int rt_replica_apply(rt_ctx *rt, int g, int k, int step, float *grad, const rt_psgd_update *f, float scale,
                     float lr_scale, singa_err *err)
{
    rt_replica_group *pg = &rt->self_update->groups[g];
    singa_updater_set_lr_scale(pg->upd, lr_scale);
    if (f)
        return rt_replica_expand_apply(pg->upd, pg->sl[k].store, step, f, scale, grad, err);
    return singa_updater_apply_one(pg->upd, pg->sl[k].store, step, grad, scale, err);
}

/* What rt_psgd_expand_each's rows go to: an updater's param, piece by piece. */
typedef struct span_sink {
    singa_updater *upd;
    int store, step;
    float scale;
    singa_err *err;
} span_sink;

static int to_updater(void *ctx, size_t offset, const float *vals, size_t n)
{
    span_sink *to = ctx;
    return singa_updater_apply_span(to->upd, to->store, to->step, vals, to->scale, offset, n, to->err);
}

int rt_replica_expand_apply(singa_updater *upd, int store, int step, const rt_psgd_update *f, float scale, float *full,
                  singa_err *err)
{
    if (!singa_updater_elementwise(upd)) {
        rt_psgd_expand(f->phat, f->q, full, f->scratch, f->geom);
        return singa_updater_apply_one(upd, store, step, full, scale, err);
    }
    span_sink to = {upd, store, step, scale, err};
    return rt_psgd_expand_each(f->phat, f->q, f->scratch, f->geom, to_updater, &to);
}

/* FNV-1a over the replica's bytes, param by param. */
static unsigned long long digest(const rt_ctx *rt, int g)
{
    unsigned long long h = 0xcbf29ce484222325ull;
    for (int k = 0; k < rt->nparams; k++) {
        const unsigned char *b = (const unsigned char *)rt->replica[g][k]->data.data;
        for (size_t i = 0; i < rt->params[k].size * sizeof(float); i++)
            h = (h ^ b[i]) * 0x100000001b3ull;
    }
    return h;
}

int rt_replica_add(rt_ctx *rt, int group, int id, singa_ckpt *c, singa_err *err)
{
    if (!rt->self_update || !rt_residual_keeper(rt, group, id))
        return 0;
    if (rt->log) { /* a pass over the model: only for a workspace's log */
        char line[128];
        snprintf(line, sizeof line, "compress: step %llu: the replica of group %d here has digest %016llx",
                 (unsigned long long)c->step, group, digest(rt, group));
        rt_log_line(rt, line, false, false);
    }
    float *scratch = NULL;
    for (int k = 0; k < rt->nslices; k++) {
        rt_replica_slice *x = &rt->self_update->groups[group].sl[k];
        if (x->geom.mode != RT_PSGD_LOWRANK)
            continue;
        if (x->owes) { /* the stub is between this group's steps; its scratch may serve another's */
            float *more = realloc(scratch, (rt_psgd_q_len(&x->geom) + x->geom.cols) * sizeof(float));
            if (!more) {
                free(scratch);
                return singa_err_set(err, "out of memory");
            }
            scratch = more;
            rt_psgd_feedback(x->m, x->p, x->qloc, scratch, &x->geom);
            x->owes = false;
        }
        char name[64];
        int qlen = (int)rt_psgd_q_len(&x->geom), n = (int)x->geom.n;
        snprintf(name, sizeof name, "powersgd/q/%d", k);
        int rc = singa_ckpt_add(c, name, SINGA_CKPT_F32, 1, &qlen, x->q, err);
        snprintf(name, sizeof name, "powersgd/residual/%d", k);
        if (rc == 0 && rt->self_update->feedback)
            rc = singa_ckpt_add(c, name, SINGA_CKPT_F32, 1, &n, x->m + x->geom.pad, err);
        if (rc < 0) {
            free(scratch);
            return -1;
        }
    }
    free(scratch);
    return 0;
}

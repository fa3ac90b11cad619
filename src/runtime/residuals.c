/* Error feedback's residuals (cluster.compress): what top-k did not send yet, kept per worker
 * group and slice by the group's first worker in this process, which writes them to its
 * checkpoint file ("residual/<slice>") and takes them back at resume when the topology is the
 * same. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

bool rt_residual_keeper(const rt_ctx *rt, int g, int id)
{
    return rt_worker_proc(rt, g, id) == rt->rank && (id == 0 || rt_worker_proc(rt, g, id - 1) != rt->rank);
}

static void residual_name(char *buf, size_t len, int slice)
{
    snprintf(buf, len, "residual/%d", slice);
}

int rt_residuals_setup(rt_ctx *rt, singa_err *err)
{
    const singa_cluster *c = rt->c;
    if (!c->compress.error_feedback || c->compress.kind != SINGA_COMPRESS_TOPK) /* powersgd's: replica_update.c */
        return 0;
    const singa_ckpt_set *set = rt->resumed;
    /* values = "update": every slice goes as top-k, to a server here too (replica_update.h) */
    bool every = c->compress.values == SINGA_COMPRESS_UPDATE && rt->nprocs > 1;
    bool same = set && memcmp(set->topology, rt->topology, sizeof rt->topology) == 0;
    int loaded = 0, dropped = 0;
    if (!(rt->residual = calloc((size_t)c->nworker_groups, sizeof *rt->residual)))
        return singa_err_set(err, "out of memory");
    for (int g = 0; g < c->nworker_groups; g++) {
        int id = 0;
        while (id < c->nworkers_per_group && !rt_residual_keeper(rt, g, id))
            id++;
        if (id == c->nworkers_per_group)
            continue;
        if (!(rt->residual[g] = calloc((size_t)rt->nslices, sizeof *rt->residual[g])))
            return singa_err_set(err, "out of memory");
        const singa_ckpt *state = NULL;
        for (size_t i = 0; set && i < set->nworkers; i++)
            if (set->workers[i].group == g && set->workers[i].id == id)
                state = &set->workers[i].state;
        for (int k = 0; k < rt->nslices; k++) {
            const rt_slice *sl = &rt->slices[k];
            if (rt_server_proc(rt, singa_cluster_server_group(c, g), sl->server) == rt->rank && !every)
                continue;
            if (!(rt->residual[g][k] = calloc(sl->len, sizeof(float))))
                return singa_err_set(err, "out of memory");
            char name[32];
            residual_name(name, sizeof name, k);
            const singa_ckpt_entry *e = state ? singa_ckpt_find(state, name) : NULL;
            if (e && same && e->bytes == sl->len * sizeof(float)) {
                memcpy(rt->residual[g][k], e->data, e->bytes);
                loaded++;
            } else if (set) {
                dropped++;
            }
        }
    }
    if (dropped)
        rt_log(rt, "compress: %d error-feedback residual%s of %s not resumed (%s): they start from zero", dropped,
               dropped == 1 ? "" : "s", set->where, same ? "missing" : "another topology wrote it");
    else if (loaded)
        rt_log(rt, "compress: %d error-feedback residual%s resumed", loaded, loaded == 1 ? "" : "s");
    return 0;
}

void rt_residuals_free(rt_ctx *rt)
{
    for (int g = 0; rt->residual && g < rt->c->nworker_groups; g++) {
        for (int k = 0; rt->residual[g] && k < rt->nslices; k++)
            free(rt->residual[g][k]);
        free(rt->residual[g]);
    }
    free(rt->residual);
    rt->residual = NULL;
}

int rt_residuals_add(const rt_ctx *rt, int group, int id, singa_ckpt *c, singa_err *err)
{
    if (!rt->residual || !rt->residual[group] || !rt_residual_keeper(rt, group, id))
        return 0;
    for (int k = 0; k < rt->nslices; k++) {
        char name[32];
        int len = (int)rt->slices[k].len;
        residual_name(name, sizeof name, k);
        if (rt->residual[group][k] && singa_ckpt_add(c, name, SINGA_CKPT_F32, 1, &len, rt->residual[group][k], err) < 0)
            return -1;
    }
    return 0;
}

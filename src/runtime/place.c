#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/bridge.h"
#include "runtime/place.h"

struct rt_place {
    int ngroups, nparams, nprocs, nservers;
    size_t (*span)[2]; /* [group][param][process]: the elements that process computes (empty: none) */
    int *order;        /* rt_place_ranges' processes computing a part of a param */
    const char *why;   /* why the slices cannot follow the parts of a net cut across processes */
    bool cut;          /* the only worker group's net is cut across processes, and may be followed */
    int placed;        /* params whose slices follow the parts */
};

static size_t *span_at(const rt_place *pl, int g, int k, int q)
{
    return pl->span[((size_t)g * (size_t)pl->nparams + (size_t)k) * (size_t)pl->nprocs + (size_t)q];
}

/* Whether every process computing a part of group 0 holds a server of it. */
static bool servers_everywhere(const rt_ctx *rt)
{
    for (int j = 0; j < rt->c->nworkers_per_group; j++) {
        bool found = false;
        for (int s = 0; s < rt->c->nservers_per_group && !found; s++)
            found = rt_server_proc(rt, 0, s) == rt_worker_proc(rt, 0, j);
        if (!found)
            return false;
    }
    return true;
}

int rt_place_new(rt_place **out, const rt_ctx *rt, singa_job *job, singa_err *err)
{
    const singa_cluster *c = rt->c;
    rt_place *pl = calloc(1, sizeof *pl);
    int *owner = malloc((size_t)c->nworkers_per_group * sizeof *owner);
    if (pl)
        *pl = (rt_place){.ngroups = c->nworker_groups, .nparams = rt->nparams, .nprocs = rt->nprocs,
                         .nservers = c->nservers_per_group};
    if (!pl || !owner || !(pl->order = malloc((size_t)pl->nprocs * sizeof *pl->order)) ||
        !(pl->span = calloc((size_t)pl->ngroups * (size_t)pl->nparams * (size_t)pl->nprocs, sizeof *pl->span))) {
        free(owner);
        rt_place_free(pl);
        return singa_err_set(err, "out of memory");
    }
    const singa_parts *parts = rt->cut ? singa_job_train_net(job)->parts : NULL;
    for (int g = 0; g < pl->ngroups; g++) {
        for (int j = 0; j < c->nworkers_per_group; j++)
            owner[j] = rt_worker_proc(rt, g, j);
        for (int k = 0; k < pl->nparams; k++)
            for (int j = 0; j < c->nworkers_per_group; j++) {
                size_t *s = span_at(pl, g, k, owner[j]);
                if (j > 0 && owner[j - 1] == owner[j])
                    continue;
                s[0] = 0;
                s[1] = rt->params[k].size;
                if (parts)
                    singa_parts_span_of(parts, rt->final_params[k], owner, owner[j], &s[0], &s[1]);
            }
    }
    free(owner);
    if (rt->cut && rt_senders(rt, 0) > 1) {
        pl->why = c->nworker_groups > 1   ? "several worker groups share the servers"
                  : c->nserver_groups > 1 ? "several server groups"
                  : !servers_everywhere(rt) ? "a process computing a part holds no server"
                                            : NULL;
        pl->cut = !pl->why;
    }
    *out = pl;
    return 0;
}

void rt_place_free(rt_place *pl)
{
    if (!pl)
        return;
    free(pl->span);
    free(pl->order);
    free(pl);
}

bool rt_place_ranges(rt_place *pl, const rt_ctx *rt, int k, size_t (*ranges)[2])
{
    if (!pl->cut)
        return false;
    int *order = pl->order, n = 0; /* the processes computing a part of param k, by its first element */
    for (int q = 0; q < pl->nprocs; q++) {
        const size_t *s = span_at(pl, 0, k, q);
        if (s[0] >= s[1])
            continue;
        int at = n++;
        while (at > 0 && span_at(pl, 0, k, order[at - 1])[0] > s[0]) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = q;
    }
    for (int i = 1; i < n; i++)
        if (span_at(pl, 0, k, order[i - 1])[1] > span_at(pl, 0, k, order[i])[0])
            return false; /* computed whole (or overlapping) in more than one process */
    for (int j = 0; j < pl->nservers; j++)
        ranges[j][0] = ranges[j][1] = 0;
    for (int i = 0; i < n; i++) {
        /* Each element once: a part reaches up to the next's first element (gaps are nobody's). */
        size_t a = i == 0 ? 0 : span_at(pl, 0, k, order[i])[0];
        size_t b = i == n - 1 ? rt->params[k].size : span_at(pl, 0, k, order[i + 1])[0];
        int m = 0, here = 0;
        for (int j = 0; j < pl->nservers; j++)
            m += rt_server_proc(rt, 0, j) == order[i];
        for (int j = 0; j < pl->nservers; j++)
            if (rt_server_proc(rt, 0, j) == order[i]) {
                ranges[j][0] = a + (b - a) * (size_t)here / (size_t)m;
                ranges[j][1] = a + (b - a) * (size_t)(here + 1) / (size_t)m;
                here++;
            }
    }
    pl->placed++;
    return true;
}

void rt_place_log(const rt_place *pl, rt_ctx *rt)
{
    if (rt->rank != 0 || rt->nprocs < 2)
        return;
    double bytes = 0; /* a step of every worker group: gradients to servers elsewhere, values back */
    for (int g = 0; g < pl->ngroups; g++) {
        int sg = singa_cluster_server_group(rt->c, g);
        for (int i = 0; i < rt->nslices; i++) {
            const rt_slice *sl = &rt->slices[i];
            int at = rt_server_proc(rt, sg, sl->server);
            for (int q = 0; q < pl->nprocs; q++) {
                const size_t *s = span_at(pl, g, sl->param, q);
                size_t a = s[0] > sl->offset ? s[0] : sl->offset;
                size_t b = s[1] < sl->offset + sl->len ? s[1] : sl->offset + sl->len;
                if (q != at && a < b)
                    bytes += 2.0 * (double)(b - a) * sizeof(float);
            }
        }
    }
    char moved[96];
    snprintf(moved, sizeof moved, "%.2f MB of gradients and values cross between processes to the servers a step%s",
             bytes / 1e6, pl->ngroups > 1 ? " of every worker group" : "");
    if (pl->cut && pl->placed == pl->nparams)
        rt_log(rt, "placement: each process's part of every param lies with a server in that process: %s", moved);
    else if (pl->cut)
        rt_log(rt, "placement: the parts of %d of %d params lie with a server in the process computing them (the "
                   "others are computed whole in several processes): %s",
               pl->placed, pl->nparams, moved);
    else if (pl->why)
        rt_log(rt, "placement: the servers cannot lie with the parts of the cut net (%s): %s", pl->why, moved);
    else
        rt_log(rt, "placement: %s", moved);
}

/* What a job makes of a checkpoint set of another topology: a worker's view of it (its state, or
 * another's it re-derives), a slice's version, the lines a resharded or lacking set logs, and a
 * set gathered into one plain file (see include/singa/ckpt_set.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "singa/ckpt_set.h"

/* Whether the set holds a state of worker group g (its worker 0's, or, once the group went on
 * without it, cluster.replicas, another's). */
static bool has_group(const singa_ckpt_set *s, int64_t g)
{
    for (size_t i = 0; i < s->nworkers; i++)
        if (s->workers[i].group == g)
            return true;
    return false;
}

/* The state worker (group, id) takes, and the flags saying whose it is: a group the checkpoint
 * lacks (beyond its groups, or lost when it was written) takes that of the k-th group it holds,
 * k = group mod how many it holds. */
static const singa_ckpt_set_worker *state_of(const singa_ckpt_set *s, int group, int id, int *flags)
{
    int64_t ngroups = singa_ckpt_set_dist(s) ? s->topology[1] : 1, held = 0;
    *flags = 0;
    if (group >= ngroups || !has_group(s, group)) {
        for (int64_t g = 0; g < ngroups; g++)
            held += has_group(s, g);
        for (int64_t g = 0, k = held ? group % held : 0; held && g < ngroups; g++)
            if (has_group(s, g) && k-- == 0) {
                group = (int)g;
                break;
            }
        *flags |= SINGA_CKPT_SET_OTHER_GROUP;
    }
    const singa_ckpt_set_worker *lead = NULL;
    for (size_t i = 0; i < s->nworkers; i++) {
        const singa_ckpt_set_worker *w = &s->workers[i];
        if (w->group == group && w->id == id)
            return w;
        if (w->group == group && (!lead || w->id < lead->id)) /* its lowest there: 0 but after a loss */
            lead = w;
    }
    *flags |= SINGA_CKPT_SET_OTHER_WORKER;
    return lead;
}

static int view_add(singa_ckpt *v, const singa_ckpt_entry *e, singa_err *err)
{
    int dims[4];
    for (int d = 0; d < e->ndim; d++)
        dims[d] = (int)e->dims[d];
    return singa_ckpt_add(v, e->name, e->dtype, e->ndim, dims, e->data, err);
}

int singa_ckpt_set_view(const singa_ckpt_set *s, int group, int id, bool model, singa_ckpt *view, singa_err *err)
{
    int flags;
    const singa_ckpt_set_worker *w = state_of(s, group, id, &flags);
    singa_ckpt_init(view, s->step);
    if (!w) {
        singa_ckpt_free(view, 0);
        return singa_err_set(err, "checkpoint '%s' holds no state of worker %d.0", s->where, group);
    }
    for (size_t i = 0; model && i < s->model.n; i++)
        if (!singa_ckpt_find(&w->state, s->model.entries[i].name) && view_add(view, &s->model.entries[i], err) < 0)
            goto fail;
    for (size_t i = 0; i < w->state.n; i++)
        if (view_add(view, &w->state.entries[i], err) < 0)
            goto fail;
    return flags;
fail:
    singa_ckpt_free(view, 0);
    return -1;
}

int64_t singa_ckpt_set_version(const singa_ckpt_set *s, const char *param, uint64_t offset)
{
    for (size_t i = 0; i < s->nslices; i++) {
        const singa_ckpt_set_slice *x = &s->slices[i];
        if (strcmp(x->param, param) == 0 && offset >= x->offset && offset < x->offset + x->len)
            return x->version;
    }
    return (int64_t)s->step;
}

int singa_ckpt_set_gather(const singa_ckpt_set *s, const char *out, singa_err *err)
{
    singa_ckpt v;
    if (singa_ckpt_set_view(s, 0, 0, true, &v, err) < 0)
        return -1;
    int rc = singa_ckpt_write(&v, out, err);
    singa_ckpt_free(&v, 0);
    return rc;
}

bool singa_ckpt_set_lacks(const singa_ckpt_set *s, char *buf, size_t len)
{
    char workers[200] = "", servers[200] = "";
    int64_t nw = 0, ns = 0, first = -1;
    for (int64_t g = 0; singa_ckpt_set_dist(s) && g < s->topology[1]; g++)
        if (!has_group(s, g)) {
            singa_appendf(workers, sizeof workers, "%s%lld", nw++ ? ", " : "", (long long)g);
            first = first < 0 ? g : first;
        }
    for (int64_t g = 1; s->lost && g < s->topology[3]; g++) {
        bool has = false;
        for (size_t i = 0; i < s->nfiles; i++)
            has |= s->files[i].kind == SINGA_CKPT_SERVER && s->files[i].group == g;
        if (!has && s->lost[s->topology[1] + g])
            singa_appendf(servers, sizeof servers, "%s%lld", ns++ ? ", " : "", (long long)g);
    }
    if (!nw && !ns)
        return false;
    int dummy;
    const singa_ckpt_set_worker *w = nw ? state_of(s, (int)first, 0, &dummy) : NULL;
    snprintf(buf, len, "checkpoint %s (step %llu) lacks ", s->where, (unsigned long long)s->step);
    if (nw)
        singa_appendf(buf, len, "the state of worker group%s %s (lost when it was written): the params are whole; "
                      "group %lld takes group %d's data cursors, random generators and display window%s",
                      nw == 1 ? "" : "s", workers, (long long)first, w ? w->group : 0, nw > 1 ? ", and so on" : "");
    if (ns)
        singa_appendf(buf, len, "%sthe shards of server group%s %s (lost when it was written): server group 0's hold "
                      "every param", nw ? "; and " : "", ns == 1 ? "" : "s", servers);
    return true;
}

/* Worker groups and workers per group of a topology (a plain one: 1 and 1). */
static void counts(const int64_t *t, int64_t *groups, int64_t *workers)
{
    *groups = t[0] ? t[1] : 1;
    *workers = t[0] ? t[2] : 1;
}

bool singa_ckpt_set_resharded(const singa_ckpt_set *s, const int64_t *job, char *buf, size_t len)
{
    if (memcmp(s->topology, job, sizeof s->topology) == 0)
        return false;
    char from[200], to[200], what[400] = "";
    int64_t g0, w0, g1, w1;
    counts(s->topology, &g0, &w0);
    counts(job, &g1, &w1);
    singa_ckpt_topology_describe(s->topology, from, sizeof from);
    singa_ckpt_topology_describe(job, to, sizeof to);
    if (g0 != g1)
        singa_appendf(what, sizeof what, "the data cursors and display windows (the checkpoint has %lld worker group%s, "
                      "this job %lld: group g takes group g mod %lld's)", (long long)g0, g0 == 1 ? "" : "s",
                      (long long)g1, (long long)g0);
    if (w0 != w1)
        singa_appendf(what, sizeof what, "%sthe random generators (the checkpoint has %lld worker%s per group, this "
                      "job %lld: a worker without a state of its own takes its group's worker 0's)", what[0] ? "; " : "",
                      (long long)w0, w0 == 1 ? "" : "s", (long long)w1);
    snprintf(buf, len, "resume: resharded %s, written by %s, for %s: params and updater state are exact; re-derived: %s",
             s->where, from, to, what[0] ? what : "nothing");
    return true;
}

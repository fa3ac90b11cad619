/* A distributed job's checkpoint files, runtime side: what every file of a step records (the
 * job's topology, how many files the step has, the groups lost), which files a step of this job
 * has, and which go: the oldest beyond checkpoint_keep, an earlier run's once this run has a
 * whole checkpoint (overwrite), the refused steps newer than the one resumed from. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "ckpt/part.h"

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const unsigned char *)p)[i]) * 0x100000001b3ull;
    return h;
}

void rt_ckpt_topology(rt_ctx *rt, size_t total)
{
    const singa_cluster *c = rt->c;
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < rt->nparams; i++) {
        uint64_t size = rt->params[i].size;
        h = fnv(fnv(h, rt->params[i].name, strlen(rt->params[i].name) + 1), &size, sizeof size);
    }
    for (int k = 0; k < rt->nslices; k++) {
        const rt_slice *d = &rt->slices[k];
        uint64_t v[4] = {(uint64_t)d->param, d->offset, d->len, (uint64_t)d->server};
        h = fnv(h, v, sizeof v);
    }
    int64_t t[RT_TOPOLOGY_LEN] = {1, c->nworker_groups, c->nworkers_per_group, c->nserver_groups,
                                     c->nservers_per_group, rt->nslices, (int64_t)total, (int64_t)h};
    memcpy(rt->topology, t, sizeof t);
}

/* Whether a file belongs to this job's topology, and how many files a checkpoint of it has. */
static bool is_part(const rt_ctx *rt, const singa_ckpt_file *f)
{
    const singa_cluster *c = rt->c;
    if (f->kind == SINGA_CKPT_SERVER)
        return f->group < c->nserver_groups && f->id < c->nservers_per_group;
    return f->kind == SINGA_CKPT_WORKER && f->group < c->nworker_groups && f->id < c->nworkers_per_group &&
           rt_sends(rt, f->group, f->id);
}

/* Whether worker group g (kind SINGA_CKPT_WORKER) or server group g is lost now: a process of
 * it is.  Server group 0's shards are the model: a checkpoint never goes without them. */
static bool group_lost(const rt_ctx *rt, int kind, int g)
{
    const singa_cluster *c = rt->c;
    int per = kind == SINGA_CKPT_WORKER ? c->nworkers_per_group : c->nservers_per_group;
    for (int j = 0; j < per && (kind == SINGA_CKPT_WORKER || g > 0); j++) {
        bool worker = kind == SINGA_CKPT_WORKER;
        int q = worker ? rt_worker_proc(rt, g, j) : rt_server_proc(rt, g, j);
        if ((!worker || rt_sends(rt, g, j)) && singa_stats_rank_lost(rt->stats, q) && !rt_shrunk(rt, q))
            return true; /* a group that shrank goes on without q (membership.c) */
    }
    return false;
}

/* The workers of group g that write files: its senders, but those a shrunk group went on without. */
static int writers(const rt_ctx *rt, int g)
{
    int n = 0;
    for (int j = 0; j < rt->c->nworkers_per_group; j++)
        n += rt_sends(rt, g, j) && !rt_shrunk(rt, rt_worker_proc(rt, g, j));
    return n;
}

/* The files a checkpoint written now has: those of the groups not lost. */
static int nparts(const rt_ctx *rt)
{
    const singa_cluster *c = rt->c;
    int n = 0;
    for (int g = 0; g < c->nserver_groups; g++)
        n += group_lost(rt, SINGA_CKPT_SERVER, g) ? 0 : c->nservers_per_group;
    for (int g = 0; g < c->nworker_groups; g++)
        n += group_lost(rt, SINGA_CKPT_WORKER, g) ? 0 : writers(rt, g);
    return n;
}

int rt_ckpt_lacks(const rt_ctx *rt, char *buf, size_t len)
{
    int n = 0, ns = 0;
    buf[0] = 0;
    for (int g = 0; g < rt->c->nworker_groups; g++)
        if (group_lost(rt, SINGA_CKPT_WORKER, g))
            singa_appendf(buf, len, "%s worker group %d (rank %d)", n++ ? "," : "the state of lost", g,
                          rt_worker_proc(rt, g, 0));
    for (int g = 1; g < rt->c->nserver_groups; g++)
        if (group_lost(rt, SINGA_CKPT_SERVER, g))
            singa_appendf(buf, len, "%s server group %d (rank %d)", ns++ ? "," : n ? " and the shards of lost" :
                          "the shards of lost", g, rt_server_proc(rt, g, 0));
    if (ns)
        singa_appendf(buf, len, ", copies of server group 0's");
    return n + ns;
}

/* "lost": per worker group, then per server group, 1 where the group is lost now, so a reader
 * knows the step lacks its files on purpose (ckpt/set.c); written when one is. */
static bool fill_lost(const rt_ctx *rt, int64_t *lost)
{
    int nw = rt->c->nworker_groups, any = 0;
    for (int g = 0; g < nw + rt->c->nserver_groups; g++)
        any |= (int)(lost[g] = group_lost(rt, g < nw ? SINGA_CKPT_WORKER : SINGA_CKPT_SERVER, g < nw ? g : g - nw));
    return any;
}

int rt_ckpt_write(rt_ctx *rt, singa_ckpt *c, int kind, int group, int id, singa_err *err)
{
    char path[4096];
    int ngroups = rt->c->nworker_groups + rt->c->nserver_groups;
    int64_t *lost = calloc((size_t)ngroups, sizeof *lost);
    if (!lost)
        return singa_err_set(err, "out of memory");
    singa_ckpt_part part = {kind, group, id, rt->topology, nparts(rt), fill_lost(rt, lost) ? lost : NULL, ngroups};
    int rc = singa_ckpt_save(c, rt->ckpt_dir, &part, path, sizeof path, err);
    free(lost);
    return rc;
}

/* Removes every file of the steps in files[0, n), or (aside[i]) renames it "<name>.refused": a
 * file that did not verify is kept for a look, under a name no checkpoint has. */
void rt_ckpt_remove_steps(rt_ctx *rt, const singa_ckpt_file *files, size_t n, const bool *aside)
{
    for (size_t i = 0; i < n; i++) {
        char path[4096], to[4200];
        singa_ckpt_part_path(path, sizeof path, rt->ckpt_dir, files[i].step, files[i].kind, files[i].group, files[i].id);
        snprintf(to, sizeof to, "%s.refused", path);
        if (!aside)
            unlink(path);
        else if (!aside[i] && unlink(path) == 0)
            rt_log(rt, "removed %s (of an incomplete checkpoint newer than the one resumed from)", path);
        else if (aside[i] && rename(path, to) == 0)
            rt_log(rt, "renamed %s to %s (of a checkpoint that did not verify, newer than the one resumed from)",
                     path, to);
    }
}

/* How many checkpoints (steps) the files, newest first, are of. */
size_t rt_ckpt_count_steps(const singa_ckpt_file *files, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += i == 0 || files[i].step != files[i - 1].step;
    return k;
}

/* overwrite = true, rank 0: keeps the earlier run's files (taking `files`) to remove them once
 * this run has written a whole checkpoint. */
int rt_ckpt_note_stale(rt_ctx *rt, singa_ckpt_file *files, size_t n, singa_err *err)
{
    if (!(rt->stale_ino = calloc(n, sizeof *rt->stale_ino))) {
        free(files);
        return singa_err_set(err, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        struct stat st;
        singa_ckpt_part_path(path, sizeof path, rt->ckpt_dir, files[i].step, files[i].kind, files[i].group, files[i].id);
        rt->stale_ino[i] = stat(path, &st) == 0 ? st.st_ino : 0;
    }
    rt->stale = files;
    rt->nstale = n;
    size_t k = rt_ckpt_count_steps(files, n);
    rt_log(rt, "checkpoint_path '%s' holds %zu checkpoint%s of an earlier run (newest: step %llu); this run replaces "
           "%s once it has written its first whole checkpoint (overwrite)", rt->ckpt_dir, k, k == 1 ? "" : "s",
           (unsigned long long)files[0].step, k == 1 ? "it" : "them");
    return 0;
}

/* Whether f is a file of the earlier run (overwrite): the very file, not one this run wrote. */
static bool is_stale(const rt_ctx *rt, const singa_ckpt_file *f)
{
    char path[4096];
    struct stat st;
    singa_ckpt_part_path(path, sizeof path, rt->ckpt_dir, f->step, f->kind, f->group, f->id);
    for (size_t i = 0; i < rt->nstale; i++) {
        const singa_ckpt_file *s = &rt->stale[i];
        if (s->step == f->step && s->kind == f->kind && s->group == f->group && s->id == f->id)
            return stat(path, &st) == 0 && st.st_ino == rt->stale_ino[i];
    }
    return false;
}

/* Once this run has a whole checkpoint of its own, the earlier run's files go; true if they did. */
static bool drop_stale(rt_ctx *rt, const singa_ckpt_file *files, size_t n)
{
    bool whole = false;
    for (size_t i = 0, j; i < n && !whole; i = j) {
        int parts = 0;
        for (j = i; j < n && files[j].step == files[i].step; j++)
            parts += is_part(rt, &files[j]) && !is_stale(rt, &files[j]);
        whole = parts == nparts(rt);
    }
    if (!whole)
        return false;
    for (size_t i = 0; i < n; i++)
        if (is_stale(rt, &files[i])) {
            char path[4096];
            singa_ckpt_part_path(path, sizeof path, rt->ckpt_dir, files[i].step, files[i].kind, files[i].group,
                                 files[i].id);
            if (unlink(path) == 0)
                rt_log(rt, "removed %s (an earlier run's)", path);
        }
    free(rt->stale);
    free(rt->stale_ino);
    rt->stale = NULL;
    rt->stale_ino = NULL;
    rt->nstale = 0;
    return true;
}

void rt_ckpt_prune(rt_ctx *rt)
{
    singa_ckpt_file *files;
    size_t n;
    singa_err err;
    if (singa_ckpt_dir_files(rt->ckpt_dir, &files, &n, &err) < 0) {
        rt_log(rt, "checkpoints not pruned: %s", err.msg);
        return;
    }
    if (rt->nstale && drop_stale(rt, files, n)) {
        free(files);
        if (singa_ckpt_dir_files(rt->ckpt_dir, &files, &n, &err) < 0) {
            rt_log(rt, "checkpoints not pruned: %s", err.msg);
            return;
        }
    }
    int complete = 0, keep = rt->ckpt_keep;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        int parts = 0;
        for (; j < n && files[j].step == files[i].step; j++)
            parts += is_part(rt, &files[j]);
        if (complete >= keep)
            rt_ckpt_remove_steps(rt, files + i, j - i, NULL);
        else if (parts >= nparts(rt)) /* a step written before a group was lost has its files too */
            complete++;
        i = j;
    }
    free(files);
}


void rt_hook_checkpoint(void *ud, int step, const char *path)
{
    rt_worker *w = ud;
    if (w->group != 0 || !rt_leads(w->rt, 0, w->id) || w->rt->rank != rt_coordinator(w->rt) || !w->rt->hooks->checkpoint)
        return;
    pthread_mutex_lock(&w->rt->lock);
    w->rt->hooks->checkpoint(w->rt->hooks->ud, step, path);
    pthread_mutex_unlock(&w->rt->lock);
}


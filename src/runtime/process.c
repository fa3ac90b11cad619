/* This process's part of a distributed job: it slices the params over the servers, makes a job
 * per local worker (each reading its part of the data), lets the workers of a group share one
 * copy of the values, and runs the stub, the servers and the workers as threads until every
 * worker is done or one thread fails.
 *
 * Memory is shared where SINGA shares it: workers of a group in one process train on one copy of
 * the values (they are synchronous, so nobody reads while a server writes), and a server whose
 * group serves exactly one worker group here updates that copy in place, so its messages carry
 * no values.  Everything else travels as copies. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "runtime/runtime.h"
#include "layers/param_state.h"
#include "runtime/bridge.h"
#include "runtime/place.h"
#include "train/ckpt_load.h"
#include "singa/net.h"
#include "singa/plugin.h"
#include "singa/tensor.h"

/* The worker of group g that checkpoints the process's residuals: its first here. */
static bool keeps_residuals(const rt_ctx *rt, int g, int id)
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
    if (!c->compress.error_feedback)
        return 0;
    const singa_ckpt_set *set = rt->resumed;
    bool same = set && memcmp(set->topology, rt->topology, sizeof rt->topology) == 0;
    int loaded = 0, dropped = 0;
    if (!(rt->residual = calloc((size_t)c->nworker_groups, sizeof *rt->residual)))
        return singa_err_set(err, "out of memory");
    for (int g = 0; g < c->nworker_groups; g++) {
        int id = 0;
        while (id < c->nworkers_per_group && !keeps_residuals(rt, g, id))
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
            if (rt_server_proc(rt, singa_cluster_server_group(c, g), sl->server) == rt->rank)
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
    if (!rt->residual || !rt->residual[group] || !keeps_residuals(rt, group, id))
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

/* ---- checkpoints: what their files record, resume, pruning ---- */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const unsigned char *)p)[i]) * 0x100000001b3ull;
    return h;
}

static void make_topology(rt_ctx *rt, size_t total)
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
        if ((!worker || rt_sends(rt, g, j)) &&
            singa_stats_rank_lost(rt->stats, worker ? rt_worker_proc(rt, g, j) : rt_server_proc(rt, g, j)))
            return true;
    }
    return false;
}

/* The files a checkpoint written now has: those of the groups not lost. */
static int nparts(const rt_ctx *rt)
{
    const singa_cluster *c = rt->c;
    int n = 0;
    for (int g = 0; g < c->nserver_groups; g++)
        n += group_lost(rt, SINGA_CKPT_SERVER, g) ? 0 : c->nservers_per_group;
    for (int g = 0; g < c->nworker_groups; g++)
        n += group_lost(rt, SINGA_CKPT_WORKER, g) ? 0 : rt_senders(rt, g);
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
 * knows the step lacks its files on purpose (ckpt_set.c); written when one is. */
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
    int64_t ident[2] = {group, id}, files = nparts(rt);
    int len = RT_TOPOLOGY_LEN, two = 2, one = 1, ngroups = rt->c->nworker_groups + rt->c->nserver_groups;
    int64_t *lost = calloc((size_t)ngroups, sizeof *lost);
    int rc = lost ? 0 : singa_err_set(err, "out of memory");
    if (rc == 0 && (singa_ckpt_add(c, "topology", SINGA_CKPT_I64, 1, &len, rt->topology, err) < 0 ||
                    singa_ckpt_add(c, "files", SINGA_CKPT_I64, 1, &one, &files, err) < 0 ||
                    (fill_lost(rt, lost) && singa_ckpt_add(c, "lost", SINGA_CKPT_I64, 1, &ngroups, lost, err) < 0) ||
                    singa_ckpt_add(c, kind == SINGA_CKPT_SERVER ? "shard" : "worker", SINGA_CKPT_I64, 1, &two, ident,
                                   err) < 0))
        rc = -1;
    singa_ckpt_part_path(path, sizeof path, rt->ckpt_dir, c->step, kind, group, id);
    if (rc == 0)
        rc = singa_ckpt_write(c, path, err);
    free(lost);
    return rc;
}

static void drop_resumed(rt_ctx *rt)
{
    if (rt->resumed)
        singa_ckpt_set_free(rt->resumed);
    free(rt->resumed);
    rt->resumed = NULL;
}

/* Removes every file of the steps in files[0, n), or (aside[i]) renames it "<name>.refused": a
 * file that did not verify is kept for a look, under a name no checkpoint has. */
static void remove_steps(rt_ctx *rt, const singa_ckpt_file *files, size_t n, const bool *aside)
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

/* What resume's search carries: the job, and the steps refused (newest first), which rank 0
 * removes or puts aside once one is taken. */
typedef struct resume_ctx {
    rt_ctx *rt;
    singa_job *job;
    uint64_t *steps;
    bool *incomplete;
    size_t n;
} resume_ctx;

static void resume_refused(void *ud, uint64_t step, bool incomplete, const char *reason)
{
    resume_ctx *c = ud;
    rt_log(c->rt, "refused %s", reason);
    uint64_t *s = realloc(c->steps, (c->n + 1) * sizeof *s);
    bool *in = s ? realloc(c->incomplete, (c->n + 1) * sizeof *in) : NULL;
    if (s)
        c->steps = s;
    if (!in)
        return; /* those files stay: nothing lost */
    c->incomplete = in;
    c->steps[c->n] = step;
    c->incomplete[c->n++] = incomplete;
}

/* A checkpoint of any topology fits when it holds every param the servers update with the job's
 * shape (an older one records none: then its number of values), and no param the job lacks. */
static int resume_accept(void *ud, const singa_ckpt_set *s, singa_err *err)
{
    const resume_ctx *c = ud;
    const rt_ctx *rt = c->rt;
    char name[600], a[64], b[64];
    for (int k = 0; k < rt->nparams; k++) {
        const singa_param *p = rt->final_params[k];
        snprintf(name, sizeof name, "param/%s", p->name);
        const singa_ckpt_entry *e = singa_ckpt_find(&s->model, name);
        if (!e)
            return singa_err_set(err, "checkpoint '%s': param '%s' (layer '%s') is not in it (it belongs to another net)",
                                 s->where, p->name, p->layer);
        if (!singa_ckpt_entry_fits(e, SINGA_CKPT_F32, p->data.ndim, p->data.shape) &&
            !(e->dtype == SINGA_CKPT_F32 && e->ndim == 1 && e->dims[0] == p->data.size)) {
            singa_ckpt_entry_shape(e, a, sizeof a);
            return singa_err_set(err, "checkpoint '%s': param '%s' has shape %s there but %s in this job (layer '%s')",
                                 s->where, p->name, e->dtype == SINGA_CKPT_F32 ? a : "(not float32)",
                                 singa_tensor_shape_str(&p->data, b, sizeof b), p->layer);
        }
    }
    for (size_t i = 0; i < s->model.n; i++) {
        const char *n = s->model.entries[i].name;
        if (strncmp(n, "param/", 6) == 0 && !singa_params_find(singa_job_params(c->job), n + 6))
            return singa_err_set(err, "checkpoint '%s': param '%s' is not in this job (it belongs to another net)",
                                 s->where, n + 6);
    }
    return 0;
}

/* A process started again to rejoin an asynchronous job (SINGA_REJOIN) must be one the job goes
 * on without: neither rank 0 (launch.c) nor one whose loss ends the job.  Servers it holds serve
 * its own groups alone (Hogwild): they fetch the newest values before its workers start (server.c). */
static int rejoin_check(rt_ctx *rt, singa_err *err)
{
    char role[160];
    if (!rt->launch.rejoin)
        return 0;
    rt_role(rt, rt->rank, role, sizeof role);
    if (rt->c->nworker_groups == 1)
        return singa_err_set(err, "SINGA_REJOIN: the job is synchronous (one worker group): losing a process ends it, "
                                  "so no process can rejoin it (resume it from its checkpoint instead)");
    if (rt_loss_ends_job(rt, rt->rank))
        return singa_err_set(err, "SINGA_REJOIN: rank %d (%s) holds what other processes need: its loss ended the job, "
                                  "so it cannot rejoin", rt->rank, role);
    return 0;
}

/* An elastic job restarted by `--procs` on the processes left, as its log tells. */
static void log_restart(rt_ctx *rt, bool resumed)
{
    const char *lost = rt->launch.lost;
    char from[64];
    snprintf(from, sizeof from, "resuming step %d", rt->resume_step);
    rt_log(rt, "elastic restart %d of %d: %s %s lost, %s on %d process%s", rt->launch.restart, rt->c->max_restarts,
           strchr(lost, ',') ? "ranks" : "rank", *lost ? lost : "?", resumed ? from : "no checkpoint yet: starting from step 0",
           rt->nprocs, rt->nprocs == 1 ? "" : "es");
}

/* How many checkpoints (steps) the files, newest first, are of. */
static size_t count_steps(const singa_ckpt_file *files, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += i == 0 || files[i].step != files[i - 1].step;
    return k;
}

/* overwrite = true, rank 0: keeps the earlier run's files (taking `files`) to remove them once
 * this run has written a whole checkpoint. */
static int note_stale(rt_ctx *rt, singa_ckpt_file *files, size_t n, singa_err *err)
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
    size_t k = count_steps(files, n);
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

/* Before any thread starts, in every process: with resume, the newest checkpoint (of any
 * topology) that is whole, verifies and fits, read by every process from checkpoint_path, which
 * they must share, so all choose the same; without, a folder that holds no checkpoint, since a
 * fresh run's files must not mix with an earlier run's. */
static int ckpt_setup(rt_ctx *rt, singa_job *job, singa_err *err)
{
    singa_ckpt_file *files;
    size_t n;
    if (!rt->ckpt_dir)
        return 0;
    if (singa_mkdirs(rt->ckpt_dir, err) < 0 || singa_ckpt_dir_files(rt->ckpt_dir, &files, &n, err) < 0)
        return singa_err_prefix(err, "job: checkpoint_path: ");
    /* A process that rejoins takes its groups' state from the newest whole checkpoint, which this
     * run wrote (rank 0 refused an earlier run's files at the start); an elastic restart goes on. */
    bool resume = singa_conf_bool(rt->conf, "resume", false) || rt->launch.rejoin || rt->launch.restart > 0;
    int rc = 0;
    if (n && !resume && !singa_conf_bool(rt->conf, "overwrite", false))
        rc = singa_job_stale_error(rt->ckpt_dir, count_steps(files, n), files[0].step, err);
    else if (n && !resume && rt->rank == 0) {
        rc = note_stale(rt, files, n, err);
        files = NULL;
        n = 0;
    }
    resume_ctx c = {rt, job, NULL, NULL, 0};
    if (rc == 0 && resume && !(rt->resumed = malloc(sizeof *rt->resumed)))
        rc = singa_err_set(err, "out of memory");
    int found = rc == 0 && resume ? singa_ckpt_set_open(rt->resumed, rt->ckpt_dir, resume_accept, resume_refused, &c, err)
                                  : 1;
    if (rc == 0 && found == 0) {
        const singa_ckpt_set *s = rt->resumed;
        char what[1024];
        rt->resume_step = (int)s->step;
        if (rt->resume_step > singa_conf_int(rt->conf, "train_steps", 0))
            rc = singa_err_set(err, "resume: checkpoint step %d in '%s' is beyond train_steps %d", rt->resume_step,
                               rt->ckpt_dir, singa_conf_int(rt->conf, "train_steps", 0));
        if (rc == 0 && singa_ckpt_set_resharded(s, rt->topology, what, sizeof what))
            rt_log(rt, "%s", what);
        if (rc == 0 && singa_ckpt_set_lacks(s, what, sizeof what))
            rt_log(rt, "resume: %s", what);
        if (rc == 0)
            rt_log(rt, "%s from %s (step %d)", rt->launch.rejoin ? "rejoining: this process's groups go on" : "resumed",
                   s->where, rt->resume_step);
        bool *aside = calloc(n + 1, sizeof *aside);
        size_t newer = 0; /* this run writes the refused steps anew: none of their files may stay */
        while (aside && newer < n && files[newer].step > s->step) {
            for (size_t k = 0; k < c.n; k++)
                if (c.steps[k] == files[newer].step)
                    aside[newer] = !c.incomplete[k];
            newer++;
        }
        if (rc == 0 && aside && rt->rank == 0)
            remove_steps(rt, files, newer, aside);
        free(aside);
    } else if (rc == 0 && found < 0) {
        rc = singa_err_prefix(err, "resume: no checkpoint in '%s' verifies on every shard and fits; newest: ", rt->ckpt_dir);
    } else if (rc == 0 && resume) {
        rt_log(rt, "resume: no checkpoint in '%s', starting from step 0", rt->ckpt_dir);
    }
    if (rc == 0 && rt->launch.restart > 0)
        log_restart(rt, found == 0);
    if (found != 0)
        drop_resumed(rt);
    if (rc == 0 && rt->rank == 0) /* nothing writes yet: no process trains before rank 0 has met all */
        singa_ckpt_dir_clean(rt->ckpt_dir);
    free(c.steps);
    free(c.incomplete);
    free(files);
    return rc;
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
            remove_steps(rt, files + i, j - i, NULL);
        else if (parts >= nparts(rt)) /* a step written before a group was lost has its files too */
            complete++;
        i = j;
    }
    free(files);
}

/* The most floats in one slice (2 MB).  A bigger piece of a param is cut into several, so that
 * between processes the transfer of one slice overlaps the update and the copies of the others:
 * a 16 MB param's round trip between 2 processes takes 25% less time so (BENCHMARKS.md). */
enum { SLICE_MAX = 512 * 1024 };

/* The params servers update, in the order every process finds them, and their slices: each
 * server's range of a param (place.h) cut into pieces of at most SLICE_MAX. */
static int make_slices(rt_ctx *rt, singa_job *job, singa_err *err)
{
    singa_params *ps = singa_job_params(job);
    int nservers = rt->c->nservers_per_group;
    size_t total = 0;
    for (int i = 0; i < ps->n; i++) {
        singa_param *p = ps->items[i];
        if (p->trained && !p->owner && !p->state)
            total += p->data.size;
    }
    size_t (*ranges)[2] = malloc((size_t)nservers * sizeof *ranges);
    if (!ranges || !(rt->params = calloc((size_t)ps->n + 1, sizeof *rt->params)) ||
        !(rt->final_params = calloc((size_t)ps->n + 1, sizeof *rt->final_params)) ||
        !(rt->slices = calloc((size_t)(ps->n + 1) * (size_t)nservers + total / SLICE_MAX, sizeof *rt->slices))) {
        free(ranges);
        return singa_err_set(err, "out of memory");
    }
    for (int i = 0; i < ps->n; i++) {
        singa_param *p = ps->items[i];
        if (!p->trained || p->owner || p->state)
            continue;
        rt->final_params[rt->nparams] = p;
        rt->params[rt->nparams++] =
            (rt_param){p->name, p->layer, p->data.size, p->lr_scale, p->wd_scale, 0, 0, NULL};
    }
    rt_place *pl = NULL;
    if (rt->nparams == 0 || rt_place_new(&pl, rt, job, err) < 0) {
        free(ranges);
        return rt->nparams ? -1
                           : singa_err_set(err, "neuralnet: no layer has a trained param, so there is nothing to distribute");
    }
    size_t base = 0;
    for (int k = 0; k < rt->nparams; k++) {
        rt_param *d = &rt->params[k];
        d->first_slice = rt->nslices;
        if (!rt_place_ranges(pl, rt, k, ranges))
            for (int j = 0; j < nservers; j++) { /* server j's range of all the params end to end */
                size_t lo = total * (size_t)j / (size_t)nservers, hi = total * (size_t)(j + 1) / (size_t)nservers;
                size_t a = lo > base ? lo : base, b = hi < base + d->size ? hi : base + d->size;
                ranges[j][0] = a < b ? a - base : 0;
                ranges[j][1] = a < b ? b - base : 0;
            }
        for (int j = 0; j < nservers; j++)
            for (size_t a = ranges[j][0]; a < ranges[j][1]; a += SLICE_MAX) {
                size_t len = ranges[j][1] - a < SLICE_MAX ? ranges[j][1] - a : SLICE_MAX;
                rt->slices[rt->nslices++] = (rt_slice){k, a, len, j};
                d->nslices++;
            }
        base += d->size;
    }
    rt_place_log(pl, rt);
    rt_place_free(pl);
    free(ranges);
    make_topology(rt, total);
    return 0;
}

/* A worker's distributed params, by index, and its learning rates. */
static int worker_params(rt_ctx *rt, rt_worker *w, singa_err *err)
{
    singa_params *ps = singa_job_params(w->job);
    if (!(w->params = calloc((size_t)rt->nparams, sizeof *w->params)) ||
        !(w->sent = calloc((size_t)rt->nparams, sizeof *w->sent)) ||
        !(w->stale = calloc((size_t)rt->nparams, sizeof *w->stale)))
        return singa_err_set(err, "out of memory");
    if (singa_updater_create(&w->rates, singa_conf_get(rt->conf, "updater"), NULL, err) < 0)
        return -1;
    int k = 0;
    for (int i = 0; i < ps->n && k <= rt->nparams; i++) {
        singa_param *p = ps->items[i];
        if (!p->trained || p->owner || p->state)
            continue;
        if (k == rt->nparams || strcmp(p->name, rt->params[k].name) != 0 || p->data.size != rt->params[k].size)
            return singa_err_set(err, "worker %d.%d: its net's params differ from worker 0.0's", w->group, w->id);
        w->params[k++] = p;
    }
    return 0;
}

/* Workers of a group in this process train on the first one's values: each param's, and its
 * sharers' (an unrolled layer's copies view their owner's value, which is freed here). */
static int share_replicas(rt_ctx *rt, singa_err *err)
{
    int ngroups = rt->c->nworker_groups;
    if (!(rt->replica = calloc((size_t)ngroups, sizeof *rt->replica)))
        return singa_err_set(err, "out of memory");
    for (int i = 0; i < rt->nworkers; i++) {
        rt_worker *w = &rt->workers[i];
        if (!rt->replica[w->group]) {
            rt->replica[w->group] = w->params;
            continue;
        }
        singa_params *ps = singa_job_params(w->job);
        for (int k = 0; k < rt->nparams; k++) {
            singa_param *p = w->params[k], *r = rt->replica[w->group][k];
            singa_tensor_free(&p->data);
            p->data = r->data;
            p->data.owns = false;
            for (int j = 0; j < ps->n; j++)
                if (ps->items[j]->owner == p)
                    ps->items[j]->data = p->data;
        }
    }
    return 0;
}

/* A record of a group leader in another process, to rank 0's host through the stubs. */
static void send_record(rt_worker *w, const singa_record *r, bool step)
{
    uint8_t buf[MSG_RECORD_MAX];
    msg m = {.type = MSG_METRIC, .src = {ENT_WORKER, (uint16_t)w->group, (uint16_t)w->id, (uint16_t)w->rt->rank},
             .dst = {ENT_STUB, 0, 0, 0}, .of_step = step};
    rt_send(w->sock, &m, buf, msg_record_encode(r, buf));
}

/* Results go to every process's log, and to rank 0's host (from other processes as messages). */
static void hook_record(void *ud, const singa_record *r)
{
    rt_worker *w = ud;
    if (w->rt->log) {
        char line[512];
        int n = snprintf(line, sizeof line, "step %d %s, group %d:", r->step, singa_phase_name(r->phase), r->group);
        for (int i = 0; i < r->metrics->n && n < (int)sizeof line; i++)
            n += snprintf(line + n, sizeof line - (size_t)n, " %s %.6g", r->metrics->name[i],
                          r->metrics->sum[i] / (double)(r->metrics->count[i] ? r->metrics->count[i] : 1));
        rt_log_line(w->rt, line, false, false);
    }
    if (w->rt->rank != 0)
        send_record(w, r, false);
    else
        rt_record(w->rt, r, false);
}

/* Every step of a group leader; from another process at most 20 a second, enough for a plot. */
static void hook_step(void *ud, const singa_record *r)
{
    rt_worker *w = ud;
    if (w->id != 0)
        return;
    if (w->rt->rank == 0) {
        rt_record(w->rt, r, true);
        return;
    }
    double t = rt_now();
    if (t - w->step_sent_at >= 0.05 || r->step + 1 == r->total_steps) {
        w->step_sent_at = t;
        send_record(w, r, true);
    }
}

static void hook_log(void *ud, const char *line) { rt_log_line(((rt_worker *)ud)->rt, line, true, false); }

static void hook_checkpoint(void *ud, int step, const char *path)
{
    rt_worker *w = ud;
    if (w->group != 0 || w->id != 0 || w->rt->rank != 0 || !w->rt->hooks->checkpoint)
        return;
    pthread_mutex_lock(&w->rt->lock);
    w->rt->hooks->checkpoint(w->rt->hooks->ud, step, path);
    pthread_mutex_unlock(&w->rt->lock);
}

/* A sharded job's worker in this process: the elements of a param it holds. */
typedef struct held_by {
    rt_ctx *rt;
    const singa_parts *parts; /* its cut net, when linked to other processes; else NULL */
} held_by;

/* Draws p's values where this process holds it: its workers' span (of a cut net, the elements
 * they compute) and its servers' slices, whose initial values it puts (stub.c). */
static int draw_held(void *ud, singa_param *p, singa_rng *rng, singa_err *err)
{
    const held_by *h = ud;
    const rt_ctx *rt = h->rt;
    int k = 0;
    while (k < rt->nparams && strcmp(rt->params[k].name, p->name) != 0)
        k++;
    size_t (*r)[2] = malloc((size_t)(k < rt->nparams ? rt->params[k].nslices + 1 : 1) * sizeof *r);
    if (!r)
        return singa_err_set(err, "out of memory");
    int n = 1;
    r[0][0] = 0;
    r[0][1] = p->data.size;
    if (k < rt->nparams && h->parts)
        singa_parts_span(h->parts, p, &r[0][0], &r[0][1]);
    singa_param_state_of(p)->partial = r[0][1] - r[0][0] < p->data.size;
    for (int i = 0; k < rt->nparams && i < rt->params[k].nslices; i++) {
        const rt_slice *sl = &rt->slices[rt->params[k].first_slice + i];
        if (rt_server_proc(rt, 0, sl->server) != rt->rank)
            continue;
        int at = n++; /* kept in order of their first element */
        while (at > 0 && r[at - 1][0] > sl->offset) {
            memcpy(r[at], r[at - 1], sizeof *r);
            at--;
        }
        r[at][0] = sl->offset;
        r[at][1] = sl->offset + sl->len;
    }
    int rc = singa_param_init_held(p, rng, (const size_t(*)[2])r, n, err);
    free(r);
    return rc;
}

/* A worker's own state from the model resume chose: its own file's where the checkpoint has one,
 * else as ckpt_set.h's view re-derives it. */
static int load_worker_state(rt_ctx *rt, rt_worker *w, singa_err *err)
{
    singa_ckpt v;
    if (singa_ckpt_set_view(rt->resumed, w->group, w->id, true, &v, err) < 0)
        return -1;
    int rc = singa_job_load_state(w->job, &v, rt->resumed->where, err);
    singa_ckpt_free(&v, 0);
    return rc;
}

static int add_workers(rt_ctx *rt, singa_job *lead, singa_err *err)
{
    const singa_cluster *c = rt->c;
    int total = c->nworker_groups * c->nworkers_per_group;
    if (!(rt->workers = calloc((size_t)total, sizeof *rt->workers)))
        return singa_err_set(err, "out of memory");
    for (int g = 0; g < c->nworker_groups; g++)
        for (int j = 0; j < c->nworkers_per_group; j++) {
            if (rt_worker_proc(rt, g, j) != rt->rank || !rt_sends(rt, g, j))
                continue;
            rt_worker *w = &rt->workers[rt->nworkers++];
            *w = (rt_worker){.rt = rt, .group = g, .id = j};
            w->hooks = (singa_job_hooks){.ud = w, .record = hook_record, .step = hook_step, .log = hook_log,
                                        .checkpoint = hook_checkpoint, .control = rt->control};
            if (g == 0 && j == 0)
                w->job = lead;
            else if (singa_job_create_worker(&w->job, rt->conf, singa_job_registry(lead), g, j, err) < 0)
                return singa_err_prefix(err, "worker %d.%d: ", g, j);
            const singa_net *train = singa_job_train_net(w->job);
            if (train->parts && singa_parts_count_traffic(train->parts, rt->stats, err) < 0) /* what a cut net's bridges carry */
                return singa_err_prefix(err, "worker %d.%d: ", g, j);
            bool linked = rt->cut && rt_senders(rt, g) > 1;
            if (linked && rt_worker_link(w, err) < 0)
                return singa_err_prefix(err, "worker %d.%d: ", g, j);
            singa_job_count_progress(w->job, &rt->progress);
            held_by h = {rt, linked ? train->parts : NULL};
            if (rt->c->shard_params && singa_job_draw_params(w->job, draw_held, &h, err) < 0)
                return singa_err_prefix(err, "worker %d.%d: ", g, j);
            if ((rt->resumed && load_worker_state(rt, w, err) < 0) || singa_job_begin(w->job, &w->hooks, err) < 0 ||
                worker_params(rt, w, err) < 0)
                return -1;
        }
    return 0;
}

static int add_servers(rt_ctx *rt, singa_err *err)
{
    const singa_cluster *c = rt->c;
    int total = c->nserver_groups * c->nservers_per_group;
    if (!(rt->servers = calloc((size_t)total, rt_server_size())))
        return singa_err_set(err, "out of memory");
    for (int g = 0; g < c->nserver_groups; g++)
        for (int j = 0; j < c->nservers_per_group; j++) {
            if (rt_server_proc(rt, g, j) != rt->rank)
                continue;
            rt_server *s = rt_server_at(rt, rt->nservers++);
            if (rt_server_create(rt, s, g, j, err) < 0 || (rt->resumed && rt_server_load(s, rt->resumed, err) < 0))
                return -1;
        }
    drop_resumed(rt); /* loaded */
    return 0;
}

static void free_rt(rt_ctx *rt, singa_job *lead)
{
    rt_history_free(rt);
    rt_residuals_free(rt);
    for (int i = 0; i < rt->nworkers; i++) { /* borrowed values are views: any order will do */
        rt_worker *w = &rt->workers[i];
        if (w->job != lead)
            singa_job_free(w->job);
        free(w->params);
        free(w->sent);
        free(w->stale);
        singa_updater_free(w->rates);
    }
    for (int i = 0; i < rt->nservers; i++)
        rt_server_free(rt_server_at(rt, i));
    rt_stub_free(rt->stub);
    free(rt->workers);
    free(rt->servers);
    free(rt->replica);
    free(rt->params);
    free(rt->final_params);
    free(rt->slices);
    free(rt->stop_step);
    drop_resumed(rt);
    free(rt->stale);
    free(rt->stale_ino);
    pthread_mutex_destroy(&rt->lock);
}

/* Tells the stub that the runtime cannot go on (a thread could not start or connect), from a
 * socket of the calling thread's own. */
static void abort_from_here(rt_ctx *rt, const char *why)
{
    void *sock = zmq_socket(rt->zmq, ZMQ_DEALER);
    int linger = 1000;
    if (!sock)
        return;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    if (zmq_connect(sock, rt->endpoint) == 0) {
        msg m = {.type = MSG_ABORT, .src = {ENT_STUB, 0, 0, (uint16_t)rt->rank}};
        msg_send(sock, NULL, &m, why, strlen(why));
    }
    zmq_close(sock);
}

void *rt_connect(rt_ctx *rt, int kind, int group, int id, singa_err *err)
{
    char name[32];
    int zero = 0;
    rt_identity(name, sizeof name, kind, group, id);
    void *sock = zmq_socket(rt->zmq, ZMQ_DEALER);
    if (!sock || zmq_setsockopt(sock, ZMQ_ROUTING_ID, name, strlen(name)) < 0 ||
        zmq_setsockopt(sock, ZMQ_LINGER, &zero, sizeof zero) < 0 || zmq_setsockopt(sock, ZMQ_SNDHWM, &zero, sizeof zero) < 0 ||
        zmq_setsockopt(sock, ZMQ_RCVHWM, &zero, sizeof zero) < 0 || zmq_connect(sock, rt->endpoint) < 0) {
        singa_err_set(err, "%s %d.%d: cannot connect to the stub: %s", kind == ENT_WORKER ? "worker" : "server", group,
                      id, zmq_strerror(zmq_errno()));
        if (sock)
            zmq_close(sock);
        rt_fail(rt, err);
        abort_from_here(rt, err->msg);
        return NULL;
    }
    msg hello = {.type = MSG_HELLO, .src = {(uint8_t)kind, (uint16_t)group, (uint16_t)id, (uint16_t)rt->rank},
                 .dst = {ENT_STUB, 0, 0, (uint16_t)rt->rank}};
    rt_send(sock, &hello, NULL, 0);
    return sock;
}

/* A worker's or server's thread: busy from its start to its end but while it waits. */
typedef struct busy_thread {
    rt_ctx *rt;
    void *(*main_fn)(void *);
    void *arg;
} busy_thread;

static void *run_busy(void *arg)
{
    busy_thread *b = arg;
    atomic_fetch_add(&b->rt->busy, 1);
    b->main_fn(b->arg);
    atomic_fetch_sub(&b->rt->busy, 1);
    return NULL;
}

/* Starts the stub, the servers and the workers, and waits for all of them. */
static int run_threads(rt_ctx *rt, singa_err *err)
{
    int n = 1 + rt->nservers + rt->nworkers, started = 0;
    pthread_t *t = calloc((size_t)n, sizeof *t);
    busy_thread *b = calloc((size_t)n, sizeof *b);
    if (!t || !b) {
        free(t);
        free(b);
        return singa_err_set(err, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        if (i > 0)
            b[i] = (busy_thread){rt, i <= rt->nservers ? rt_server_main : rt_worker_main,
                                 i <= rt->nservers ? (void *)rt_server_at(rt, i - 1)
                                                   : (void *)&rt->workers[i - 1 - rt->nservers]};
        if (pthread_create(&t[i], NULL, i == 0 ? rt_stub_main : run_busy, i == 0 ? (void *)rt : (void *)&b[i]) != 0)
            break;
        started++;
    }
    if (started < n) {
        singa_err e;
        singa_err_set(&e, "cannot start thread %d of %d", started + 1, n);
        rt_fail(rt, &e);
        if (started > 0)
            abort_from_here(rt, e.msg);
    }
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    free(t);
    free(b);
    if (rt->failed) {
        *err = rt->err;
        return -1;
    }
    return 0;
}

/* An elastic job that lost a process: it may restart while enough processes are left and
 * restarts remain (`--procs` counts them; under another launcher its relaunches are the user's). */
static int lost_end(const rt_ctx *rt, singa_err *err)
{
    const singa_cluster *c = rt->c;
    int lost = 0;
    for (int r = 0; r < rt->nprocs; r++)
        lost += singa_stats_rank_lost(rt->stats, r);
    int left = rt->nprocs - (lost > 0 ? lost : 1);
    if (left < c->elastic_min) {
        singa_appendf(err->msg, sizeof err->msg, "; the job cannot restart: %d process%s would be left, fewer than "
                      "cluster.elastic.min = %d", left, left == 1 ? "" : "es", c->elastic_min);
        return -1;
    }
    if (rt->launch.restart >= c->max_restarts) {
        singa_appendf(err->msg, sizeof err->msg, "; the job cannot restart: its restarts are used up (%d of "
                      "cluster.elastic.max_restarts = %d)", rt->launch.restart, c->max_restarts);
        return -1;
    }
    singa_appendf(err->msg, sizeof err->msg, "; the job can restart from its newest checkpoint on the processes left "
                  "(elastic, exit status %d)", SINGA_EXIT_LOST);
    return SINGA_JOB_LOST;
}

/* How long rank 0 waits for the other ranks' traces at the end (they write them once stopped). */
enum { TRACE_WAIT = 10 };

/* The context's own state, once the launch is read: rank, steering, checkpoint settings, the
 * stop and checkpoint steps, the counters of the heartbeats. */
static int init_ctx(rt_ctx *rt, singa_job *job, singa_err *err)
{
    rt->rank = rt->launch.rank;
    rt->nprocs = rt->launch.size;
    rt->cut = singa_job_cut(job);
    singa_job_control_init(&rt->from_rank0);
    rt->control = rt->rank == 0 ? rt->hooks->control : &rt->from_rank0;
    rt->fingerprint = singa_conf_hash(rt->conf);
    if (singa_conf_strs_len(rt->conf, "checkpoint_path"))
        rt->ckpt_dir = singa_conf_strs_at(rt->conf, "checkpoint_path", 0);
    rt->ckpt_keep = singa_conf_int(rt->conf, "checkpoint_keep", 3);
    singa_registry_plugin_ids(singa_job_registry(job), rt->plugins, sizeof rt->plugins);
    singa_stats_set_rank(rt->stats, rt->rank);
    if (rt->trace && rt->rank == 0)
        singa_trace_clear_ranks(rt->trace, rt->nprocs); /* an earlier run's would be merged */
    pthread_mutex_init(&rt->lock, NULL);
    snprintf(rt->endpoint, sizeof rt->endpoint, "inproc://singa-stub-%p", (void *)rt);
    if (!(rt->stop_step = malloc((size_t)rt->c->nworker_groups * sizeof *rt->stop_step)))
        return singa_err_set(err, "out of memory");
    for (int g = 0; g < rt->c->nworker_groups; g++)
        atomic_init(&rt->stop_step[g], INT_MAX);
    atomic_init(&rt->ckpt_step, -1);
    rt->rejoined_at = -1;
    atomic_init(&rt->busy, 0);
    atomic_init(&rt->progress, 0);
    return 0;
}

/* This process's part of the job: the log, the slices, the checkpoint resumed, the workers, the
 * servers and the stub, before any thread starts. */
static int build(rt_ctx *rt, singa_job *job, singa_err *err)
{
    if (rt_log_open(rt, err) < 0 || make_slices(rt, job, err) < 0 || rejoin_check(rt, err) < 0 ||
        ckpt_setup(rt, job, err) < 0 || add_workers(rt, job, err) < 0 || share_replicas(rt, err) < 0 ||
        rt_residuals_setup(rt, err) < 0 || add_servers(rt, err) < 0 || rt_history_setup(rt, err) < 0 ||
        rt_stub_create(rt, err) < 0)
        return -1;
    rt_momentum_setup(rt);
    if (rt->history) { /* for the workspace's log only: it changes no result */
        char line[160];
        snprintf(line, sizeof line, "the workers add their gradients into the servers' momentum history: %d of %d params",
                 rt->history->nparams, rt->nparams);
        rt_log_line(rt, line, false, false);
    }
    for (int k = 0; rt->c->shard_params && rt->rank != 0 && k < rt->nparams; k++)
        singa_param_state_of(rt->final_params[k])->partial = true; /* the script's job here is no worker's: it was never drawn */
    return 0;
}

/* Runs the threads; then the result (rank 0's, handed to the others), the failure or an elastic
 * job's loss, and the trace. */
static int run(rt_ctx *rt, singa_result *res, singa_err *err)
{
    if (!(rt->zmq = zmq_ctx_new()))
        return singa_err_set(err, "cannot start ZeroMQ: %s", zmq_strerror(zmq_errno()));
    int rc = run_threads(rt, err);
    zmq_ctx_term(rt->zmq);
    struct rusage ru;
    char peak[64];
    if (getrusage(RUSAGE_SELF, &ru) == 0) { /* what a memory budget must allow this process */
        snprintf(peak, sizeof peak, "rank %d: peak resident memory %.1f MB", rt->rank, (double)ru.ru_maxrss / 1024.0);
        rt_log_line(rt, peak, false, false);
    }
    if (rc == 0) /* worker 0 of group 0, which tests, is always the first in rank 0 */
        *res = rt->rank == 0 ? rt->workers[0].res : rt->final;
    else if (rt->lost && rt->c->elastic_min)
        rc = lost_end(rt, err);
    if (rc < 0)
        rt_log_line(rt, err->msg, false, false);
    singa_err terr;
    if (rt->trace && singa_trace_write(rt->trace, rt->rank, rt->nprocs, rt->clock_offset, TRACE_WAIT, &terr) < 0)
        rt_log_line(rt, terr.msg, true, true);
    return rc;
}

int singa_runtime_run(singa_job *job, const singa_job_hooks *hooks, singa_trace *trace, singa_result *res, singa_err *err)
{
    static const singa_job_hooks none;
    rt_ctx rt = {.job = job, .c = singa_job_cluster(job), .conf = singa_job_conf(job), .hooks = hooks ? hooks : &none,
                  .stats = singa_job_stats(job), .trace = trace};
    if (rt_launch_read(&rt.launch, rt.c, err) < 0)
        return -1;
    int rc = init_ctx(&rt, job, err) < 0 || build(&rt, job, err) < 0 ? -1 : run(&rt, res, err);
    if (rt.log)
        fclose(rt.log);
    free_rt(&rt, job);
    return rc;
}

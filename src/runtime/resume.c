/* Where this process's workers and servers start from, before any thread runs: the checkpoint
 * resume chose (of any topology; see ckpt/resume.h), read by every process alike, or values
 * drawn where the process holds them; and whether a process may rejoin a job at all. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"
#include "ckpt/load.h"
#include "layers/param_state.h"
#include "runtime/bridge.h"
#include "singa/net.h"
#include "singa/tensor.h"

void rt_resume_drop(rt_ctx *rt)
{
    if (rt->resumed)
        singa_ckpt_set_free(rt->resumed);
    free(rt->resumed);
    rt->resumed = NULL;
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
int rt_rejoin_check(rt_ctx *rt, singa_err *err)
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

/* Before any thread starts, in every process: with resume, the newest checkpoint (of any
 * topology) that is whole, verifies and fits, read by every process from checkpoint_path, which
 * they must share, so all choose the same; without, a folder that holds no checkpoint, since a
 * fresh run's files must not mix with an earlier run's. */
int rt_ckpt_setup(rt_ctx *rt, singa_job *job, singa_err *err)
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
        rc = singa_job_stale_error(rt->ckpt_dir, rt_ckpt_count_steps(files, n), files[0].step, err);
    else if (n && !resume && rt->rank == 0) {
        rc = rt_ckpt_note_stale(rt, files, n, err);
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
            rt_ckpt_remove_steps(rt, files, newer, aside);
        free(aside);
    } else if (rc == 0 && found < 0) {
        rc = singa_err_prefix(err, "resume: no checkpoint in '%s' verifies on every shard and fits; newest: ", rt->ckpt_dir);
    } else if (rc == 0 && resume) {
        rt_log(rt, "resume: no checkpoint in '%s', starting from step 0", rt->ckpt_dir);
    }
    if (rc == 0 && rt->launch.restart > 0)
        log_restart(rt, found == 0);
    if (found != 0)
        rt_resume_drop(rt);
    if (rc == 0 && rt->rank == 0) /* nothing writes yet: no process trains before rank 0 has met all */
        singa_ckpt_dir_clean(rt->ckpt_dir);
    free(c.steps);
    free(c.incomplete);
    free(files);
    return rc;
}

/* Draws p's values where this process holds it: its workers' span (of a cut net, the elements
 * they compute) and its servers' slices, whose initial values it puts (stub.c). */
int rt_draw_held(void *ud, singa_param *p, singa_rng *rng, singa_err *err)
{
    const rt_held_by *h = ud;
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
int rt_load_worker_state(rt_ctx *rt, rt_worker *w, singa_err *err)
{
    singa_ckpt v;
    if (singa_ckpt_set_view(rt->resumed, w->group, w->id, true, &v, err) < 0)
        return -1;
    int rc = singa_job_load_state(w->job, &v, rt->resumed->where, err);
    singa_ckpt_free(&v, 0);
    return rc;
}


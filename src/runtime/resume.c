/* Where this process's workers and servers start from, before any thread runs: the checkpoint
 * resume chose (of any topology; see ckpt/resume.h), read by every process alike, or values
 * drawn where the process holds them; and whether a process may rejoin a job at all. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"
#include "ckpt/resume.h"
#include "layers/param_state.h"
#include "runtime/bridge.h"
#include "runtime/rejoin_sync.h"
#include "singa/net.h"
#include "singa/tensor.h"

void rt_resume_drop(rt_ctx *rt)
{
    if (rt->resumed)
        singa_ckpt_set_free(rt->resumed);
    free(rt->resumed);
    rt->resumed = NULL;
}

/* Where the refusals of resume's search go: the process's log. */
static void log_refused(void *ud, const char *line) { rt_log(ud, "%s", line); }

/* A process started again to rejoin an asynchronous job (SINGA_REJOIN) must be one the job goes
 * on without: neither rank 0 (topology.c) nor one whose loss ends the job; one of a synchronous
 * job, one whose group shrank (rejoin_sync.c).  Servers it holds serve
 * its own groups alone (Hogwild): they fetch the newest values before its workers start (server.c). */
int rt_rejoin_check(rt_ctx *rt, singa_err *err)
{
    char role[160];
    if (!rt->launch.rejoin)
        return 0;
    rt_role(rt, rt->rank, role, sizeof role);
    if (rt_rejoin_sync(rt)) /* whether the job went on without it: cluster.replicas (rejoin_sync.c) */
        return rt_rejoin_sync_check(rt, err);
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
    char who[300];
    if (*lost)
        snprintf(who, sizeof who, "%s %s lost", strchr(lost, ',') ? "ranks" : "rank", lost);
    else
        snprintf(who, sizeof who, "no process lost");
    rt_log(rt, "elastic restart %d of %d: %s, %s on %d process%s", rt->launch.restart, rt->c->max_restarts, who,
           resumed ? from : "no checkpoint yet: starting from step 0", rt->nprocs, rt->nprocs == 1 ? "" : "es");
}

/* The steps newer than the one resumed from, which this run writes anew, so none of their files
 * may stay: rank 0 removes them, or renames those that did not verify (refused, not incomplete). */
static void drop_newer(rt_ctx *rt, const singa_ckpt_file *files, size_t n, uint64_t step, const singa_ckpt_resumed *r)
{
    bool *aside = calloc(n + 1, sizeof *aside);
    size_t newer = 0;
    while (aside && newer < n && files[newer].step > step) {
        for (size_t k = 0; k < r->nrefused; k++)
            if (r->refused[k] == files[newer].step)
                aside[newer] = !r->incomplete[k];
        newer++;
    }
    if (aside && rt->rank == 0)
        rt_ckpt_remove_steps(rt, files, newer, aside);
    free(aside);
}

/* The checkpoint resume took, as the log tells; it must not be beyond train_steps. */
static int resumed_from(rt_ctx *rt, const singa_ckpt_set *s, singa_err *err)
{
    char what[1024];
    rt->resume_step = (int)s->step;
    if (rt->resume_step > singa_conf_int(rt->conf, "train_steps", 0))
        return singa_err_set(err, "resume: checkpoint step %d in '%s' is beyond train_steps %d", rt->resume_step,
                             rt->ckpt_dir, singa_conf_int(rt->conf, "train_steps", 0));
    if (singa_ckpt_set_resharded(s, rt->topology, what, sizeof what))
        rt_log(rt, "%s", what);
    if (singa_ckpt_set_lacks(s, what, sizeof what))
        rt_log(rt, "resume: %s", what);
    rt_log(rt, "%s from %s (step %d)", rt->launch.rejoin ? "rejoining: this process's groups go on" : "resumed", s->where,
           rt->resume_step);
    return 0;
}

/* The newest checkpoint (of any topology) that is whole, verifies and fits: it holds every param
 * the servers update with the job's shape (an older one records none: then its number of
 * values), and no param the job lacks.  Returns as singa_ckpt_resume; rt->resumed on 0. */
static int resume(rt_ctx *rt, singa_job *job, const singa_ckpt_file *files, size_t n, singa_err *err)
{
    singa_ckpt_want want = {.path = rt->ckpt_dir, .params = rt->final_params, .nparams = rt->nparams, .flat_ok = true,
                            .wording = SINGA_CKPT_AS_JOB, .known = singa_job_params(job), .log = log_refused,
                            .log_ud = rt};
    singa_ckpt_resumed r;
    int found = singa_ckpt_resume(&want, &r, err), rc = found;
    if (found == 0 && !(rt->resumed = malloc(sizeof *rt->resumed)))
        rc = singa_err_set(err, "out of memory");
    if (rc == 0) {
        *rt->resumed = r.set;
        memset(&r.set, 0, sizeof r.set);
        if ((rc = resumed_from(rt, rt->resumed, err)) == 0)
            drop_newer(rt, files, n, rt->resumed->step, &r);
    } else if (found < 0) {
        singa_err_prefix(err, "resume: no checkpoint in '%s' verifies on every shard and fits; newest: ", rt->ckpt_dir);
    } else if (found == 1) {
        rt_log(rt, "resume: no checkpoint in '%s', starting from step 0", rt->ckpt_dir);
    }
    singa_ckpt_resumed_free(&r);
    return rc < 0 ? -1 : found;
}

/* Before any thread starts, in every process: with resume, the newest checkpoint that fits
 * (resume above), read by every process from checkpoint_path, which they must share, so all
 * choose the same; without, a folder that holds no checkpoint, since a fresh run's files must
 * not mix with an earlier run's. */
int rt_ckpt_setup(rt_ctx *rt, singa_job *job, singa_err *err)
{
    singa_ckpt_file *files;
    size_t n;
    if (!rt->ckpt_dir || rt_rejoin_sync(rt)) /* its state is the live processes' (rejoin_sync.c) */
        return 0;
    if (singa_mkdirs(rt->ckpt_dir, err) < 0 || singa_ckpt_dir_files(rt->ckpt_dir, &files, &n, err) < 0)
        return singa_err_prefix(err, "job: checkpoint_path: ");
    /* A process that rejoins takes its groups' state from the newest whole checkpoint, which this
     * run wrote (rank 0 refused an earlier run's files at the start); an elastic restart goes on. */
    bool resuming = singa_conf_bool(rt->conf, "resume", false) || rt->launch.rejoin || rt->launch.restart > 0;
    int rc = 0, found = 1;
    if (n && !resuming && !singa_conf_bool(rt->conf, "overwrite", false))
        rc = singa_job_stale_error(rt->ckpt_dir, rt_ckpt_count_steps(files, n), files[0].step, err);
    else if (n && !resuming && rt->rank == 0) {
        rc = rt_ckpt_note_stale(rt, files, n, err);
        files = NULL;
        n = 0;
    }
    if (rc == 0 && resuming)
        rc = (found = resume(rt, job, files, n, err)) < 0 ? -1 : 0;
    if (rc == 0 && rt->launch.restart > 0)
        log_restart(rt, found == 0);
    if (found != 0 || rc < 0)
        rt_resume_drop(rt);
    if (rc == 0 && rt->rank == 0) /* nothing writes yet: no process trains before rank 0 has met all */
        singa_ckpt_dir_clean(rt->ckpt_dir);
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
    return singa_ckpt_resume_state(rt->resumed, w->group, w->id, singa_job_load_state, w->job, err);
}


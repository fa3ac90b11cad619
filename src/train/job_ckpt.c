/* A job's checkpoint state: what its checkpoints hold (params, updater state, the generator, the
 * display window, the data cursors, the best so far), writing a plain job's, resuming, and a fresh
 * run's params from the checkpoints checkpoint_path lists after its directory.  A resume checks
 * every entry before it copies any (ckpt_load.h), so an older checkpoint can be tried. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "singa/ckpt_set.h"
#include "ckpt/load.h"
#include "ckpt/part.h"
#include "ckpt/resume.h"
#include "train/job_private.h"

/* Visits every entry a checkpoint of this job holds; `visit` returns -1 to stop.  A distributed
 * worker's holds no param the servers hold (trained, not a layer's state): their shards do. */
static int each_entry(void *obj, singa_ckpt_visit_fn visit, void *ud, singa_err *err)
{
    singa_job *job = obj;
    char name[512];
    for (int i = 0; i < job->params.n; i++) {
        singa_param *p = job->params.items[i];
        if (p->owner || (job->dist && p->trained && !p->state))
            continue;
        snprintf(name, sizeof name, "param/%s", p->name);
        if (visit(ud, name, SINGA_CKPT_F32, p->data.ndim, p->data.shape, p->data.data, err) < 0)
            return -1;
        for (int s = 0; job->upd && s < singa_updater_nslots(job->upd); s++) {
            singa_tensor *t = singa_updater_slot(job->upd, p->id, s);
            if (!t)
                continue;
            snprintf(name, sizeof name, "updater/%s/%s", p->name, singa_updater_slot_name(job->upd, s));
            if (visit(ud, name, SINGA_CKPT_F32, t->ndim, t->shape, t->data, err) < 0)
                return -1;
        }
    }
    int four = 4, wsize = JOB_WINDOW_BYTES;
    if (visit(ud, "rng", SINGA_CKPT_U64, 1, &four, job->rng.s, err) < 0 ||
        visit(ud, "window", SINGA_CKPT_U8, 1, &wsize, job->window_blob, err) < 0)
        return -1;
    for (int k = 0; k < job->ninputs; k++) {
        singa_layer *l = job->inputs[k];
        snprintf(name, sizeof name, "cursor/%s/%s", singa_phase_name(l->net->phase), l->name);
        if (visit(ud, name, SINGA_CKPT_I64, 1, &four, job->cursors[k], err) < 0)
            return -1;
    }
    return 0;
}

static void window_pack(singa_job *job)
{
    uint8_t *b = job->window_blob;
    int64_t n = job->window.metrics.n;
    memset(b, 0, JOB_WINDOW_BYTES);
    memcpy(b, &n, 8);
    memcpy(b + 8, &job->window.steps, 8);
    for (int i = 0; i < SINGA_METRICS_MAX; i++) {
        uint8_t *m = b + 16 + (size_t)i * (SINGA_METRIC_NAME + 16);
        int64_t count = job->window.metrics.count[i];
        memcpy(m, job->window.metrics.name[i], SINGA_METRIC_NAME);
        memcpy(m + SINGA_METRIC_NAME, &job->window.metrics.sum[i], 8);
        memcpy(m + SINGA_METRIC_NAME + 8, &count, 8);
    }
}

static int window_unpack(singa_job *job, const uint8_t *b, const char *path, singa_err *err)
{
    int64_t n, steps;
    memcpy(&n, b, 8);
    memcpy(&steps, b + 8, 8);
    if (n < 0 || n > SINGA_METRICS_MAX || steps < 0)
        return singa_err_set(err, "checkpoint '%s': tensor 'window' holds impossible values", path);
    singa_metrics m = {.n = (int)n};
    for (int i = 0; i < SINGA_METRICS_MAX; i++) {
        const uint8_t *e = b + 16 + (size_t)i * (SINGA_METRIC_NAME + 16);
        int64_t count;
        memcpy(m.name[i], e, SINGA_METRIC_NAME);
        memcpy(&m.sum[i], e + SINGA_METRIC_NAME, 8);
        memcpy(&count, e + SINGA_METRIC_NAME + 8, 8);
        if (m.name[i][SINGA_METRIC_NAME - 1] != 0 || count < 0)
            return singa_err_set(err, "checkpoint '%s': tensor 'window' holds impossible values", path);
        m.count[i] = (long)count;
    }
    job->window.metrics = m;
    job->window.steps = steps;
    return 0;
}

static int add_entry(void *ud, const char *name, int dtype, int ndim, const int *dims, void *data,
                     singa_err *err)
{
    return singa_ckpt_add(ud, name, dtype, ndim, dims, data, err);
}

int singa_job_ckpt_fill(singa_job *job, singa_ckpt *c, int step, singa_err *err)
{
    singa_ckpt_init(c, (uint64_t)step);
    window_pack(job);
    for (int k = 0; k < job->ninputs; k++)
        job->inputs[k]->type->get_cursor(job->inputs[k], job->cursors[k]);
    if (each_entry(job, add_entry, c, err) < 0)
        return -1;
    if (job->best_step < 0)
        return 0;
    int64_t bs = job->best_step;
    int sixteen = 16;
    memcpy(job->best_blob, &bs, 8);
    memcpy(job->best_blob + 8, &job->best_value, 8);
    return singa_ckpt_add(c, "best", SINGA_CKPT_U8, 1, &sixteen, job->best_blob, err);
}

bool singa_job_ckpt_fires(const singa_job *job, int step) { return job_fires(&job->checkpoint, step); }

void singa_job_ckpt_written(singa_job *job, int step, const char *path)
{
    memcpy(job->ckpt_seen[1], job->ckpt_seen[0], sizeof job->ckpt_seen[0]);
    job->ckpt_seen_step[1] = job->ckpt_seen_step[0];
    snprintf(job->ckpt_seen[0], sizeof job->ckpt_seen[0], "%s", path);
    job->ckpt_seen_step[0] = step;
}

int job_ckpt_save(singa_job *job, int step, const singa_job_hooks *hooks, singa_err *err)
{
    singa_ckpt c;
    char path[4096], where[512];
    if (job->stop_nonfinite && job_find_nonfinite(job, where, sizeof where)) /* never a bad "last good" one */
        return job_nonfinite_error(job, step, "checkpoint not written", where, err);
    int rc = singa_job_ckpt_fill(job, &c, step, err);
    if (rc == 0)
        rc = singa_ckpt_save(&c, job->ckpt_dir, NULL, path, sizeof path, err);
    for (size_t i = 0; rc == 0 && i < job->nstale; i++) {
        char old[4096];
        singa_ckpt_path(old, sizeof old, job->ckpt_dir, job->stale[i]);
        if (job->stale[i] != (uint64_t)step && unlink(old) == 0)
            singa_job_log(hooks, "removed %s (an earlier run's)", old);
    }
    if (rc == 0) {
        free(job->stale);
        job->stale = NULL;
        job->nstale = 0;
        rc = singa_ckpt_dir_prune(job->ckpt_dir, job->keep, job->best_step, err);
    }
    singa_ckpt_free(&c, 0);
    if (rc == 0) {
        singa_job_log(hooks, "checkpoint written: %s", path);
        singa_job_ckpt_written(job, step, path);
    }
    if (rc == 0 && hooks && hooks->checkpoint)
        hooks->checkpoint(hooks->ud, step, path);
    return rc;
}

/* The kTest or kValidation net whose data cursor `name` is, else NULL.  A job builds those nets
 * only with test_steps or validate_steps above 0, so a run that changed them finds that net's
 * cursors in the file and not in the job, or the other way round: neither is another net. */
static const char *eval_cursor_phase(const char *name)
{
    static const singa_phase eval[] = {SINGA_PHASE_TEST, SINGA_PHASE_VALIDATION};
    for (size_t i = 0; i < sizeof eval / sizeof *eval; i++) {
        const char *phase = singa_phase_name(eval[i]);
        size_t n = strlen(phase);
        if (strncmp(name, "cursor/", 7) == 0 && strncmp(name + 7, phase, n) == 0 && name[7 + n] == '/')
            return phase;
    }
    return NULL;
}

/* Whether the file holds cursors of the net of `phase` (it was written by a job that built it). */
static bool ckpt_has_net(const singa_ckpt *ck, const char *phase)
{
    for (size_t i = 0; i < ck->n; i++) {
        const char *p = eval_cursor_phase(ck->entries[i].name);
        if (p && strcmp(p, phase) == 0)
            return true;
    }
    return false;
}

/* Loading: every entry of the job must be in the file with its shape, and nothing else (but, in
 * a distributed worker's file, what the runtime checked: the topology and whose file it is). */
typedef struct job_load {
    singa_job *job;
    const singa_ckpt *ck;
    const char *path;
    int64_t best_step; /* checkpoint_keep_best's best so far, from the file */
    double best_value;
} job_load;

static int load_missing(void *ud, const char *name, singa_err *err)
{
    const job_load *l = ud;
    const char *phase = eval_cursor_phase(name);
    if (phase && !ckpt_has_net(l->ck, phase))
        return 0; /* that net starts from its first batch, as in a fresh run */
    return singa_err_set(err, "checkpoint '%s': tensor '%s' is missing (the file belongs to another net or updater)",
                         l->path, name);
}

static int load_mismatch(void *ud, const char *name, const singa_ckpt_entry *e, int ndim, const int *dims,
                         singa_err *err)
{
    char a[64], b[64] = "";
    singa_ckpt_entry_shape(e, a, sizeof a);
    for (int i = 0; i < ndim; i++)
        singa_appendf(b, sizeof b, i ? "x%d" : "%d", dims[i]);
    return singa_err_set(err, "checkpoint '%s': tensor '%s' has shape %s in the file but %s in the job",
                         ((const job_load *)ud)->path, name, a, b);
}

/* A data cursor's name without the part of a cut net ("cursor/kTrain/data@1" -> ".../data"):
 * every part of a group's input layer reads the group's batch, so they stand where the whole
 * layer would, and a cut job resumes from an uncut one's cursors and the other way round. */
static void cursor_base(const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s", name);
    char *at = strrchr(buf, '@');
    if (at && strncmp(buf, "cursor/", 7) == 0 && at[1] && strspn(at + 1, "0123456789") == strlen(at + 1))
        *at = 0;
}

static void cursor_name(const singa_layer *l, char *buf, size_t len)
{
    snprintf(buf, len, "cursor/%s/%s", singa_phase_name(l->net->phase), l->name);
}

/* Whether the job has a cursor of the same base as `name`. */
static bool job_has_cursor(const singa_job *job, const char *name)
{
    char a[512], b[512], c[512];
    cursor_base(name, a, sizeof a);
    for (int k = 0; k < job->ninputs; k++) {
        cursor_name(job->inputs[k], b, sizeof b);
        cursor_base(b, c, sizeof c);
        if (strcmp(a, c) == 0)
            return true;
    }
    return false;
}

static int load_extra(void *ud, const char *name, singa_err *err)
{
    const job_load *l = ud;
    if (strncmp(name, "cursor/", 7) == 0 && job_has_cursor(l->job, name))
        return 0; /* read by another part of the layer (cursor_base) */
    const char *phase = eval_cursor_phase(name);
    bool unbuilt = phase && !(strcmp(phase, singa_phase_name(SINGA_PHASE_TEST)) == 0 ? l->job->test_net : l->job->val_net);
    /* "residual/<slice>", "powersgd/...", "outer/<param>/...": cluster.compress's error feedback and
     * PowerSGD's Q, cluster.outer's state, which the runtime reads itself (or drops). */
    if (unbuilt || strcmp(name, "best") == 0 || strncmp(name, "residual/", 9) == 0 ||
        strncmp(name, "powersgd/", 9) == 0 || strncmp(name, "outer/", 6) == 0 ||
        (l->job->dist && (strncmp(name, "param/", 6) == 0 || strncmp(name, "updater/", 8) == 0)))
        return 0;
    return singa_err_set(err, "checkpoint '%s': tensor '%s' is not in the job (the file belongs to another net)",
                         l->path, name);
}

/* What the file says besides the job's tensors: the display window, the best so far, the step;
 * checked before anything is copied. */
static int load_validate(void *ud, singa_err *err)
{
    job_load *l = ud;
    const singa_ckpt_entry *w = singa_ckpt_find(l->ck, "window"), *b = singa_ckpt_find(l->ck, "best");
    if (w && window_unpack(l->job, w->data, l->path, err) < 0)
        return -1;
    if (b) {
        if (b->bytes == 16) {
            memcpy(&l->best_step, b->data, 8);
            memcpy(&l->best_value, (const uint8_t *)b->data + 8, 8);
        }
        if (b->bytes != 16 || l->best_step < 0 || (uint64_t)l->best_step > l->ck->step)
            return singa_err_set(err, "checkpoint '%s': tensor 'best' holds impossible values", l->path);
    }
    if (l->ck->step > (uint64_t)l->job->train_steps)
        return singa_err_set(err, "checkpoint '%s': step %llu is beyond train_steps %d", l->path,
                             (unsigned long long)l->ck->step, l->job->train_steps);
    return 0;
}

static const singa_ckpt_load_ops load_ops = {
    .missing = load_missing, .mismatch = load_mismatch, .extra = load_extra, .validate = load_validate,
};

/* ck's entries (pointing into ck) and, for a cursor of the job's that ck holds under another
 * part's name (cursor_base), that one under the job's name. */
static int alias_add(singa_ckpt *out, const char *name, const singa_ckpt_entry *e, singa_err *err)
{
    int dims[4];
    for (int d = 0; d < e->ndim; d++)
        dims[d] = (int)e->dims[d];
    return singa_ckpt_add(out, name, e->dtype, e->ndim, dims, e->data, err);
}

static int with_cursor_aliases(const singa_job *job, const singa_ckpt *ck, singa_ckpt *out, singa_err *err)
{
    singa_ckpt_init(out, ck->step);
    char name[512], a[512], b[512];
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < ck->n; i++)
        rc = alias_add(out, ck->entries[i].name, &ck->entries[i], err);
    for (int k = 0; rc == 0 && k < job->ninputs; k++) {
        cursor_name(job->inputs[k], name, sizeof name);
        if (singa_ckpt_find(ck, name))
            continue;
        cursor_base(name, a, sizeof a);
        for (size_t j = 0; j < ck->n; j++) {
            cursor_base(ck->entries[j].name, b, sizeof b);
            if (strcmp(a, b) == 0) {
                rc = alias_add(out, name, &ck->entries[j], err);
                break;
            }
        }
    }
    if (rc < 0)
        singa_ckpt_free(out, 0);
    return rc;
}

static int load_checkpoint(singa_job *job, const singa_ckpt *file, const char *path, singa_err *err)
{
    singa_ckpt aliased, *ck = &aliased;
    if (with_cursor_aliases(job, file, &aliased, err) < 0)
        return -1;
    job_load l = {job, ck, path, -1, 0};
    for (int k = 0; k < job->ninputs; k++) /* a cursor the file lacks stays where it is */
        job->inputs[k]->type->get_cursor(job->inputs[k], job->cursors[k]);
    int rc = singa_ckpt_load(ck, path, each_entry, job, &load_ops, &l, err);
    singa_ckpt_free(&aliased, 0);
    if (rc < 0)
        return -1;
    for (int k = 0; k < job->ninputs && rc == 0; k++)
        rc = job->inputs[k]->type->set_cursor(job->inputs[k], job->cursors[k], err);
    job->step = (int)file->step;
    if (job->best_metric && l.best_step >= 0) {
        job->best_step = (int)l.best_step;
        job->best_value = l.best_value;
    }
    return rc;
}

int singa_job_load_state(void *job, const singa_ckpt *ck, const char *path, singa_err *err)
{
    return load_checkpoint(job, ck, path, err);
}

int singa_job_stale_error(const char *dir, size_t n, uint64_t newest, singa_err *err)
{
    return singa_err_set(err, "checkpoint_path '%s' holds %zu checkpoint%s of an earlier run (newest: step %llu), "
                              "which a fresh run does not replace unasked: resume = true continues them, overwrite = "
                              "true replaces them once this run has written its first checkpoint",
                         dir, n, n == 1 ? "" : "s", (unsigned long long)newest);
}

int job_ckpt_note_stale(singa_job *job, const singa_job_hooks *hooks, singa_err *err)
{
    if (!job->ckpt_dir || job->resume)
        return 0;
    if (singa_ckpt_dir_list(job->ckpt_dir, &job->stale, &job->nstale, err) < 0)
        return -1;
    if (job->nstale && !job->overwrite && !(hooks && hooks->overwrite))
        return singa_job_stale_error(job->ckpt_dir, job->nstale, job->stale[0], err);
    if (job->nstale)
        singa_job_log(hooks, "checkpoint_path '%s' holds %zu checkpoint%s of an earlier run (newest: step %llu); "
                             "this run replaces %s once it writes its first checkpoint (overwrite)",
                      job->ckpt_dir, job->nstale, job->nstale == 1 ? "" : "s", (unsigned long long)job->stale[0],
                      job->nstale == 1 ? "it" : "them");
    return 0;
}

/* Where the lines of a search through checkpoints go: the job's log. */
static singa_ckpt_want logged(const char *path, const singa_job_hooks *hooks)
{
    return (singa_ckpt_want){.path = path, .log = hooks ? hooks->log : NULL, .log_ud = hooks ? hooks->ud : NULL};
}

/* A checkpoint of any topology: the model, and worker 0.0's state, through the job's loader. */
int job_ckpt_resume(singa_job *job, const singa_job_hooks *hooks, singa_err *err)
{
    if (!job->resume)
        return 0;
    singa_ckpt_want want = logged(job->ckpt_dir, hooks);
    want.state = singa_job_load_state;
    want.obj = job;
    singa_ckpt_resumed r;
    int rc = singa_ckpt_resume(&want, &r, err);
    if (rc == 0) {
        char what[512];
        int64_t plain[SINGA_CKPT_TOPOLOGY_LEN] = {0};
        if (singa_ckpt_set_resharded(&r.set, plain, what, sizeof what))
            singa_job_log(hooks, "%s", what);
        singa_job_log(hooks, "resumed from %s (step %d)", r.set.where, job->step);
        singa_job_ckpt_written(job, job->step, r.set.where);
    } else if (rc == 1) {
        singa_job_log(hooks, "resume: no checkpoint in '%s', starting from step 0", job->ckpt_dir);
        rc = 0;
    } else {
        singa_err_prefix(err, "resume: no checkpoint in '%s' verifies; newest: ", job->ckpt_dir);
    }
    singa_ckpt_resumed_free(&r);
    return rc;
}

/* ---- params from earlier jobs: checkpoint_path's entries after the first ---- */

/* The params of checkpoint s a fresh run takes (matched by name; `loaded` marks them), as its
 * log says. */
static int init_from(singa_job *job, const singa_ckpt_set *set, bool *loaded, const singa_job_hooks *hooks,
                     singa_err *err)
{
    char names[512] = "";
    int count = 0;
    const singa_ckpt *ck = &set->model;
    for (size_t i = 0; i < ck->n; i++) {
        const singa_ckpt_entry *e = &ck->entries[i];
        singa_param *p = strncmp(e->name, "param/", 6) == 0 ? singa_params_find(&job->params, e->name + 6) : NULL;
        if (!p || p->owner)
            continue;
        if (!singa_ckpt_entry_fits(e, SINGA_CKPT_F32, p->data.ndim, p->data.shape)) {
            char a[64], b[64];
            singa_ckpt_entry_shape(e, a, sizeof a);
            return singa_err_set(err, "job: checkpoint_path: param '%s' has shape %s in '%s' but %s in this job (layer '%s')",
                                 p->name, e->dtype == SINGA_CKPT_F32 ? a : "(not float32)", set->where,
                                 singa_tensor_shape_str(&p->data, b, sizeof b), p->layer);
        }
        memcpy(p->data.data, e->data, e->bytes);
        loaded[p->id] = true;
        singa_appendf(names, sizeof names, "%s%s", count++ ? ", " : "", p->name);
    }
    if (count)
        singa_job_log(hooks, "checkpoint_path: %d param%s from %s (step %llu): %s", count, count == 1 ? "" : "s",
                      set->where, (unsigned long long)set->step, names);
    else
        singa_job_log(hooks, "checkpoint_path: no param of this job is in %s", set->where);
    return 0;
}

/* A fresh run's params from earlier jobs' checkpoints (any topology), matched by name; later
 * entries win.  Params that share another's value (share_from) take it from their owner. */
static int init_params(singa_job *job, const singa_job_hooks *hooks, singa_err *err)
{
    bool *loaded = calloc((size_t)job->params.n + 1, sizeof *loaded);
    if (!loaded)
        return singa_err_set(err, "out of memory");
    int rc = 0;
    for (size_t k = 1; k <= job->ninit && rc == 0; k++) {
        singa_ckpt_want want = logged(singa_conf_strs_at(job->conf, "checkpoint_path", k), hooks);
        singa_ckpt_resumed r;
        switch (singa_ckpt_resume(&want, &r, err)) {
        case 0:
            rc = init_from(job, &r.set, loaded, hooks, err);
            break;
        case 1:
            rc = singa_err_prefix(err, "job: checkpoint_path: cannot initialise params from ");
            break;
        default:
            rc = singa_err_prefix(err, "job: checkpoint_path: ");
        }
        singa_ckpt_resumed_free(&r);
    }
    char names[512] = "";
    int count = 0;
    for (int i = 0; rc == 0 && i < job->params.n; i++)
        if (!loaded[i] && !job->params.items[i]->owner)
            singa_appendf(names, sizeof names, "%s%s", count++ ? ", " : "", job->params.items[i]->name);
    if (count)
        singa_job_log(hooks, "checkpoint_path: params that keep their init (%d): %s", count, names);
    free(loaded);
    return rc;
}

/* ---- before the first step ---- */

int singa_job_begin(singa_job *job, const singa_job_hooks *hooks, singa_err *err)
{
    return job_ckpt_open(job, err) < 0 || job_ckpt_init(job, hooks, err) < 0 ? -1 : 0;
}

int job_ckpt_open(singa_job *job, singa_err *err)
{
    /* Find an unusable checkpoint_path now, not after hours of training. */
    if (job->ckpt_dir && singa_mkdirs(job->ckpt_dir, err) < 0)
        return singa_err_prefix(err, "job: checkpoint_path: ");
    return 0;
}

int job_ckpt_init(singa_job *job, const singa_job_hooks *hooks, singa_err *err)
{
    return job->ninit && job->step == 0 ? init_params(job, hooks, err) : 0; /* a fresh start */
}

/* SINGA's training loop over one replica's steps, against an exchange (train.h): the local
 * updater or the runtime's worker.  At a step, the host's requests come first, then
 * checkpointing, validation, test, training and display, so a run resumed from step s repeats
 * exactly what the uninterrupted run did. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/trace.h"
#include "train/job_private.h"

static double now(void) { return singa_trace_now(); }

/* One run of the loop: what its steps share. */
typedef struct run {
    singa_job *job;
    const singa_job_hooks *hooks;
    const singa_exchange *x;
    singa_result *res;
    double t0, train_time; /* train_time: of the steps this run trained */
    double warmup;         /* its first step's time: it allocates and fills caches, so no speed counts it */
    int start;
    int batch;     /* images a step: the group's, of which each of its workers with a whole copy reads its rows */
    int last_test; /* the step of the last test (-1: none) */
    bool stopped;  /* by the host */
} run;

/* ---- steering by the host: singa_job_control (the workbench's keys and console) ---- */

/* Acts on the host's requests before step s: a checkpoint now (the exchange writes it or picks
 * the step), holding while paused (polling: a pause is rare and 10 ms of latency is nothing),
 * the lr scale.  Returns 1 when the host asked training to stop, 0 to go on, -1 when a
 * checkpoint fails. */
static int steer(run *r, int s, singa_err *err)
{
    singa_job *job = r->job;
    const singa_job_hooks *hooks = r->hooks;
    singa_job_control *c = hooks ? hooks->control : NULL;
    if (!c)
        return 0;
    /* Distributed, the lead takes the request: the others leave it alone. */
    bool lead = job->split.group == 0 && job->split.index == 0;
    for (bool held = false;;) {
        if (lead && atomic_exchange(&c->checkpoint, false)) {
            if (!job->ckpt_dir)
                singa_job_log(hooks, "checkpoint requested, but the job has no checkpoint_path");
            else if (r->x->checkpoint_asked(r->x->ud, s, err) < 0)
                return -1;
        }
        if (atomic_load(&c->stop)) {
            atomic_store(&c->paused, false);
            return 1;
        }
        if (!atomic_load(&c->pause)) {
            if (held) {
                atomic_store(&c->paused, false);
                singa_job_log(hooks, "resumed at step %d", s);
            }
            break;
        }
        if (!held) {
            held = true;
            atomic_store(&c->paused, true);
            singa_job_log(hooks, "paused before step %d", s);
        }
        nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
    }
    r->x->set_lr_scale(r->x->ud, (float)atomic_load(&c->lr_scale));
    return 0;
}

/* Writes the checkpoint of step s through the exchange: a span of the thread's trace. */
static int save(run *r, int s, singa_err *err)
{
    double t0 = now();
    int rc = r->x->save(r->x->ud, s, err);
    singa_trace_span(r->job->train->trace, "checkpoint", "checkpoint", t0, now());
    return rc;
}

/* Before step s: the host's requests, then the checkpoint of s.  Returns 1 when training stops
 * before s, 0 to go on, -1 on failure. */
static int before_step(run *r, int s, singa_err *err)
{
    singa_job *job = r->job;
    int st = steer(r, s, err);
    if (st < 0)
        return -1;
    r->stopped = r->x->stop(r->x->ud, s, st > 0);
    /* The host's checkpoint is written even at the step the job stops before ("c" on quitting). */
    bool due = r->x->checkpoint_due(r->x->ud, s);
    if (job->ckpt_dir && s > r->start && (due || (!r->stopped && job_fires(&job->checkpoint, s))) &&
        save(r, s, err) < 0)
        return -1;
    if (!r->stopped)
        return 0;
    if (job->split.index == 0 && job->split.group == 0)
        singa_job_log(r->hooks, "stopped before step %d", s);
    return 1;
}

/* ---- evaluation ---- */

static int evaluate(run *r, singa_net *net, int nsteps, int step, singa_metrics *into, singa_err *err)
{
    singa_metrics_reset(into);
    for (int k = 0; k < nsteps; k++) {
        if (singa_net_forward(net, err) < 0)
            return -1;
        singa_metrics_merge(into, &net->metrics);
    }
    if (r->hooks && r->hooks->record) {
        singa_record rec = {.step = step, .phase = net->phase, .metrics = into, .lr = r->x->lr(r->x->ud, step),
                            .elapsed = now() - r->t0};
        r->hooks->record(r->hooks->ud, &rec);
    }
    return 0;
}

/* After an evaluation of the watched phase at step s, with its results m: a better result than
 * any before is checkpointed (checkpoint_keep_best; written after the evaluation, so the file of
 * step s holds it), then on_validation decides whether training goes on. */
static int watch(run *r, int s, const singa_metrics *m, singa_err *err)
{
    singa_job *job = r->job;
    const char *phase = job->watch == SINGA_PHASE_VALIDATION ? "validation" : "test";
    if (job->best_metric) {
        double v = singa_metrics_avg(m, job->best_metric, NAN);
        if (isnan(v) && singa_metrics_avg(m, job->best_metric, 0) == 0)
            return singa_err_set(err, "checkpoint_keep_best = \"%s\": the %s net reports no %s (no loss layer such as kSoftmaxLoss)",
                                 job->best_metric, phase, job->best_metric);
        bool higher = strcmp(job->best_metric, "accuracy") == 0;
        if (job->best_step < 0 || (higher ? v > job->best_value : v < job->best_value)) {
            job->best_step = s;
            job->best_value = v;
            char path[4096];
            singa_ckpt_path(path, sizeof path, job->ckpt_dir, (uint64_t)s);
            if (save(r, s, err) < 0)
                return -1;
            singa_job_log(r->hooks, "best so far: %s (step %d, %s %s %.4f)", path, s, phase, job->best_metric, v);
        }
    }
    if (!job->on_eval)
        return 0;
    singa_value fields[2 + SINGA_METRICS_MAX];
    const char *names[2 + SINGA_METRICS_MAX] = {"step", "phase"};
    fields[0] = (singa_value){.kind = SINGA_VALUE_INT, .num = s};
    fields[1] = (singa_value){.kind = SINGA_VALUE_STR, .str = phase};
    int n = 2;
    for (int i = 0; i < m->n; i++) {
        names[n] = m->name[i];
        fields[n++] = (singa_value){.kind = SINGA_VALUE_NUM, .num = singa_metrics_avg(m, m->name[i], 0)};
    }
    singa_value v = {.kind = SINGA_VALUE_FIELDS, .n = n, .fields = fields, .names = names};
    char word[64];
    if (!job->on_eval->call_text)
        return singa_err_set(err, "on_validation: this host cannot call it");
    if (job->on_eval->call_text(job->on_eval, &v, 1, word, sizeof word, err) < 0)
        return singa_err_prefix(err, "on_validation at step %d: ", s);
    if (strcmp(word, "stop") == 0) {
        job->early = true;
        singa_job_log(r->hooks, "on_validation stopped training at step %d", s);
    } else if (word[0]) {
        return singa_err_set(err, "on_validation at step %d returned \"%s\": return \"stop\" to end training, or nothing to go on",
                             s, word);
    }
    return 0;
}

/* The validation and the test of step s, when they fire. */
static int evaluations(run *r, int s, singa_err *err)
{
    singa_job *job = r->job;
    singa_result *res = r->res;
    bool mine = !r->x->evaluates || r->x->evaluates(r->x->ud);
    bool val = mine && job->val_net && job_fires(&job->validate, s), test = mine && job->test_net && job_fires(&job->test, s);
    if ((val || test) && r->x->before_eval && r->x->before_eval(r->x->ud, err) < 0)
        return singa_err_prefix(err, "before the evaluation at step %d: ", s);
    if (val) {
        if (evaluate(r, job->val_net, job->validate.steps, s, &res->validation, err) < 0)
            return singa_err_prefix(err, "validation at step %d: ", s);
        res->has_validation = true;
        if (job->watch == SINGA_PHASE_VALIDATION && watch(r, s, &res->validation, err) < 0)
            return -1;
    }
    if (test) {
        if (evaluate(r, job->test_net, job->test.steps, s, &res->test, err) < 0)
            return singa_err_prefix(err, "test at step %d: ", s);
        res->has_test = true;
        r->last_test = s;
        if (job->watch == SINGA_PHASE_TEST && watch(r, s, &res->test, err) < 0)
            return -1;
    }
    return 0;
}

/* ---- a training step and its records ---- */

/* Trains step s; `te` gets when it ended. */
static int train_step(run *r, int s, double *te, singa_err *err)
{
    singa_job *job = r->job;
    const singa_exchange *x = r->x;
    double ts = now();
    if (x->before_backward(x->ud, s, err) < 0 || job->tob->run(job->train, job->tob_conf, err) < 0 ||
        x->after_backward(x->ud, s, err) < 0)
        return singa_err_prefix(err, "training step %d: ", s);
    if (job->stop_nonfinite && job_check_finite(job, s, err) < 0)
        return -1;
    job->step = s + 1;
    *te = now();
    r->train_time += *te - ts;
    singa_metrics_merge(&job->window.metrics, &job->train->metrics);
    job->window.steps++;
    if (s == r->start) {
        r->warmup = *te - ts;
        return 0;
    }
    job->window_seconds += *te - ts;
    job->window_timed++;
    return 0;
}

/* The host's record of step s, and the display window's when it fires. */
static void report(run *r, int s, double te)
{
    singa_job *job = r->job;
    const singa_job_hooks *hooks = r->hooks;
    int batch = r->batch;
    /* Speeds leave out the warm-up step; after it alone there is none (as Caffe's iteration 0). */
    double window_ips = job->window_timed ? (double)batch * job->window_timed / job->window_seconds : NAN;
    if (hooks && hooks->step) {
        double ips = s > r->start ? (double)batch * (s - r->start) / (r->train_time - r->warmup) : NAN;
        singa_record rec = {.step = s + 1, .phase = SINGA_PHASE_TRAIN, .group = job->split.group,
                            .metrics = &job->window.metrics, .images_per_sec = ips, .lr = r->x->lr(r->x->ud, s),
                            .elapsed = te - r->t0, .total_steps = job->train_steps,
                            .eta = (double)(job->train_steps - s - 1) * batch / ips};
        hooks->step(hooks->ud, &rec);
    }
    if (!job_fires(&job->disp, s))
        return;
    if (hooks && hooks->record) {
        singa_record rec = {.step = s, .phase = SINGA_PHASE_TRAIN, .group = job->split.group, .metrics = &job->window.metrics,
                            .images_per_sec = window_ips, .lr = r->x->lr(r->x->ud, s), .elapsed = te - r->t0};
        hooks->record(hooks->ud, &rec);
    }
    r->res->train = job->window.metrics;
    if (job->window_timed)
        r->res->images_per_sec = window_ips;
    memset(&job->window, 0, sizeof job->window);
    job->window_seconds = 0;
    job->window_timed = 0;
}

/* ---- the end ---- */

/* After the last step: the final checkpoint, the final test, the result. */
static int finish(run *r, singa_err *err)
{
    singa_job *job = r->job;
    singa_result *res = r->res;
    if (job->window.steps > 0)
        res->train = job->window.metrics;
    bool final = !r->stopped && job->ckpt_dir && job->step > r->start &&
                 !(job->early && job->ckpt_seen[0][0] && job->ckpt_seen_step[0] == job->step); /* written at it */
    double t0 = now();
    if (r->x->finish(r->x->ud, final ? job->step : -1, err) < 0)
        return -1;
    if (final)
        singa_trace_span(job->train->trace, "checkpoint", "finish (final checkpoint)", t0, now());
    if (!r->stopped && job->test_net && r->last_test != job->step && (!r->x->evaluates || r->x->evaluates(r->x->ud))) {
        if (evaluate(r, job->test_net, job->test.steps, job->step, &res->test, err) < 0)
            return singa_err_prefix(err, "final test: ");
        res->has_test = true;
    }
    res->steps = job->step;
    res->seconds = now() - r->t0;
    res->stopped_early = job->early;
    res->best_step = job->best_step;
    res->best_value = job->best_value;
    if (job->best_step >= 0) {
        singa_ckpt_path(res->best_path, sizeof res->best_path, job->ckpt_dir, (uint64_t)job->best_step);
        singa_job_log(r->hooks, "best checkpoint: %s (step %d, %s %s %.4f)", res->best_path, job->best_step,
                      job->watch == SINGA_PHASE_VALIDATION ? "validation" : "test", job->best_metric, job->best_value);
    }
    return 0;
}

int singa_job_loop(singa_job *job, const singa_job_hooks *hooks, const singa_exchange *x, singa_result *res,
                   singa_err *err)
{
    run r = {.job = job, .hooks = hooks, .x = x, .res = res, .t0 = now(), .start = job->step,
             .batch = singa_net_batchsize(job->train) * job->split.count, .last_test = -1};
    for (int s = job->step; s < job->train_steps; s++) {
        singa_job_trace_step(job, s);
        int st = before_step(&r, s, err);
        if (st < 0)
            return -1;
        if (st > 0)
            break;
        if (evaluations(&r, s, err) < 0)
            return -1;
        if (job->early)
            break;
        double te = 0;
        if (train_step(&r, s, &te, err) < 0)
            return -1;
        report(&r, s, te);
    }
    return finish(&r, err);
}

/* Steering a job through singa_job_control (what the workbench's keys and console do): stop,
 * a checkpoint now, pause and resume from another thread, the lr scale; and a control left at
 * its defaults changes nothing, bit for bit.  The same requests reach every worker and server of
 * a distributed job. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "singa/singa.h"
#include "jobconf.h"
#include "tap.h"

#define DIR "t/6010-job-control.tmp"

static singa_conf *job_conf(int steps, bool ckpt, bool dist)
{
    singa_conf *job = singa_conf_new(SINGA_CONF_TABLE);
    singa_conf_add(job, "name", str("ctl"));
    singa_conf_add(job, "seed", num(1));
    singa_conf_add(job, "train_steps", num(steps));
    singa_conf_add(job, "disp_freq", num(50));
    if (ckpt)
        singa_conf_add(job, "checkpoint_path", str(DIR "/ckpt"));
    singa_conf_add(job, "updater", fixed_updater("kSGD", 0.1));
    singa_conf_add(job, "neuralnet", softmax_net(DIR));
    if (dist) { /* two asynchronous groups of two synchronous workers */
        singa_conf *cluster = singa_conf_new(SINGA_CONF_TABLE);
        singa_conf_add(cluster, "nworker_groups", num(2));
        singa_conf_add(cluster, "nworkers_per_group", num(2));
        singa_conf_add(cluster, "nservers_per_group", num(2));
        singa_conf_add(job, "cluster", cluster);
    }
    return job;
}

/* What the hooks saw, and what they do at which step. */
typedef struct watch {
    singa_job_control *ctl;
    int steps_seen;
    atomic_int last_step; /* read by the resumer thread */
    int stop_at, ckpt_at, scale_at, pause_at;
    double lr_at[512];
    int ckpt_calls, ckpt_step;
    char ckpt_path[512];
    pthread_t resumer;
    bool resumer_started;
    /* what the resumer saw while the job was paused */
    bool saw_paused;
    int step_while_paused_before, step_while_paused_after;
} watch;

static void sleep_ms(int ms) { nanosleep(&(struct timespec){.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000}, NULL); }

static void *resume_later(void *arg)
{
    watch *w = arg;
    for (int i = 0; i < 200 && !atomic_load(&w->ctl->paused); i++)
        sleep_ms(5);
    w->saw_paused = atomic_load(&w->ctl->paused);
    sleep_ms(50); /* every other worker finishes its step */
    w->step_while_paused_before = atomic_load(&w->last_step);
    sleep_ms(100);
    w->step_while_paused_after = atomic_load(&w->last_step);
    atomic_store(&w->ctl->pause, false);
    return NULL;
}

static void on_step(void *ud, const singa_record *r)
{
    watch *w = ud;
    w->steps_seen++;
    atomic_store(&w->last_step, r->step);
    if (r->step < 512)
        w->lr_at[r->step] = r->lr;
    if (!w->ctl)
        return;
    if (r->step == w->stop_at && r->group == 0) /* group 1 may run far ahead of group 0 */
        atomic_store(&w->ctl->stop, true);
    if (r->step == w->ckpt_at)
        atomic_store(&w->ctl->checkpoint, true);
    if (r->step == w->scale_at)
        atomic_store(&w->ctl->lr_scale, 0.5);
    if (r->step == w->pause_at && !w->resumer_started) { /* once: each group of a distributed job gets here */
        atomic_store(&w->ctl->pause, true);
        w->resumer_started = pthread_create(&w->resumer, NULL, resume_later, w) == 0;
    }
}

static void on_checkpoint(void *ud, int step, const char *path)
{
    watch *w = ud;
    w->ckpt_calls++;
    w->ckpt_step = step;
    snprintf(w->ckpt_path, sizeof w->ckpt_path, "%s", path);
}

/* Runs a job; *wsum (if not NULL) gets the sum of squares of its params at the end. */
static int run(int steps, bool ckpt, bool dist, watch *w, singa_result *res, double *wsum)
{
    singa_conf *conf = job_conf(steps, ckpt, dist);
    singa_registry *reg = singa_registry_new();
    singa_job *job;
    singa_err err = {{0}};
    int rc = singa_job_create(&job, conf, reg, &err);
    if (rc == 0) {
        singa_job_hooks hooks = {.ud = w, .step = on_step, .checkpoint = on_checkpoint, .control = w->ctl};
        rc = singa_job_run(job, &hooks, res, &err);
        const singa_params *ps = singa_job_train_net(job)->params;
        for (int i = 0; wsum && i < ps->n; i++)
            for (size_t k = 0; k < ps->items[i]->data.size; k++)
                *wsum += (double)ps->items[i]->data.data[k] * ps->items[i]->data.data[k];
        singa_job_free(job);
    }
    if (rc < 0)
        printf("# %s\n", err.msg);
    if (w->resumer_started)
        pthread_join(w->resumer, NULL);
    singa_registry_free(reg);
    singa_conf_free(conf);
    return rc;
}

int main(void)
{
    if (system("rm -rf " DIR " && mkdir -p " DIR) != 0)
        return 1;
    write_data(DIR);
    singa_job_control ctl;
    singa_result res;

    /* defaults change nothing */
    watch plain = {.stop_at = -1, .ckpt_at = -1, .scale_at = -1, .pause_at = -1};
    singa_result plain_res;
    ok(run(200, false, false, &plain, &plain_res, NULL) == 0 && plain_res.steps == 200, "a job without a control runs");
    singa_job_control_init(&ctl);
    watch idle = {.ctl = &ctl, .stop_at = -1, .ckpt_at = -1, .scale_at = -1, .pause_at = -1};
    ok(run(200, false, false, &idle, &res, NULL) == 0 && res.steps == 200, "with a control left at its defaults too");
    ok(singa_metrics_avg(&res.train, "loss", -1) == singa_metrics_avg(&plain_res.train, "loss", -2),
       "... with bitwise the same loss (%.9g)", singa_metrics_avg(&res.train, "loss", -1));

    /* stop, after a checkpoint asked for earlier */
    singa_job_control_init(&ctl);
    watch w = {.ctl = &ctl, .stop_at = 120, .ckpt_at = 50, .scale_at = -1, .pause_at = -1};
    ok(run(400, true, false, &w, &res, NULL) == 0, "a stopped job returns success");
    ok(res.steps == 120 && atomic_load(&w.last_step) == 120, "stop ends training before the next step (%d steps)", res.steps);
    char path[256];
    snprintf(path, sizeof path, DIR "/ckpt/step%09d.ckpt", 50);
    ok(access(path, R_OK) == 0 && w.ckpt_calls == 1 && w.ckpt_step == 50 && strcmp(w.ckpt_path, path) == 0,
       "a checkpoint request writes one before the next step and reports it (%s)", w.ckpt_path);
    ok(!atomic_load(&ctl.checkpoint), "the request is cleared once done");
    snprintf(path, sizeof path, DIR "/ckpt/step%09d.ckpt", 120);
    ok(access(path, R_OK) != 0, "a stop skips the final checkpoint");

    /* a checkpoint without checkpoint_path is refused in the log, not an error */
    singa_job_control_init(&ctl);
    watch nock = {.ctl = &ctl, .stop_at = -1, .ckpt_at = 10, .scale_at = -1, .pause_at = -1};
    ok(run(30, false, false, &nock, &res, NULL) == 0 && res.steps == 30 && nock.ckpt_calls == 0,
       "a checkpoint request for a job without checkpoint_path does not stop it");

    /* lr scale */
    singa_job_control_init(&ctl);
    watch sc = {.ctl = &ctl, .stop_at = -1, .ckpt_at = -1, .scale_at = 10, .pause_at = -1};
    ok(run(20, false, false, &sc, &res, NULL) == 0, "a job with an lr scale runs");
    ok(fabs(sc.lr_at[10] - 0.1) < 1e-6 && fabs(sc.lr_at[11] - 0.05) < 1e-6 && fabs(sc.lr_at[20] - 0.05) < 1e-6,
       "lr_scale 0.5 halves the rate from the next step on (%g, %g)", sc.lr_at[10], sc.lr_at[11]);

    /* pause from one thread, resume from another */
    singa_job_control_init(&ctl);
    watch pw = {.ctl = &ctl, .stop_at = -1, .ckpt_at = -1, .scale_at = -1, .pause_at = 30};
    ok(run(60, false, false, &pw, &res, NULL) == 0 && res.steps == 60, "a paused and resumed job runs to its end");
    ok(pw.saw_paused, "the loop says it holds (paused)");
    ok(pw.step_while_paused_before == 30 && pw.step_while_paused_after == 30,
       "no step runs while paused (%d, then %d)", pw.step_while_paused_before, pw.step_while_paused_after);
    ok(!atomic_load(&ctl.paused), "after resuming it no longer holds");

    /* distributed: every worker holds, all stop together, the servers apply the scale */
    alarm(120); /* a group waiting forever for a worker that stopped alone */
    singa_job_control_init(&ctl);
    watch dw = {.ctl = &ctl, .stop_at = -1, .ckpt_at = -1, .scale_at = -1, .pause_at = 20};
    ok(run(40, false, true, &dw, &res, NULL) == 0 && res.steps == 40, "a distributed job paused and resumed runs to its end");
    ok(dw.saw_paused && dw.step_while_paused_before == dw.step_while_paused_after,
       "no worker steps while paused (%d, then %d)", dw.step_while_paused_before, dw.step_while_paused_after);
    singa_job_control_init(&ctl);
    watch ds = {.ctl = &ctl, .stop_at = 30, .ckpt_at = -1, .scale_at = -1, .pause_at = -1};
    ok(run(400, false, true, &ds, &res, NULL) == 0, "a stopped distributed job returns success");
    ok(res.steps >= 30 && res.steps <= 32, "group 0 stops within a step of the request (%d steps)", res.steps);
    double trained = 0, before = 0, after = 0;
    singa_job_control_init(&ctl);
    watch d0 = {.ctl = &ctl, .stop_at = -1, .ckpt_at = -1, .scale_at = -1, .pause_at = -1};
    ok(run(30, false, true, &d0, &res, &trained) == 0, "a distributed job with a control runs");
    atomic_store(&ctl.lr_scale, 0.0);
    ok(run(2, false, true, &d0, &res, &before) == 0 && run(30, false, true, &d0, &res, &after) == 0 && res.steps == 30,
       "with lr_scale 0 too");
    ok(before == after && before != trained, "lr_scale 0 leaves the servers' params as they were (%.9g, %.9g; trained %.9g)",
       before, after, trained);
    alarm(0);

    if (tap_failed == 0 && system("rm -rf " DIR) != 0)
        return 1;
    return done_testing();
}

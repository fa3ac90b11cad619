/* The local exchange: a plain job's updater changes the params in this thread after each
 * backward pass, and checkpoints are whole files of this job ("stepS.ckpt"). */
#include "train/job_private.h"

typedef struct local {
    singa_job *job;
    const singa_job_hooks *hooks;
} local;

static int before_backward(void *ud, int step, singa_err *err)
{
    return singa_updater_prepare(((local *)ud)->job->upd, step, err);
}

static int after_backward(void *ud, int step, singa_err *err)
{
    return singa_updater_apply(((local *)ud)->job->upd, step, err);
}

static float lr(void *ud, int step) { return singa_updater_lr(((local *)ud)->job->upd, step); }

static void set_lr_scale(void *ud, float scale) { singa_updater_set_lr_scale(((local *)ud)->job->upd, scale); }

static bool stop(void *ud, int step, bool requested) { return requested; }

static bool checkpoint_due(void *ud, int step) { return false; }

/* Also the host's checkpoint, written at once (even while the job is paused). */
static int save(void *ud, int step, singa_err *err)
{
    local *l = ud;
    return job_ckpt_save(l->job, step, l->hooks, err);
}

static int finish(void *ud, int step, singa_err *err) { return step >= 0 ? save(ud, step, err) : 0; }

int singa_job_train_local(singa_job *job, const singa_job_hooks *hooks, singa_result *res, singa_err *err)
{
    local l = {job, hooks};
    singa_exchange x = {.ud = &l, .before_backward = before_backward, .after_backward = after_backward, .lr = lr,
                        .set_lr_scale = set_lr_scale, .stop = stop, .checkpoint_asked = save,
                        .checkpoint_due = checkpoint_due, .save = save, .finish = finish};
    if (job_ckpt_open(job, err) < 0 || job_ckpt_resume(job, hooks, err) < 0 || job_ckpt_init(job, hooks, err) < 0 ||
        job_ckpt_note_stale(job, hooks, err) < 0)
        return -1;
    return singa_job_loop(job, hooks, &x, res, err);
}

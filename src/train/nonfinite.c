/* stop_on_nonfinite: a loss that is not finite stops training, naming the param that went bad
 * and the last good checkpoint. */
#include <math.h>
#include <stdio.h>

#include "train/job_private.h"

/* Names the first param whose value or gradient holds a NaN or an infinity, in `where`; returns
 * whether there is one.  A full sweep: run on the way out and before a checkpoint only. */
bool job_find_nonfinite(const singa_job *job, char *where, size_t len)
{
    for (int i = 0; i < job->params.n; i++) {
        const singa_param *p = job->params.items[i];
        const singa_tensor *t[2] = {&p->data, &p->grad};
        for (int k = 0; k < 2; k++)
            for (size_t e = 0; t[k]->data && e < t[k]->size; e++)
                if (!isfinite(t[k]->data[e])) {
                    snprintf(where, len, "param '%s' (layer '%s') has a %s of %s at element %zu", p->name, p->layer,
                             k ? "gradient" : "value", isnan(t[k]->data[e]) ? "NaN" : t[k]->data[e] > 0 ? "+inf" : "-inf", e);
                    return true;
                }
    }
    return false;
}

/* The error of a run that diverged at step s, after `what`. */
int job_nonfinite_error(const singa_job *job, int s, const char *what, const char *where, singa_err *err)
{
    /* A checkpoint of step s holds the values whose loss at s was not finite. */
    int k = job->ckpt_seen[0][0] && job->ckpt_seen_step[0] < s ? 0 : 1;
    return singa_err_set(err, "training step %d: %s; %s; the last good checkpoint is %s "
                              "(stop_on_nonfinite = false trains on regardless)",
                         s, what, where, job->ckpt_seen[k][0] ? job->ckpt_seen[k] : "none (this run has none yet)");
}

/* After training step s: a metric of the loss layers (the loss, accuracy...) that is not finite
 * stops the job.  Only those few numbers are looked at every step; a param that went bad shows in
 * the next step's loss, and the search for it runs once, on the way out. */
int job_check_finite(singa_job *job, int s, singa_err *err)
{
    const singa_metrics *m = &job->train->metrics;
    for (int i = 0; i < m->n; i++)
        if (!isfinite(m->sum[i])) {
            char what[128], where[512] = "no param or gradient holds a non-finite value (the forward pass overflowed)";
            snprintf(what, sizeof what, "the %s is %s", m->name[i], isnan(m->sum[i]) ? "NaN" : m->sum[i] > 0 ? "+inf" : "-inf");
            job_find_nonfinite(job, where, sizeof where);
            return job_nonfinite_error(job, s, what, where, err);
        }
    return 0;
}

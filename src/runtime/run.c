/* Running a job, the runtime on top of train/: a job of one worker and one server trains in
 * this thread through the local exchange; a distributed one through the runtime's workers,
 * servers and stub (process.c).  Either way with its trace, when the job asks for one. */
#include <string.h>

#include "runtime/runtime.h"

/* The job's trace (fields trace and trace_steps, checked when the job was made), or NULL. */
static int trace_of(const singa_job *job, singa_trace **out, singa_err *err)
{
    const singa_conf *c = singa_job_conf(job);
    const char *path = singa_conf_str(c, "trace", NULL), *steps = singa_conf_str(c, "trace_steps", NULL);
    int from = -1, to = -1;
    *out = NULL;
    if (!path)
        return 0;
    if (steps && singa_trace_parse_steps(steps, &from, &to, err) < 0)
        return -1;
    return (*out = singa_trace_new(path, from, to)) ? 0 : singa_err_set(err, "out of memory");
}

static int train_local(singa_job *job, const singa_job_hooks *hooks, singa_trace *trace, bool alone,
                       singa_result *res, singa_err *err)
{
    rt_launch launch; /* a plain job in several processes would train several times */
    if (rt_launch_read(&launch, singa_job_cluster(job), alone, err) < 0)
        return -1;
    singa_job_set_trace(job, trace, "worker 0.0");
    int rc = singa_job_train_local(job, hooks, res, err);
    singa_job_set_trace(job, NULL, NULL);
    singa_err terr;
    if (trace && singa_trace_write(trace, 0, 1, 0, 0, &terr) < 0 && hooks && hooks->log)
        hooks->log(hooks->ud, terr.msg);
    return rc;
}

static int run(singa_job *job, const singa_job_hooks *hooks, bool alone, singa_result *res, singa_err *err)
{
    memset(res, 0, sizeof *res);
    singa_blas_set_threads(singa_job_blas_threads(job));
    singa_trace *trace;
    if (trace_of(job, &trace, err) < 0)
        return -1;
    int rc = singa_cluster_distributed(singa_job_cluster(job)) ? singa_runtime_run(job, hooks, trace, alone, res, err)
                                                               : train_local(job, hooks, trace, alone, res, err);
    singa_trace_free(trace);
    return rc;
}

int singa_job_run(singa_job *job, const singa_job_hooks *hooks, singa_result *res, singa_err *err)
{
    return run(job, hooks, false, res, err);
}

int singa_job_run_alone(singa_job *job, const singa_job_hooks *hooks, singa_result *res, singa_err *err)
{
    return run(job, hooks, true, res, err);
}

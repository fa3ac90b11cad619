/* Running a job, the runtime on top of train/: a job of one worker and one server trains in
 * this thread through the local exchange; a distributed one through the runtime's workers,
 * servers and stub (process.c). */
#include <string.h>

#include "runtime/runtime.h"

int singa_job_run(singa_job *job, const singa_job_hooks *hooks, singa_result *res, singa_err *err)
{
    memset(res, 0, sizeof *res);
    singa_blas_set_threads(singa_job_blas_threads(job));
    if (singa_cluster_distributed(singa_job_cluster(job)))
        return singa_runtime_run(job, hooks, res, err);
    rt_launch launch; /* a plain job in several processes would train several times */
    if (rt_launch_read(&launch, singa_job_cluster(job), err) < 0)
        return -1;
    return singa_job_train_local(job, hooks, res, err);
}

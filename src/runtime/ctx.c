/* What every thread of the runtime shares of its process (ctx.h): the first failure, the steps
 * the groups stop before, the host's checkpoint step, the sockets' send and receive, the log and
 * rank 0's host records, the buffers cluster.compress needs.  It calls nothing else of the
 * runtime but the wire (msg.c). */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "runtime/runtime.h"

void rt_fail_as(rt_ctx *rt, const singa_err *err, bool lost)
{
    pthread_mutex_lock(&rt->lock);
    if (!rt->failed) {
        rt->failed = true;
        rt->lost = lost;
        rt->err = *err;
    }
    pthread_mutex_unlock(&rt->lock);
    singa_job_abandon(rt->job); /* a thread stuck in a host function has to give up */
}

void rt_fail(rt_ctx *rt, const singa_err *err) { rt_fail_as(rt, err, false); }

bool rt_failed(rt_ctx *rt)
{
    pthread_mutex_lock(&rt->lock);
    bool failed = rt->failed;
    pthread_mutex_unlock(&rt->lock);
    return failed;
}

void rt_stop_before(rt_ctx *rt, int g, int step)
{
    int at = atomic_load(&rt->stop_step[g]);
    while (step < at && !atomic_compare_exchange_weak(&rt->stop_step[g], &at, step))
        ;
}

bool rt_last_step(const rt_ctx *rt, int g, int step) { return step + 1 >= atomic_load(&rt->stop_step[g]); }

void rt_ckpt_at(rt_ctx *rt, int step)
{
    int at = atomic_load(&rt->ckpt_step);
    while (step > at && !atomic_compare_exchange_weak(&rt->ckpt_step, &at, step))
        ;
}

bool rt_ckpt_due(const rt_ctx *rt, int step) { return step == atomic_load(&rt->ckpt_step); }

int rt_send(void *sock, const msg *m, const void *payload, size_t nbytes)
{
    return msg_send(sock, NULL, m, payload, nbytes);
}

int rt_recv(rt_ctx *rt, void *sock, msg *m, zmq_msg_t *payload)
{
    atomic_fetch_sub(&rt->busy, 1);
    int rc = msg_recv(sock, false, NULL, 0, m, payload);
    atomic_fetch_add(&rt->busy, 1);
    atomic_fetch_add_explicit(&rt->progress, 1, memory_order_relaxed);
    return rc;
}

/* A line for the workspace's log, shown by rank 0's host when `show`, by every host when `all`. */
void rt_log_line(rt_ctx *rt, const char *line, bool show, bool all)
{
    pthread_mutex_lock(&rt->lock);
    if (rt->log) {
        time_t t = time(NULL);
        char when[32];
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime(&t));
        fprintf(rt->log, "%s %s\n", when, line);
        fflush(rt->log);
    }
    if (show && (all || rt->rank == rt_coordinator(rt)) && rt->hooks->log)
        rt->hooks->log(rt->hooks->ud, line);
    pthread_mutex_unlock(&rt->lock);
}

void rt_log(rt_ctx *rt, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    rt_log_line(rt, line, true, false);
}

void rt_record(rt_ctx *rt, const singa_record *r, bool step)
{
    pthread_mutex_lock(&rt->lock);
    void (*hook)(void *, const singa_record *) = step ? rt->hooks->step : rt->hooks->record;
    if (hook)
        hook(rt->hooks->ud, r);
    pthread_mutex_unlock(&rt->lock);
}

/* cluster.compress: buffers for the longest slice's floats and for its longest encoding. */
int rt_compress_buffers(const rt_ctx *rt, float **unpacked, uint8_t **packed)
{
    size_t n = 1;
    for (int k = 0; k < rt->nslices; k++)
        n = rt->slices[k].len > n ? rt->slices[k].len : n;
    *unpacked = malloc(n * sizeof **unpacked);
    /* the most any kind takes: top-k of all (and the lr scale after an update's pairs, values =
     * "update"); PowerSGD's, fp16 and the scale (replica_update.h) */
    *packed = malloc(rt->c->compress.kind == SINGA_COMPRESS_POWERSGD ? 2 * n + 4 : 8 * n + 4);
    return *unpacked && *packed ? 0 : -1;
}

/* <workspace>/rank<r>.log, appended to, its folders made as needed. */
int rt_log_open(rt_ctx *rt, singa_err *err)
{
    char path[PATH_MAX];
    if (!rt->c->workspace)
        return 0;
    if (snprintf(path, sizeof path, "%s/rank%d.log", rt->c->workspace, rt->rank) >= (int)sizeof path)
        return singa_err_set(err, "cluster: workspace '%s' is too long a path", rt->c->workspace);
    for (char *p = path + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(path, 0777) < 0 && errno != EEXIST)
                return singa_err_set(err, "cluster: cannot make the workspace folder %s: %s", path, strerror(errno));
            *p = '/';
        }
    if (!(rt->log = fopen(path, "a")))
        return singa_err_set(err, "cluster: cannot write the log %s: %s", path, strerror(errno));
    return 0;
}

/* A worker: its job's training loop, with the local updater replaced by messages.  Each param's
 * gradient leaves for the stub as soon as the backward pass reports it final (layers compute a
 * source's gradient before their params', so nothing reads the value after that), the rest
 * after the pass; then the worker waits until every param is fresh (SINGA's Collect). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dist/dist.h"
#include "singa/tensor.h"

static msg_addr self(const dist_worker *w)
{
    return (msg_addr){ENT_WORKER, (uint16_t)w->group, (uint16_t)w->id, (uint16_t)w->rt->rank};
}

static void send_update(dist_worker *w, int k)
{
    singa_param *p = w->params[k];
    msg m = {.type = MSG_UPDATE, .flags = MSG_F_PTR, .src = self(w),
             .dst = {ENT_STUB, (uint16_t)w->group, 0, (uint16_t)w->rt->rank}, .slice = k, .step = w->step_sent,
             .count = 1, .ptr = (uint64_t)(uintptr_t)p->grad.data};
    dist_send(w->sock, &m, NULL, 0);
    w->sent[k] = true;
}

static void grad_ready(void *ud, singa_param *p, size_t begin, size_t end)
{
    dist_worker *w = ud;
    if (begin != 0 || end != p->data.size || w->step_sent < 0)
        return;
    for (int k = 0; k < w->rt->nparams; k++)
        if (w->params[k] == p && !w->sent[k]) {
            send_update(w, k);
            return;
        }
}

/* Waits for a message of `type` (counting it in *n when given) until *n reaches 0; a stop
 * ends the wait with the reason. */
static int wait_for(dist_worker *w, int type, int *n, singa_err *err)
{
    do {
        msg m;
        zmq_msg_t payload;
        int rc = msg_recv(w->sock, false, NULL, 0, &m, &payload);
        if (rc < 0) {
            zmq_msg_close(&payload);
            return singa_err_set(err, "worker %d.%d: %s", w->group, w->id, zmq_strerror(zmq_errno()));
        }
        if (rc == 0 && m.type == MSG_STOP) {
            w->stopped = true;
            singa_err_set(err, "worker %d.%d stopped: %.*s", w->group, w->id, (int)zmq_msg_size(&payload),
                          zmq_msg_size(&payload) ? (const char *)zmq_msg_data(&payload) : "another thread failed");
            zmq_msg_close(&payload);
            return -1;
        }
        if (rc == 0 && m.type == type)
            (*n)--;
        zmq_msg_close(&payload);
    } while (*n > 0);
    return 0;
}

/* After the backward pass: gradients of params that share their value (an unrolled layer's
 * copies) are averaged into the owner's and sent with the rest; then every param's answer. */
static int after_backward(void *ud, int step, singa_err *err)
{
    dist_worker *w = ud;
    singa_params *ps = singa_job_params(w->job);
    for (int k = 0; k < w->rt->nparams; k++) {
        if (w->sent[k])
            continue;
        singa_param *p = w->params[k];
        if (p->nsharers) {
            int n = 1;
            for (int i = 0; i < ps->n; i++) {
                singa_param *q = ps->items[i];
                if (q->owner == p && q->trained) {
                    singa_tensor_axpy(1.0f, &q->grad, &p->grad);
                    n++;
                }
            }
            singa_tensor_scale(&p->grad, 1.0f / (float)n);
        }
        send_update(w, k);
    }
    int left = w->rt->nparams;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = wait_for(w, MSG_UPDATE_REPLY, &left, err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    char peer[32];
    snprintf(peer, sizeof peer, "worker %d.%d", w->group, w->id);
    dist_stats_count(w->rt->stats, msg_type_name(MSG_UPDATE_REPLY), peer, true, 0, 0,
                     (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    memset(w->sent, 0, (size_t)w->rt->nparams * sizeof *w->sent);
    w->step_sent = step + 1;
    return rc;
}

/* Every worker says it is done; worker 0 of group 0 then waits for the newest values, which the
 * stub fetches once every worker is done. */
static int after_training(void *ud, singa_err *err)
{
    dist_worker *w = ud;
    int one = 1;
    msg m = {.type = MSG_DONE, .src = self(w), .dst = {ENT_STUB, 0, 0, (uint16_t)w->rt->rank}};
    dist_send(w->sock, &m, NULL, 0);
    return w->group == 0 && w->id == 0 ? wait_for(w, MSG_READY, &one, err) : 0;
}

/* This worker's own file of checkpoint `step`. */
static int save_state(void *ud, int step, singa_ckpt *c, singa_err *err)
{
    dist_worker *w = ud;
    return dist_ckpt_write(w->rt, c, SINGA_CKPT_WORKER, w->group, w->id, err);
}

/* Worker 0.0: every server writes its shard of checkpoint `step`, wherever it lives; the values
 * it writes are those of `step` in a synchronous job (no update of `step` is applied before this
 * worker's gradients of it leave), a snapshot in an asynchronous one.  Rank 0's stub answers for
 * a server whose process was lost. */
static int save_servers(void *ud, int step, bool *complete, singa_err *err)
{
    dist_worker *w = ud;
    dist_rt *rt = w->rt;
    int per = rt->c->nservers_per_group, n = rt->c->nserver_groups * per, left = n;
    bool *got = calloc((size_t)n, sizeof *got);
    if (!got)
        return singa_err_set(err, "out of memory");
    for (int i = 0; i < n; i++) {
        int g = i / per, j = i % per;
        msg m = {.type = MSG_CKPT, .src = self(w),
                 .dst = {ENT_SERVER, (uint16_t)g, (uint16_t)j, (uint16_t)dist_server_proc(rt, g, j)}, .step = step};
        dist_send(w->sock, &m, NULL, 0);
    }
    *complete = true;
    int rc = 0;
    while (left > 0 && rc == 0) {
        msg m;
        zmq_msg_t payload;
        int got_rc = msg_recv(w->sock, false, NULL, 0, &m, &payload);
        if (got_rc < 0) {
            rc = singa_err_set(err, "worker %d.%d: %s", w->group, w->id, zmq_strerror(zmq_errno()));
        } else if (got_rc == 0 && m.type == MSG_STOP) {
            w->stopped = true;
            rc = singa_err_set(err, "worker %d.%d stopped: %.*s", w->group, w->id, (int)zmq_msg_size(&payload),
                               zmq_msg_size(&payload) ? (const char *)zmq_msg_data(&payload) : "another thread failed");
        } else if (got_rc == 0 && m.type == MSG_CKPT_REPLY && m.step == step && m.slice >= 0 && m.slice < n &&
                   !got[m.slice]) {
            got[m.slice] = true;
            left--;
            if (m.count) {
                *complete = false;
                dist_log(rt, "checkpoint step %d: server %d.%d (rank %d) was lost before it wrote its shard", step,
                         m.slice / per, m.slice % per, dist_server_proc(rt, m.slice / per, m.slice % per));
            }
        }
        zmq_msg_close(&payload);
    }
    free(got);
    if (rc == 0)
        dist_ckpt_prune(rt);
    return rc;
}

/* The first worker of a group to see the host's stop before `step` picks step + 1, which no
 * worker of the group can have begun: each needs this one's gradients of `step` first. */
static bool stop(void *ud, int step, bool requested)
{
    atomic_int *at = &((dist_worker *)ud)->rt->stop_step[((dist_worker *)ud)->group];
    int none = INT_MAX;
    if (requested)
        atomic_compare_exchange_strong(at, &none, step + 1);
    return step >= atomic_load(at);
}

void *dist_worker_main(void *arg)
{
    dist_worker *w = arg;
    dist_rt *rt = w->rt;
    int one = 1;
    if (!(w->sock = dist_connect(rt, ENT_WORKER, w->group, w->id, &w->err)))
        return NULL;
    bool lead = w->group == 0 && w->id == 0;
    singa_exchange x = {w, after_backward, after_training, stop, save_state, lead ? save_servers : NULL};
    if (wait_for(w, MSG_READY, &one, &w->err) == 0) {
        for (int k = 0; k < rt->nparams; k++) {
            singa_param *p = w->params[k];
            if (!p->nsharers) {
                p->grad_ready = grad_ready;
                p->grad_ready_ud = w;
            }
        }
        w->step_sent = singa_job_step(w->job);
        w->rc = singa_job_loop(w->job, &w->hooks, &x, &w->res, &w->err);
        msg m = {.type = MSG_ABORT, .src = self(w), .dst = {ENT_STUB, 0, 0, (uint16_t)rt->rank}};
        if (w->rc < 0 && !w->stopped) { /* the stub stops everyone, then it is done */
            dist_send(w->sock, &m, w->err.msg, strlen(w->err.msg));
            wait_for(w, 0, &one, &(singa_err){{0}}); /* type 0 never comes: until the stub stops all */
        } else if (w->rc == 0 && w->group == 0 && w->id == 0) { /* with the result, which every process returns */
            uint8_t result[MSG_RESULT_MAX];
            m.type = MSG_FINISHED;
            dist_send(w->sock, &m, result, msg_result_encode(&w->res, result));
        }
    } else {
        w->rc = -1;
    }
    zmq_close(w->sock);
    return NULL;
}

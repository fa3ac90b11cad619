/* Sandblaster in one process with kSGD and momentum: the group's workers write their gradients
 * straight into the servers' momentum history, h = m h - lr g inside each worker's backward
 * GEMM (alpha = -lr / n; beta = m for worker 0, 1 for the others, which add theirs after it), as
 * the local updater does for its one worker.  No worker then zeroes a gradient of its own, the
 * stub has nothing to sum, and a server's update is w += h (with the weight decay, one pass)
 * where it read a gradient, the history and the values and wrote two of them.  The servers'
 * history slots are views of one buffer per param, so their checkpoints do not change.
 *
 * Taken when every thread of the job lives in this process, with one worker group and one
 * server group sharing the values (share_memory), the net not cut among the workers, and kSGD
 * with momentum and no clipping; per param, when every layer using it is of a type that allows
 * writing its gradient in turns (the registry's SINGA_TYPE_GRAD_TURNS) and no other param shares
 * its value.  The workers then hand those params a gradient sink that takes turns (worker.c).
 *
 * Turns go from worker 0 to worker n - 1, so the sum does not depend on which thread is faster.
 * A weight's gradient GEMM is written in RT_HISTORY_PARTS blocks of rows, each a turn of its
 * own: a worker that finds a block's turn taken waits, and the one before lets it in as soon as
 * that block is done, so the workers fall into step a fraction of a GEMM apart (whole turns kept
 * them a GEMM apart, the last worker finishing the backward pass a whole GEMM late).
 *
 * The rate in alpha is the servers': they publish the next step's as they apply one, since only
 * they call a kLua schedule during training. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "layers/registry.h"
#include "layers/param_state.h"
#include "runtime/runtime.h"
#include "singa/layer.h"
#include "singa/net.h"
#include "singa/updater.h"

/* The distributed params whose every worker writes them in turns. */
static bool *eligible_params(rt_ctx *rt)
{
    bool *ok = calloc((size_t)rt->nparams, sizeof *ok);
    if (!ok)
        return NULL;
    for (int k = 0; k < rt->nparams; k++)
        ok[k] = true;
    for (int i = 0; i < rt->nworkers; i++) {
        const singa_net *net = singa_job_train_net(rt->workers[i].job);
        const singa_registry *reg = singa_job_registry(rt->workers[i].job);
        for (int k = 0; k < rt->nparams; k++) {
            singa_param *p = rt->workers[i].params[k];
            bool used = false, turns = true;
            for (int l = 0; l < net->nlayers; l++)
                for (int j = 0; j < net->layers[l]->nparams; j++)
                    if (net->layers[l]->params[j] == p) {
                        used = true;
                        turns &= (singa_registry_traits(reg, net->layers[l]->type) & SINGA_TYPE_GRAD_TURNS) != 0;
                    }
            ok[k] &= used && turns && p->nsharers == 0 && !net->parts; /* a part's view writes without turns */
        }
    }
    return ok;
}

int rt_history_setup(rt_ctx *rt, singa_err *err)
{
    const singa_cluster *c = rt->c;
    float momentum;
    if (rt->nprocs != 1 || c->nworker_groups != 1 || c->nserver_groups != 1 || !c->share_memory || rt->cut ||
        rt->nworkers != c->nworkers_per_group || rt->nservers < 1 ||
        !singa_updater_history_grad(rt_server_updater(rt_server_at(rt, 0)), &momentum))
        return 0;
    float rate = singa_updater_lr(rt_server_updater(rt_server_at(rt, 0)), rt->resume_step);
    if (!isfinite(rate))
        return singa_err_set(err, "updater.learning_rate (kLua) at step %d failed", rt->resume_step);
    bool *ok = eligible_params(rt);
    if (!ok)
        return singa_err_set(err, "out of memory");
    int n = 0;
    for (int k = 0; k < rt->nparams; k++)
        n += ok[k];
    rt_history *h = n ? calloc(1, sizeof *h) : NULL;
    if (n && (!h || !(h->turn = calloc((size_t)rt->nparams * RT_HISTORY_PARTS, sizeof *h->turn)) ||
              !(h->lead_grad = calloc((size_t)rt->nparams, sizeof *h->lead_grad)))) {
        free(ok);
        if (h)
            free(h->turn);
        free(h);
        return singa_err_set(err, "out of memory");
    }
    if (!h) {
        free(ok);
        return 0;
    }
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->turn_changed, NULL);
    h->nworkers = rt->nworkers;
    h->nparams = n;
    h->momentum = momentum;
    atomic_init(&h->rate[rt->resume_step & 1], rate);
    atomic_init(&h->rate[(rt->resume_step + 1) & 1], rate);
    rt->history = h; /* from here rt_history_free undoes what is done */
    for (int k = 0; k < rt->nparams; k++) {
        if (!ok[k])
            continue;
        if (!(rt->params[k].hist = calloc(rt->params[k].size, sizeof(float)))) {
            free(ok);
            return singa_err_set(err, "out of memory");
        }
        for (int i = 0; i < rt->nworkers; i++) {
            singa_param *p = rt->workers[i].params[k];
            if (i == 0) { /* the script's job outlives the run: its buffer is kept for after */
                h->lead_grad[k] = p->grad;
                p->grad.owns = false;
            }
            singa_tensor_rebind(&p->grad, rt->params[k].hist);
            singa_param_state_of(p)->grad_parts = rt->nworkers > 1 ? RT_HISTORY_PARTS : 1; /* alone, one GEMM is faster */
        }
    }
    free(ok);
    for (int i = 0; i < rt->nservers; i++)
        rt_server_share_history(rt_server_at(rt, i));
    return 0;
}

void rt_history_free(rt_ctx *rt)
{
    rt_history *h = rt->history;
    if (!h)
        return;
    for (int k = 0; k < rt->nparams; k++) {
        if (!rt->params[k].hist)
            continue;
        if (rt->nworkers > 0) {
            singa_param *p = rt->workers[0].params[k];
            p->grad = h->lead_grad[k];
            singa_param_state_of(p)->grad_parts = 0;
            p->grad_alpha = 1.0f;
            p->grad_beta = 0.0f;
        }
        free(rt->params[k].hist);
        rt->params[k].hist = NULL;
    }
    pthread_mutex_destroy(&h->lock);
    pthread_cond_destroy(&h->turn_changed);
    free(h->turn);
    free(h->lead_grad);
    free(h);
    rt->history = NULL;
}

/* Until it is worker `id`'s turn at part j of param k, or the runtime fails (the job ends then). */
static void wait_turn(rt_ctx *rt, int k, int j, int id)
{
    rt_history *h = rt->history;
    int *turn = &h->turn[k * RT_HISTORY_PARTS + j];
    pthread_mutex_lock(&h->lock);
    while (*turn != id && !rt_failed(rt)) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 100000000;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&h->turn_changed, &h->lock, &until);
    }
    pthread_mutex_unlock(&h->lock);
}

void rt_history_begin(rt_ctx *rt, int k, int j, int id, int step, singa_param *p)
{
    rt_history *h = rt->history;
    wait_turn(rt, k, j, id);
    p->grad_alpha = -atomic_load(&h->rate[step & 1]) * p->lr_scale / (float)h->nworkers;
    p->grad_beta = id == 0 ? h->momentum : 1.0f;
}

void rt_history_pass(rt_ctx *rt, int k, int j, int id)
{
    rt_history *h = rt->history;
    pthread_mutex_lock(&h->lock);
    h->turn[k * RT_HISTORY_PARTS + j] = (id + 1) % h->nworkers;
    pthread_cond_broadcast(&h->turn_changed);
    pthread_mutex_unlock(&h->lock);
}

void rt_history_skip(rt_ctx *rt, int k, int id)
{
    for (int j = 0; j < RT_HISTORY_PARTS; j++)
        wait_turn(rt, k, j, id);
    if (id == 0) /* a zero gradient: h = m h */
        cblas_sscal((int)rt->params[k].size, rt->history->momentum, rt->params[k].hist, 1);
    for (int j = 0; j < RT_HISTORY_PARTS; j++)
        rt_history_pass(rt, k, j, id);
}

void rt_history_publish(rt_ctx *rt, int step, float rate)
{
    atomic_store(&rt->history->rate[step & 1], rate);
}

/* Another worker's share of the step's batch, trained here too (cluster.shrink = "share", the
 * runtime's reshare.c): the train net's input layers read that worker's rows of the batch they
 * read last, and a pass of the job's algorithm over them adds its params' gradients to the
 * step's (grad_beta 1).  Each pass's loss is the mean over one worker's rows, as in the worker
 * that lost them, so the passes' summed gradients are what those workers would have sent. */
#include <stdlib.h>

#include "layers/records.h"
#include "train/job_private.h"

/* Every input layer of the net reads worker `share`'s rows next; the first that cannot is named. */
static int point_inputs(singa_net *net, int share, singa_err *err)
{
    for (int i = 0; i < net->nlayers; i++) {
        singa_layer *l = net->layers[i];
        if ((l->type->flags & SINGA_LAYER_INPUT) && !singa_records_of(l))
            return singa_err_set(err, "input layer '%s' (%s) cannot read another worker's rows of its batch "
                                      "(cluster.shrink = \"share\"; \"batch\" leaves them out)", l->name, l->type->name);
    }
    for (int i = 0; i < net->nlayers; i++)
        if ((net->layers[i]->type->flags & SINGA_LAYER_INPUT) && singa_records_share(net->layers[i], share) < 0)
            return singa_err_set(err, "input layer '%s' cannot read worker %d's rows now", net->layers[i]->name, share);
    return 0;
}

int singa_job_train_share(singa_job *job, int share, singa_err *err)
{
    singa_net *net = job->train;
    singa_params *ps = &job->params;
    float *beta = malloc(((size_t)ps->n + 1) * sizeof *beta);
    if (!beta)
        return singa_err_set(err, "out of memory");
    singa_metrics own = net->metrics; /* the pass resets the net's */
    int rc = point_inputs(net, share, err);
    for (int i = 0; i < ps->n; i++) {
        beta[i] = ps->items[i]->grad_beta;
        ps->items[i]->grad_beta = 1.0f;
    }
    if (rc == 0)
        rc = job->tob->run(net, job->tob_conf, err);
    for (int i = 0; i < ps->n; i++)
        ps->items[i]->grad_beta = beta[i];
    free(beta);
    singa_err ignored;
    if (point_inputs(net, job->split.index, &ignored) < 0 && rc == 0)
        rc = singa_err_set(err, "%s", ignored.msg);
    singa_metrics_merge(&net->metrics, &own);
    return rc < 0 ? singa_err_prefix(err, "training worker %d's rows too: ", share) : 0;
}

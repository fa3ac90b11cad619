/* Trained models: the kTest net of a job with the params of its newest fitting checkpoint.
 *
 * Only the kTest net is built (no training net, no updater), so a model loads without the
 * training data, and a checkpoint fits when it holds every param that net declares with the
 * same shape; its other entries (updater state, params only the training net uses, cursors)
 * are ignored.  The model keeps a copy of just the job fields it reads: the job table may hold
 * host functions (a kLua updater) that must not outlive the call that made it.
 *
 * Prediction replaces the input layer: the caller's rows are written where the input layer
 * would put a batch read from its file, and every other layer runs forward as in a test, so
 * parser layers (kMnist's normalisation) still apply and the rows are raw records. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "singa/checkpoint.h"
#include "singa/ckpt_set.h"
#include "singa/net.h"
#include "singa/predict.h"
#include "ckpt/resume.h"
#include "train/model.h"
#include "train/train.h"

struct singa_model {
    singa_conf *conf; /* the fields below, copied from the job */
    singa_params params;
    singa_rng rng;
    singa_net *net;
    int threads, test_steps;
    char checkpoint[4096];
    const char *from; /* while loading: a checkpoint file the caller named, or NULL */
    uint64_t step;
    /* The input layers' cursors as built, so every test starts where the first one of a run does. */
    int64_t (*cursors)[SINGA_CURSOR_LEN];
};

/* The job fields a model reads; the rest of the job (updater, cluster, ...) is not kept. */
static const char *const kept_fields[] = {"name", "seed", "neuralnet", "checkpoint_path", "test_steps",
                                          "num_openblas_threads"};

static int copy_fields(singa_model *m, const singa_conf *job, singa_err *err)
{
    const singa_field *const schemas[] = {singa_job_fields, NULL};
    if (singa_conf_check(job, schemas, "job", err) < 0)
        return -1;
    if (!(m->conf = singa_conf_new(SINGA_CONF_TABLE)))
        return singa_err_set(err, "out of memory");
    for (size_t i = 0; i < sizeof kept_fields / sizeof *kept_fields; i++) {
        const singa_conf *v = singa_conf_get(job, kept_fields[i]);
        singa_conf *c = v ? singa_conf_clone(v) : NULL;
        if (v && (!c || singa_conf_add(m->conf, kept_fields[i], c) < 0)) {
            singa_conf_free(c);
            return singa_err_set(err, "out of memory");
        }
    }
    m->threads = singa_conf_int(m->conf, "num_openblas_threads", 1);
    m->test_steps = singa_conf_int(m->conf, "test_steps", 0);
    if (m->threads < 1 || m->threads > 256)
        return singa_err_set(err, "job: field 'num_openblas_threads' must be in 1..256");
    if (m->test_steps < 0)
        return singa_err_set(err, "job: frequencies and step counts must not be negative");
    if (!singa_conf_get(m->conf, "neuralnet"))
        return singa_err_set(err, "job: field 'neuralnet' is required");
    if (!m->from && !singa_conf_strs_len(m->conf, "checkpoint_path"))
        return singa_err_set(err, "job: field 'checkpoint_path' is required to load a trained model "
                                  "(the directory training wrote its checkpoints to, or one checkpoint file)");
    return 0;
}

/* Every param of the net, but those sharing another's value, from the newest checkpoint (of any
 * topology) that holds them all with the net's shapes; entries the net does not use (updater
 * state, train-only params, cursors) may be there. */
static int load_params(singa_model *m, const singa_job_hooks *hooks, singa_err *err)
{
    const char *path = m->from ? m->from : singa_conf_strs_at(m->conf, "checkpoint_path", 0);
    singa_param **own = malloc(((size_t)m->params.n + 1) * sizeof *own);
    int n = 0;
    for (int i = 0; own && i < m->params.n; i++)
        if (!m->params.items[i]->owner)
            own[n++] = m->params.items[i];
    if (!own)
        return singa_err_set(err, "out of memory");
    singa_ckpt_want want = {.path = path, .params = own, .nparams = n, .copy = true, .wording = SINGA_CKPT_AS_MODEL,
                            .log = hooks ? hooks->log : NULL, .log_ud = hooks ? hooks->ud : NULL};
    singa_ckpt_resumed r;
    int rc = singa_ckpt_resume(&want, &r, err);
    free(own);
    if (rc == 0) {
        snprintf(m->checkpoint, sizeof m->checkpoint, "%s", r.set.where);
        m->step = r.set.step;
    } else if (rc == 1) { /* "'path': No such file ..." or "directory 'path' holds no checkpoint ..." */
        singa_err_prefix(err, "job: checkpoint_path ");
        singa_appendf(err->msg, sizeof err->msg, "; train the job first: singa.train writes checkpoints there");
    } else {
        singa_err_prefix(err, "job: no checkpoint in '%s' fits this job's kTest net; newest: ", path);
    }
    singa_ckpt_resumed_free(&r);
    return rc == 0 ? 0 : -1;
}

int singa_model_load(singa_model **out, const singa_conf *job, const singa_registry *reg,
                     const singa_job_hooks *hooks, singa_err *err)
{
    return singa_model_load_from(out, job, NULL, reg, hooks, err);
}

int singa_model_load_from(singa_model **out, const singa_conf *job, const char *checkpoint,
                          const singa_registry *reg, const singa_job_hooks *hooks, singa_err *err)
{
    *out = NULL;
    singa_model *m = calloc(1, sizeof *m);
    if (!m)
        return singa_err_set(err, "out of memory");
    m->from = checkpoint;
    singa_params_init(&m->params);
    if (copy_fields(m, job, err) < 0)
        goto fail;
    uint64_t seed = (uint64_t)singa_conf_int(m->conf, "seed", 0);
    singa_rng_seed(&m->rng, seed, 0);
    if (singa_net_create(&m->net, singa_conf_get(m->conf, "neuralnet"), SINGA_PHASE_TEST, reg, &m->params, &m->rng,
                         seed, NULL, err) < 0)
        goto fail;
    if (!(m->cursors = calloc((size_t)m->net->nlayers, sizeof *m->cursors))) {
        singa_err_set(err, "out of memory");
        goto fail;
    }
    for (int i = 0; i < m->net->nlayers; i++) {
        singa_layer *l = m->net->layers[i];
        if (l->type->get_cursor)
            l->type->get_cursor(l, m->cursors[i]);
    }
    if (load_params(m, hooks, err) < 0)
        goto fail;
    singa_job_log(hooks, "loaded %s (step %llu)", m->checkpoint, (unsigned long long)m->step);
    m->from = NULL;
    *out = m;
    return 0;
fail:
    singa_model_free(m);
    return -1;
}

void singa_model_free(singa_model *m)
{
    if (!m)
        return;
    singa_net_free(m->net);
    singa_params_free(&m->params);
    singa_conf_free(m->conf);
    free(m->cursors);
    free(m);
}

const char *singa_model_checkpoint(const singa_model *m) { return m->checkpoint; }
singa_net *singa_model_net(const singa_model *m) { return m->net; }
uint64_t singa_model_step(const singa_model *m) { return m->step; }

int singa_model_test(singa_model *m, const singa_job_hooks *hooks, singa_metrics *out, singa_err *err)
{
    singa_metrics_reset(out);
    if (m->test_steps <= 0)
        return singa_err_set(err, "job: test_steps is 0; set it to the number of kTest batches to run");
    singa_blas_set_threads(m->threads);
    for (int i = 0; i < m->net->nlayers; i++) {
        singa_layer *l = m->net->layers[i];
        if (l->type->set_cursor && l->type->set_cursor(l, m->cursors[i], err) < 0)
            return -1;
    }
    for (int k = 0; k < m->test_steps; k++) {
        if (singa_net_forward(m->net, err) < 0)
            return singa_err_prefix(err, "test: ");
        singa_metrics_merge(out, &m->net->metrics);
    }
    if (hooks && hooks->record) {
        singa_record r = {.step = (int)m->step, .phase = SINGA_PHASE_TEST, .metrics = out, .lr = 0};
        hooks->record(hooks->ud, &r);
    }
    return 0;
}

singa_layer *singa_model_input(const singa_model *m, singa_err *err)
{
    singa_layer *in = NULL;
    for (int i = 0; i < m->net->nlayers; i++) {
        singa_layer *l = m->net->layers[i];
        if (!(l->type->flags & SINGA_LAYER_INPUT))
            continue;
        if (in) {
            singa_err_set(err, "predict: the kTest net has several input layers ('%s' and '%s'); it needs exactly one",
                          in->name, l->name);
            return NULL;
        }
        in = l;
    }
    if (!in)
        singa_err_set(err, "predict: the kTest net has no input layer");
    return in;
}

int singa_model_input_size(const singa_model *m)
{
    singa_layer *in = singa_model_input(m, NULL);
    return in ? singa_tensor_cols(&in->data) : 0;
}

singa_layer *singa_model_output(const singa_model *m, const char *name, singa_err *err)
{
    if (name) {
        singa_layer *l = singa_net_find(m->net, name);
        if (!l)
            singa_err_set(err, "predict: the kTest net has no layer '%s'", name);
        return l;
    }
    static const char *const types[] = {"kSoftmaxLoss", "kSoftmax"};
    for (int t = 0; t < 2; t++)
        for (int i = m->net->nlayers - 1; i >= 0; i--)
            if (strcmp(m->net->layers[i]->type->name, types[t]) == 0)
                return m->net->layers[i];
    singa_err_set(err, "predict: the kTest net has no kSoftmaxLoss or kSoftmax layer; name the layer whose output you want");
    return NULL;
}

int singa_model_predict(singa_model *m, const singa_tensor *input, const char *layer, singa_tensor *out,
                        singa_err *err)
{
    memset(out, 0, sizeof *out);
    singa_layer *in = singa_model_input(m, err), *ol = in ? singa_model_output(m, layer, err) : NULL;
    if (!ol)
        return -1;
    if (ol == in)
        return singa_err_set(err, "predict: layer '%s' is the input layer", ol->name);
    int batch = singa_tensor_rows(&in->data), width = singa_tensor_cols(&in->data);
    int rows = singa_tensor_rows(input), outw = singa_tensor_cols(&ol->data);
    char a[64], b[64];
    if (singa_tensor_cols(input) != width || !singa_tensor_contiguous(input))
        return singa_err_set(err, "predict: input of shape %s: layer '%s' (%s) takes %d values per instance (its batch is %s)",
                             singa_tensor_shape_str(input, a, sizeof a), in->name, in->type->name, width,
                             singa_tensor_shape_str(&in->data, b, sizeof b));
    if (singa_tensor_rows(&ol->data) != batch)
        return singa_err_set(err, "predict: layer '%s' has %d rows for a batch of %d instances, so it has no output per instance",
                             ol->name, singa_tensor_rows(&ol->data), batch);
    if (singa_tensor_init2(out, rows, outw, err) < 0)
        return -1;
    singa_blas_set_threads(m->threads);
    for (int start = 0; start < rows; start += batch) {
        int n = rows - start < batch ? rows - start : batch;
        for (int r = 0; r < batch; r++) {
            float *dst = in->data.data + (size_t)r * (size_t)in->data.ld;
            if (r < n)
                memcpy(dst, input->data + (size_t)(start + r) * (size_t)width, (size_t)width * sizeof(float));
            else
                memset(dst, 0, (size_t)width * sizeof(float));
        }
        if (in->aux.data)
            singa_tensor_fill(&in->aux, 0.0f); /* a valid label for loss layers, whose metrics nobody reads */
        singa_metrics_reset(&m->net->metrics);
        for (int i = 0; i < m->net->nlayers; i++) {
            singa_layer *l = m->net->layers[i];
            if (l != in && l->type->forward(l, SINGA_PHASE_TEST, err) < 0) {
                singa_tensor_free(out);
                return singa_err_prefix(err, "predict: ");
            }
        }
        for (int r = 0; r < n; r++)
            memcpy(out->data + (size_t)(start + r) * (size_t)outw, ol->data.data + (size_t)r * (size_t)ol->data.ld,
                   (size_t)outw * sizeof(float));
    }
    return 0;
}

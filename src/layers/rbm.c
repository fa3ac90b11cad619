/* kRBMVis and kRBMHid: a restricted Boltzmann machine as two layers (SINGA's RBMVisLayer and
 * RBMHidLayer), trained by contrastive divergence (kCD, src/train/cd.c).
 *
 * The undirected connection is written as two directed ones: the vis layer lists its data source
 * and the hid layer, the hid layer lists the vis layer.  vis -> hid orders the net; hid -> vis is
 * a back edge (read only in the negative phases), which kRBMVis declares through back_src.
 *
 * Params: the vis layer owns the weight W (hdim x vdim, kInnerProduct's layout, so an autoencoder
 * can take it over) and the visible bias; the hid layer owns the hidden bias and reads W from its
 * vis layer.  SINGA declared W on both layers, tied by share_from; here W is one param with one
 * gradient, so there is nothing to average and nothing to keep consistent.
 *
 * Phases (l->ctx->cd_step): in the positive phase (0) vis copies its input v0 and hid computes
 * h0 = p(h | v0).  In negative phase k, vis draws a sample s of hid's latest probabilities (h0
 * when k = 1, else h(k-1); binary units, or for `gaussian` hid units the mean plus N(0, 1)
 * noise) and reconstructs vk = p(v | s); then hid computes hk = p(h | vk).  Visible units are
 * never sampled (Hinton's practice, and SINGA's), nor is the last hk.  The gradients are those
 * of the negative log-likelihood, since the updaters minimise:
 *     dW = (hk^T vk - h0^T v0) / B,   dbv = sum(vk - v0) / B,   dbh = sum(hk - h0) / B.
 * kRBMVis reports `loss`: the squared reconstruction error sum (v0 - v1)^2 per instance, in the
 * first negative phase.  Test and validation nets only run forward: there kRBMHid reconstructs
 * through its vis layer from h0 itself (no sampling) right after the positive phase, and vis
 * reports that error. */
#include "layers/ctx.h"
#include "core/vmath.h"
#include "layers/layers.h"
#include "singa/net.h"

typedef struct rbm_state {
    bool bias, gaussian; /* gaussian: hid units only */
    int hdim, vdim, batch;
    singa_layer *peer;   /* vis: its kRBMHid; hid: its kRBMVis */
    singa_layer *input;  /* vis: its data source */
    singa_tensor neg;    /* vis: the reconstruction vk; hid: hk */
    singa_tensor sample; /* hid: the latest sample of the hidden units */
} rbm_state;

static const singa_field vis_fields[] = {
    {"hdim", SINGA_FIELD_INT}, {"bias_term", SINGA_FIELD_BOOL}, {NULL, 0},
};
static const singa_field hid_fields[] = {
    {"hdim", SINGA_FIELD_INT}, {"bias_term", SINGA_FIELD_BOOL}, {"gaussian", SINGA_FIELD_BOOL},
    {NULL, 0},
};

static bool vis_back_src(const singa_layer *l, const singa_layer *src)
{
    return src->type == &singa_rbm_hid_layer;
}

/* out = a op(w) + bias (a row vector added to every row) */
static void affine(singa_tensor *out, const singa_tensor *a, bool trans_b, const singa_tensor *w,
                   const singa_param *bias)
{
    singa_tensor x = singa_tensor_view_matrix(a), y = singa_tensor_view_matrix(out);
    if (bias) {
        singa_tensor_fill(&y, 0.0f);
        singa_tensor_add_row(&y, bias->data.data);
    }
    singa_tensor_gemm(false, trans_b, 1.0f, &x, w, bias ? 1.0f : 0.0f, &y);
}

/* ---- kRBMVis ---- */

static int vis_setup(singa_layer *l, singa_err *err)
{
    rbm_state *s = l->state;
    for (int k = 0; k < l->nsrc; k++) {
        if (l->src[k]->type != &singa_rbm_hid_layer)
            s->input = l->src[k];
        else if (!s->peer)
            s->peer = l->src[k];
        else
            return singa_layer_err(l, err, "lists two kRBMHid layers ('%s' and '%s') in 'srclayer'; it has one",
                                   s->peer->name, l->src[k]->name);
    }
    if (!s->peer || !s->input)
        return singa_layer_err(l, err, "'srclayer' must list its data source and its kRBMHid layer (an RBM's "
                                       "undirected connection is written as vis -> hid and hid -> vis)");
    /* The hid layer is not set up yet (it comes after this one), but its conf is there. */
    s->hdim = singa_conf_int(s->peer->conf, "hdim", 0);
    if (s->hdim <= 0)
        return singa_layer_err(s->peer, err, "field 'hdim' (the number of hidden units) must be a positive integer");
    int own = singa_conf_int(l->conf, "hdim", s->hdim);
    if (own != s->hdim)
        return singa_layer_err(l, err, "field 'hdim' is %d but its kRBMHid layer '%s' has hdim %d", own,
                               s->peer->name, s->hdim);
    s->batch = singa_tensor_rows(&s->input->data);
    s->vdim = singa_tensor_cols(&s->input->data);
    s->bias = singa_conf_bool(l->conf, "bias_term", true);
    int wshape[2] = {s->hdim, s->vdim};
    if (!singa_layer_param(l, 0, "weight", 2, wshape, s->vdim, s->hdim, "kUniformSqrtFanIn", err))
        return -1;
    if (s->bias && !singa_layer_param_value(l, 1, "bias", 1, &s->vdim, -1, s->vdim, s->hdim, "kConstant", 0.0, err))
        return -1;
    int shape[2] = {s->batch, s->vdim};
    if (singa_layer_shape(l, 2, shape, err) < 0)
        return -1;
    return singa_tensor_init_like(&s->neg, &l->data, err);
}

/* The reconstruction vk = sigmoid(h W + bv) from hidden states h (samples or probabilities). */
static void vis_reconstruct(singa_layer *l, const singa_tensor *h)
{
    rbm_state *s = l->state;
    affine(&s->neg, h, false, &l->params[0]->data, s->bias ? l->params[1] : NULL);
    singa_vsigmoid(s->neg.data, s->neg.data, s->neg.size);
}

/* sum (v0 - v1)^2 per instance, as `loss`. */
static void vis_report(singa_layer *l)
{
    rbm_state *s = l->state;
    double e = 0;
    for (size_t i = 0; i < s->neg.size; i++) {
        double d = (double)l->data.data[i] - s->neg.data[i];
        e += d * d;
    }
    singa_layer_metric(l, "loss", e / s->batch);
}

static void hid_sample(singa_layer *l, int cd_step);

static int vis_forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    rbm_state *s = l->state;
    int k = l->ctx->cd_step;
    if (k == 0) {
        singa_tensor x = singa_tensor_view_matrix(&s->input->data);
        singa_tensor_copy(&l->data, &x);
        return 0;
    }
    hid_sample(s->peer, k);
    vis_reconstruct(l, &((rbm_state *)s->peer->state)->sample);
    if (k == 1)
        vis_report(l);
    return 0;
}

/* dW = (hk^T vk - h0^T v0) / B and dbv = sum(vk - v0) / B, through grad_alpha / grad_beta. */
static void vis_backward(singa_layer *l)
{
    rbm_state *s = l->state, *hs = s->peer->state;
    singa_param *w = l->params[0];
    float a = w->grad_alpha / (float)s->batch;
    singa_tensor g = singa_tensor_view_matrix(&w->grad);
    singa_tensor_gemm(true, false, a, &hs->neg, &s->neg, w->grad_beta, &g);
    singa_tensor_gemm(true, false, -a, &s->peer->data, &l->data, 1.0f, &g);
    singa_param_grad_done(w);
    if (s->bias) {
        singa_param *b = l->params[1];
        float ab = b->grad_alpha / (float)s->batch;
        singa_tensor_sum_rows(&s->neg, ab, b->grad_beta, b->grad.data);
        singa_tensor_sum_rows(&l->data, -ab, 1.0f, b->grad.data);
        singa_param_grad_done(b);
    }
}

static void rbm_destroy(singa_layer *l)
{
    rbm_state *s = l->state;
    singa_tensor_free(&s->neg);
    singa_tensor_free(&s->sample);
}

const singa_layer_type singa_rbm_vis_layer = {
    .name = "kRBMVis", .fields = vis_fields, .min_src = 2, .max_src = 2, .flags = SINGA_LAYER_GIBBS,
    .state_size = sizeof(rbm_state), .setup = vis_setup, .forward = vis_forward,
    .backward = vis_backward, .destroy = rbm_destroy, .back_src = vis_back_src,
};

/* ---- kRBMHid ---- */

static int hid_setup(singa_layer *l, singa_err *err)
{
    rbm_state *s = l->state;
    singa_layer *vis = l->src[0];
    rbm_state *vs = vis->state;
    if (vis->type != &singa_rbm_vis_layer)
        return singa_layer_err(l, err, "its srclayer '%s' is a %s; it must be the RBM's kRBMVis layer", vis->name,
                               vis->type->name);
    if (vs->peer != l)
        return singa_layer_err(l, err, "its kRBMVis layer '%s' does not list it in 'srclayer' (an RBM's "
                                       "undirected connection is written as vis -> hid and hid -> vis)", vis->name);
    s->peer = vis;
    s->hdim = vs->hdim;
    s->vdim = vs->vdim;
    s->batch = vs->batch;
    s->bias = singa_conf_bool(l->conf, "bias_term", true);
    s->gaussian = singa_conf_bool(l->conf, "gaussian", false);
    const singa_conf *plist = singa_conf_get(l->conf, "param");
    if (plist && (int)plist->n > (s->bias ? 1 : 0))
        return singa_layer_err(l, err, "field 'param' lists %zu params but kRBMHid has %s: it uses the weight of "
                                       "its kRBMVis layer '%s' (SINGA's share_from copy of it is not needed)",
                               plist->n, s->bias ? "one, its bias" : "none (bias_term = false)", vis->name);
    if (s->bias && !singa_layer_param_value(l, 0, "bias", 1, &s->hdim, -1, s->vdim, s->hdim, "kConstant", 0.0, err))
        return -1;
    int shape[2] = {s->batch, s->hdim};
    if (singa_layer_shape(l, 2, shape, err) < 0 || singa_tensor_init_like(&s->neg, &l->data, err) < 0)
        return -1;
    return singa_tensor_init_like(&s->sample, &l->data, err);
}

/* Samples the hidden units from h0 (cd_step 1) or from the previous negative phase's hk. */
static void hid_sample(singa_layer *l, int cd_step)
{
    rbm_state *s = l->state;
    const float *p = (cd_step == 1 ? &l->data : &s->neg)->data;
    float *x = s->sample.data;
    singa_rng *rng = l->ctx->rng;
    if (s->gaussian) {
        for (size_t i = 0; i < s->sample.size; i++)
            x[i] = p[i] + (float)singa_rng_gaussian(rng);
    } else {
        for (size_t i = 0; i < s->sample.size; i++)
            x[i] = singa_rng_uniform(rng) < p[i] ? 1.0f : 0.0f;
    }
}

static int hid_forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    rbm_state *s = l->state, *vs = s->peer->state;
    int k = l->ctx->cd_step;
    singa_tensor *out = k == 0 ? &l->data : &s->neg;
    affine(out, k == 0 ? &s->peer->data : &vs->neg, true, &s->peer->params[0]->data,
           s->bias ? l->params[0] : NULL);
    if (!s->gaussian)
        singa_vsigmoid(out->data, out->data, out->size);
    if (k == 0 && phase != SINGA_PHASE_TRAIN) { /* evaluation: a deterministic reconstruction */
        vis_reconstruct(s->peer, &l->data);
        vis_report(s->peer);
    }
    return 0;
}

/* dbh = sum(hk - h0) / B; W's gradient is the vis layer's. */
static void hid_backward(singa_layer *l)
{
    rbm_state *s = l->state;
    if (!s->bias)
        return;
    singa_param *b = l->params[0];
    float a = b->grad_alpha / (float)s->batch;
    singa_tensor_sum_rows(&s->neg, a, b->grad_beta, b->grad.data);
    singa_tensor_sum_rows(&l->data, -a, 1.0f, b->grad.data);
    singa_param_grad_done(b);
}

const singa_layer_type singa_rbm_hid_layer = {
    .name = "kRBMHid", .fields = hid_fields, .min_src = 1, .max_src = 1, .flags = SINGA_LAYER_GIBBS,
    .state_size = sizeof(rbm_state), .setup = hid_setup, .forward = hid_forward,
    .backward = hid_backward, .destroy = rbm_destroy,
};

/* The built-in layer types, one per file, collected by the registry. */
#ifndef SINGA_LAYERS_LAYERS_H
#define SINGA_LAYERS_LAYERS_H

#include "singa/layer.h"
#include "singa/onnx.h"

extern const singa_layer_type singa_idx_data_layer;
extern const singa_layer_type singa_mnist_layer;
extern const singa_layer_type singa_label_layer;
extern const singa_layer_type singa_inner_product_layer;
extern const singa_layer_type singa_relu_layer;
extern const singa_layer_type singa_sigmoid_layer;
extern const singa_layer_type singa_tanh_layer;
extern const singa_layer_type singa_stanh_layer;
extern const singa_layer_type singa_dropout_layer;
extern const singa_layer_type singa_softmax_loss_layer;
extern const singa_layer_type singa_euclidean_loss_layer;
extern const singa_layer_type singa_activation_layer;
extern const singa_layer_type singa_softmax_layer;
extern const singa_layer_type singa_lrn_layer;
extern const singa_layer_type singa_concate_layer;
extern const singa_layer_type singa_slice_layer;
extern const singa_layer_type singa_split_layer;
extern const singa_layer_type singa_bridge_src_layer, singa_bridge_dst_layer;
extern const singa_layer_type singa_accuracy_layer;
extern const singa_layer_type singa_argsort_layer;
extern const singa_layer_type singa_onehot_layer;
extern const singa_layer_type singa_embedding_layer;

extern const singa_layer_type singa_conv_layer;
extern const singa_layer_type singa_pooling_layer;
extern const singa_layer_type singa_bm_layer, singa_csv_input_layer, singa_csv_output_layer, singa_rgb_image_layer;
extern const singa_layer_type singa_rbm_vis_layer, singa_rbm_hid_layer;
extern const singa_layer_type singa_gru_layer;
extern const singa_layer_type singa_char_rnn_layer;
extern const singa_layer_type singa_rnn_label_layer;
extern const singa_layer_type singa_char_rnn_output_layer;
extern const singa_layer_type singa_shard_data_layer, singa_record_input_layer, singa_store_input_layer;
extern const singa_layer_type singa_image_preprocess_layer;

/* Layers whose output has the shape of their only source. */
int singa_layer_setup_like_src(singa_layer *l, singa_err *err);

/* Connection layers (connection.c): rows (dim 0) or matrix columns (dim 1) [start, start + count) of t. */
singa_tensor singa_layer_slab(const singa_tensor *t, int dim, int start, int count);
/* dst = beta * dst + src, for singa_layer_grad_beta's 0 or 1. */
void singa_layer_grad_add(singa_tensor *dst, float beta, const singa_tensor *src);
/* How many source entries of the net's layers name l. */
int singa_layer_count_dsts(const singa_layer *l);
/* Labels (`aux`) through connection layers: an aux of `rows` labels; copying rows of one. */
int singa_layer_aux_rows(singa_layer *l, int rows, singa_err *err);
void singa_layer_aux_copy(singa_tensor *dst, int at, const singa_tensor *src, int from, int rows);
/* The identity, for layers that hand their one source on (kSplit, the bridges): setup shapes
 * data and labels like the source's, forward copies them, backward adds the gradient into the
 * source's. */
int singa_layer_setup_copy(singa_layer *l, singa_err *err);
int singa_layer_copy_forward(singa_layer *l, singa_phase phase, singa_err *err);
void singa_layer_copy_backward(singa_layer *l);
/* Reads concate_dim / slice_dim: 0 or 1 and below ndim, else -1 with the error set. */
int singa_layer_conf_dim(singa_layer *l, const char *field, int ndim, singa_err *err);
/* p = softmax(x) over k scores (softmax.c); returns log(sum(exp(x))). */
double singa_softmax_row(float *p, const float *x, int k);
/* kSoftmax's ONNX form, also kSoftmaxLoss's (whose output is the probabilities). */
int singa_softmax_export_onnx(const singa_layer *l, singa_onnx_graph *x, singa_err *err);
/* Fewer than topk classes rank ahead of label: a higher score, an equal one at a lower index, or a
 * NaN; a NaN at label is a miss (accuracy.c; kSoftmaxLoss and kAccuracy). */
bool singa_layer_topk_hit(const float *scores, int k, int label, int topk);
/* The labels a layer that scores predictions (src[0]) reads from src[1]: the labels src[1]'s rows
 * carry when it has them (an input layer, or a connection layer over one: SINGA v0.2-v0.3 named
 * the data layer itself as the loss's source), else src[1]'s output (kLabel's). */
const singa_tensor *singa_layer_labels(const singa_layer *l);
/* The labels hold one per row of src[0], and when they come from an input layer's data set none
 * of its labels is beyond src[0]'s classes; else an error naming both, or the label's file and
 * record. */
int singa_layer_check_labels(singa_layer *l, singa_err *err);
/* v as an index in 0..n-1, or -1 when allow_none (onehot.c); else -2 with an error naming the row and v. */
int singa_layer_index(const singa_layer *l, const char *what, float v, int n, bool allow_none, int row, singa_err *err);
/* src[0] gives one index per row; else an error. */
int singa_layer_check_index_column(singa_layer *l, singa_err *err);

/* Windowed layers (convolution, pooling): `name`_x / `name`_y, falling back to `name`, then def. */
void singa_layer_conf_xy(const singa_layer *l, const char *name, int def, int *x, int *y);
/* kernel, pads and strides as kConvolution and kPooling read them, as ONNX attributes of the
 * node x has open (pooling.c). */
void singa_layer_onnx_window(singa_onnx_graph *x, const singa_layer *l);
/* Checks a kernel/pad/stride window against an h x w input and gives the output size. */
int singa_layer_window(singa_layer *l, int h, int w, int ky, int kx, int py, int px, int sy,
                       int sx, int *oh, int *ow, singa_err *err);

#endif

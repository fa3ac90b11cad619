/* The built-in layer types, one per file, collected by the registry. */
#ifndef SINGA_LAYERS_LAYERS_H
#define SINGA_LAYERS_LAYERS_H

#include "singa/layer.h"

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

/* Layers whose output has the shape of their only source. */
int singa_layer_setup_like_src(singa_layer *l, singa_err *err);

#endif

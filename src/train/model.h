/* What the rest of train/ needs of a trained model (predict.c) beyond include/singa/predict.h:
 * loading from a checkpoint file the caller names, and the net with its input and output
 * layers as singa.predict picks them (the ONNX export writes the same net). */
#ifndef SINGA_TRAIN_MODEL_H
#define SINGA_TRAIN_MODEL_H

#include "singa/net.h"
#include "singa/predict.h"

/* singa_model_load, with the params from `checkpoint` (a file or a directory; NULL: the first
 * entry of the job's checkpoint_path, which is then required). */
int singa_model_load_from(singa_model **out, const singa_conf *job, const char *checkpoint,
                          const singa_registry *reg, const singa_job_hooks *hooks, singa_err *err);
singa_net *singa_model_net(const singa_model *m);
/* The net's one input layer, or NULL with a message. */
singa_layer *singa_model_input(const singa_model *m, singa_err *err);
/* The layer predictions are read from: `name`, else the last kSoftmaxLoss, else the last kSoftmax. */
singa_layer *singa_model_output(const singa_model *m, const char *name, singa_err *err);

#endif

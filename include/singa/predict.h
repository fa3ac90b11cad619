/* Trained models: a job's kTest net with its params from the job's newest checkpoint, for
 * evaluating (singa.test) and predicting (singa.predict) without training.  Only the kTest net
 * is built, so the training data need not be present. */
#ifndef SINGA_PREDICT_H
#define SINGA_PREDICT_H

#include <stdint.h>
#include "singa/job.h"
#include "singa/tensor.h"

#pragma GCC visibility push(default) /* exported: libsinga is built hidden */

typedef struct singa_model singa_model;

/* Builds the kTest net of `job` (a job table as singa_job_create takes) and loads its params
 * from the first entry of the job's checkpoint_path, a checkpoint of any topology (ckpt_set.h):
 * a checkpoint file, or a directory whose newest checkpoint that is whole, verifies and holds
 * every param of the net with the net's shape (older ones are tried in turn; hooks->log, when
 * given, hears about each one refused).  Entries of
 * the file the net does not use (updater state, train-only params, data cursors) are ignored. */
int singa_model_load(singa_model **out, const singa_conf *job, const singa_registry *reg,
                     const singa_job_hooks *hooks, singa_err *err);
void singa_model_free(singa_model *m);
/* The checkpoint loaded: its file and its training step. */
const char *singa_model_checkpoint(const singa_model *m);
uint64_t singa_model_step(const singa_model *m);

/* Runs the job's test_steps batches of the kTest net from the start of its data (as the first
 * test of a training run does) and averages the metrics into *out; reports them to
 * hooks->record (phase kTest, step: the checkpoint's).  Each call starts over. */
int singa_model_test(singa_model *m, const singa_job_hooks *hooks, singa_metrics *out, singa_err *err);

/* Elements per instance of the net's input layer (784 for 28 x 28 images). */
int singa_model_input_size(const singa_model *m);
/* Puts the rows of `input` (instances x singa_model_input_size values, as the input layer would
 * read them from its file, e.g. raw pixels) in place of the input layer's batch, labels 0, runs
 * every other layer forward in kTest mode and gives, per instance, the output of `layer`: by
 * default the last kSoftmaxLoss layer (its softmax probabilities), else the last kSoftmax layer.
 * Inputs go through in batches of the input layer's batchsize (the last one padded with zeros).
 * *out is allocated here (instances x the layer's values per instance). */
int singa_model_predict(singa_model *m, const singa_tensor *input, const char *layer, singa_tensor *out,
                        singa_err *err);

#pragma GCC visibility pop

#endif

/* libsinga: the singa-tui engine. */
#ifndef SINGA_SINGA_H
#define SINGA_SINGA_H
#pragma GCC visibility push(default) /* exported: libsinga is built hidden */

#define SINGA_VERSION "0.1.0"

#include "singa/checkpoint.h"
#include "singa/ckpt_set.h"
#include "singa/conf.h"
#include "singa/curve.h"
#include "singa/datafile.h"
#include "singa/error.h"
#include "singa/job.h"
#include "singa/layer.h"
#include "singa/metrics.h"
#include "singa/net.h"
#include "singa/onnx.h"
#include "singa/partition.h"
#include "singa/param.h"
#include "singa/plan.h"
#include "singa/pool.h"
#include "singa/predict.h"
#include "singa/rng.h"
#include "singa/summary.h"
#include "singa/tensor.h"
#include "singa/trace.h"
#include "singa/updater.h"
#include "singa/gradcheck.h"
#include "singa/plugin.h"

#pragma GCC visibility pop

#endif

/* The planner's tests (t/8764, t/8765): a small net's profile, hand-made, and a codec's costs,
 * so each term of the model can be worked out by hand. */
#ifndef SINGA_T_PLAN_FIXTURE_H
#define SINGA_T_PLAN_FIXTURE_H

#include <math.h>
#include <stdbool.h>

#include "singa/plan.h"

static singa_plan_layer layers[3] = {
    {.name = "data", .type = "kIDXData", .fwd = 0.001, .out_floats = 100, .src = -1, .dim = 0},
    {.name = "fc1", .type = "kInnerProduct", .fwd = 0.004, .bwd = 0.006, .param_floats = 1010, .params = 2,
     .matrix_floats = 1000, .factor_floats = 110, .out_floats = 100, .src = 0, .dim = 1},
    {.name = "loss", .type = "kSoftmaxLoss", .fwd = 0.001, .bwd = 0.003, .param_floats = 1010, .params = 2,
     .matrix_floats = 1000, .factor_floats = 110, .out_floats = 10, .src = 1, .dim = 0},
};
static const singa_plan_codec codec = {.fp16 = 1e-8, .bf16 = 1e-8, .topk = 3e-8, .int8 = 4e-8, .powersgd = 2e-8};

static bool near(double a, double b) { return fabs(a - b) <= 1e-9 + 1e-9 * fabs(b); }

#endif

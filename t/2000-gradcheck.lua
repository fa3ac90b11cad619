-- Finite-difference gradient checks for every layer with a gradient.  A fourth entry gives the
-- layer that many destinations (layers with several outputs: kSlice, kSplit).
local singa = require "singa"
local tap = require "tap"

local TOL = 2e-2
local cases = {
  { "kInnerProduct", { num_output = 5 }, { { shape = { 4, 6 } } } },
  { "kInnerProduct without bias", { type = "kInnerProduct", num_output = 3, bias_term = false }, { { shape = { 2, 7 } } } },
  { "kInnerProduct transposed", { type = "kInnerProduct", num_output = 4, transpose = true }, { { shape = { 3, 5 } } } },
  { "kInnerProduct on 4-d input", { type = "kInnerProduct", num_output = 3 }, { { shape = { 2, 1, 3, 3 } } } },
  { "kReLU", {}, { { shape = { 4, 6 } } } },
  { "kReLU leaky", { type = "kReLU", negative_slope = 0.1 }, { { shape = { 4, 6 } } } },
  { "kSigmoid", {}, { { shape = { 3, 5 } } } },
  { "kTanh", {}, { { shape = { 3, 5 } } } },
  { "kSTanh", {}, { { shape = { 3, 5 } } } },
  { "kDropout", { dropout_ratio = 0.3 }, { { shape = { 4, 8 } } } },
  { "kSoftmaxLoss", {}, { { shape = { 5, 4 } }, { shape = { 5 }, classes = 4 } } },
  { "kSoftmaxLoss scaled top-2", { type = "kSoftmaxLoss", scale = 2.5, topk = 2 }, { { shape = { 5, 4 } }, { shape = { 5 }, classes = 4 } } },
  { "kEuclideanLoss", {}, { { shape = { 3, 4 } }, { shape = { 3, 4 } } } },
  { "kActivation RELU", { type = "kActivation", activation = "RELU" }, { { shape = { 4, 6 } } } },
  { "kActivation RELU leaky", { type = "kActivation", activation = "RELU", negative_slope = 0.2 }, { { shape = { 4, 6 } } } },
  { "kActivation SIGMOID", { type = "kActivation", activation = "SIGMOID" }, { { shape = { 3, 5 } } } },
  { "kActivation TANH", { type = "kActivation", activation = "TANH" }, { { shape = { 3, 5 } } } },
  { "kActivation STANH", { type = "kActivation", activation = "STANH" }, { { shape = { 3, 5 } } } },
  { "kSoftmax", {}, { { shape = { 3, 5 } } } },
  { "kSoftmax on 4-d input", { type = "kSoftmax" }, { { shape = { 2, 2, 2, 3 } } } },
  { "kLRN", {}, { { shape = { 2, 7, 3, 3 } } } },
  { "kLRN local_size 3, alpha 0.5, beta 0.6, knorm 2", { type = "kLRN", local_size = 3, alpha = 0.5, beta = 0.6, knorm = 2 },
    { { shape = { 2, 4, 2, 3 } } } },
  { "kLRN window wider than the channels", { type = "kLRN", local_size = 7 }, { { shape = { 1, 3, 2, 2 } } } },
  { "kConcate dim 0", { type = "kConcate", concate_dim = 0 }, { { shape = { 2, 3 } }, { shape = { 4, 3 } } } },
  { "kConcate dim 1, three sources", { type = "kConcate", concate_dim = 1 },
    { { shape = { 3, 2 } }, { shape = { 3, 4 } }, { shape = { 3, 1 } } } },
  { "kConcate dim 1 on channels", { type = "kConcate", concate_dim = 1 }, { { shape = { 2, 1, 2, 2 } }, { shape = { 2, 2, 2, 2 } } } },
  { "kSlice dim 0, 3 destinations", { type = "kSlice", slice_dim = 0, num_slices = 3 }, { { shape = { 6, 4 } } }, 3 },
  { "kSlice dim 1, 2 destinations", { type = "kSlice", slice_dim = 1, num_slices = 2 }, { { shape = { 3, 4 } } }, 2 },
  { "kSlice dim 1 on channels", { type = "kSlice", slice_dim = 1, num_slices = 2 }, { { shape = { 2, 4, 2, 2 } } }, 2 },
  { "kSlice with a slice nobody takes", { type = "kSlice", slice_dim = 1, num_slices = 3 }, { { shape = { 2, 6 } } }, 2 },
  { "kSlice without destinations", { type = "kSlice", slice_dim = 0, num_slices = 2 }, { { shape = { 4, 3 } } } },
  { "kSplit, 3 destinations", { type = "kSplit", num_splits = 3 }, { { shape = { 3, 4 } } }, 3 },
  { "kSplit without destinations", { type = "kSplit" }, { { shape = { 3, 4 } } } },
  { "kEmbedding", { type = "kEmbedding", vocab_size = 5, feature_dim = 4 }, { { shape = { 6 }, classes = 5 } } },
  { "kEmbedding, repeated indices and -1", { type = "kEmbedding", vocab_size = 5, feature_dim = 3 },
    { { shape = { 6, 1 }, classes = 5, data = { 0, 1, -1, 4, 1, 1 } } } },
}

for _, c in ipairs(cases) do
  local name, fields, inputs, destinations = c[1], c[2], c[3], c[4]
  local layer = { name = "l", type = fields.type or name }
  for k, v in pairs(fields) do layer[k] = v end
  local err, worst, checked = singa.gradcheck(layer, inputs, nil, destinations)
  tap.ok(err < TOL and checked > 0, string.format("%s: max relative error %.2e over %d elements", name, err, checked), worst)
end
tap.done()

-- Finite-difference gradient checks for every layer with a gradient.
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
}

for _, c in ipairs(cases) do
  local name, fields, inputs = c[1], c[2], c[3]
  local layer = { name = "l", type = fields.type or name }
  for k, v in pairs(fields) do layer[k] = v end
  local err, worst, checked = singa.gradcheck(layer, inputs)
  tap.ok(err < TOL and checked > 0, string.format("%s: max relative error %.2e over %d elements", name, err, checked), worst)
end
tap.done()

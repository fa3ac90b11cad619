-- Forward values of layers on known inputs (singa.forward runs one layer once), and small
-- training jobs for what only a whole net shows: which slice a destination takes, and that
-- connection layers pass gradients on exactly.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"

-- Passes when the output `out` has shape `shape` and values `want` (within tol).
local function values(out, shape, want, name, tol)
  tol = tol or 1e-6
  local got = {}
  for i = 1, #out do got[i] = string.format("%.6g", out[i]) end
  local msg = string.format("shape %s values {%s}", table.concat(out.shape or {}, "x"), table.concat(got, ", "))
  local ok = table.concat(out.shape or {}, "x") == table.concat(shape, "x") and #out == #want
  for i = 1, #want do ok = ok and math.abs(out[i] - want[i]) <= tol end
  return tap.ok(ok, name, msg)
end

local function fwd(layer, inputs, destinations)
  layer.name = layer.name or "l"
  return singa.forward(layer, inputs, destinations)
end

-- kArgSort: indices of the top scores, highest first; of equal scores the lower index first.
local scores = { shape = { 3, 4 }, data = { 0.1, 0.5, 0.2, 0.4,   3, 2, 1, 0,   1, 7, 7, 1 } }
values(fwd({ type = "kArgSort" }, { scores })[1], { 3, 1 }, { 1, 0, 1 }, "kArgSort topk 1")
values(fwd({ type = "kArgSort", topk = 3 }, { scores })[1], { 3, 3 }, { 1, 3, 2,   0, 1, 2,   1, 2, 0 },
       "kArgSort topk 3, ties in index order")
values(fwd({ type = "kArgSort", topk = 4 }, { { shape = { 1, 4 }, data = { -1, -3, -2, -4 } } })[1], { 1, 4 },
       { 0, 2, 1, 3 }, "kArgSort full sort of negative scores")
values(fwd({ type = "kArgSort", topk = 2 }, { { shape = { 2, 1, 2, 2 }, data = { 0, 9, 8, 1,   5, 5, 5, 6 } } })[1], { 2, 2 },
       { 1, 2, 3, 0 }, "kArgSort on a 4-d input ranks all features")

-- kAccuracy: top-k hits per row and the "accuracy" metric.
local labels = { shape = { 3 }, classes = 4, data = { 1, 3, 2 } }
do
  local r = fwd({ type = "kAccuracy" }, { scores, labels })
  values(r[1], { 3, 1 }, { 1, 0, 0 }, "kAccuracy top-1 hits (of tied top scores the lower index ranks first)")
  tap.near(r.metrics.accuracy, 1 / 3, 1e-9, "kAccuracy top-1 metric")
  r = fwd({ type = "kAccuracy", topk = 3 }, { scores, labels })
  values(r[1], { 3, 1 }, { 1, 0, 1 }, "kAccuracy top-3 hits")
  r = fwd({ type = "kAccuracy", topk = 4 }, { scores, labels })
  tap.near(r.metrics.accuracy, 1, 1e-9, "kAccuracy top-4 of 4 classes is 1")
  r = fwd({ type = "kAccuracy", topk = 2 }, { scores, { shape = { 3, 1 }, classes = 4, data = { 2, 1, 3 } } })
  tap.near(r.metrics.accuracy, 1 / 3, 1e-9, "kAccuracy top-2 metric with labels as a column")
  tap.is(r.metrics.loss, nil, "kAccuracy reports no loss")
end

-- Ties and NaN rank as argmax does: all-equal scores (a dead net) hit label 0 alone, and a NaN
-- score never hits; kSoftmaxLoss shares the rule.
do
  local nan = 0 / 0
  local flat = { shape = { 4, 3 }, data = { 0, 0, 0,   0, 0, 0,   0, 0, 0,   0, 0, 0 } }
  local flat_labels = { shape = { 4 }, classes = 3, data = { 0, 1, 2, 1 } }
  for _, t in ipairs({ "kAccuracy", "kSoftmaxLoss" }) do
    local r = fwd({ type = t }, { flat, flat_labels })
    tap.near(r.metrics.accuracy, 1 / 4, 1e-9, t .. ": all-equal scores hit label 0 only (top-1)")
    r = fwd({ type = t, topk = 2 }, { flat, flat_labels })
    tap.near(r.metrics.accuracy, 3 / 4, 1e-9, t .. ": all-equal scores, top-2 holds labels 0 and 1")
    local nans = { shape = { 3, 3 }, data = { nan, nan, nan,   0.1, nan, 0.2,   nan, 0.5, 0.1 } }
    r = fwd({ type = t }, { nans, { shape = { 3 }, classes = 3, data = { 0, 1, 1 } } })
    tap.near(r.metrics.accuracy, 0, 1e-9, t .. ": a NaN score is a miss, at the label or ahead of it")
    r = fwd({ type = t, topk = 2 }, { nans, { shape = { 3 }, classes = 3, data = { 0, 2, 1 } } })
    tap.near(r.metrics.accuracy, 2 / 3, 1e-9, t .. ": top-2 with a NaN ahead still holds the best finite score")
  end
  local r = fwd({ type = "kAccuracy", topk = 2 }, { { shape = { 2, 4 }, data = { 5, 9, 9, 9,   1, 3, 2, 3 } },
                                                     { shape = { 2 }, classes = 4, data = { 3, 3 } } })
  values(r[1], { 2, 1 }, { 0, 1 }, "kAccuracy top-2 with ties: two equal scores at lower indices push a label out")
end

-- kOneHot
values(fwd({ type = "kOneHot", vocab_size = 4 }, { { shape = { 4 }, data = { 2, -1, 0, 3 } } })[1], { 4, 4 },
       { 0, 0, 1, 0,   0, 0, 0, 0,   1, 0, 0, 0,   0, 0, 0, 1 }, "kOneHot, -1 gives zeros")

-- kEmbedding: rows of the table; -1 gives zeros.
do
  local out = fwd({ type = "kEmbedding", vocab_size = 3, feature_dim = 2 },
                  { { shape = { 5 }, data = { 2, -1, 0, 2, 1 } } })[1]
  tap.is(table.concat(out.shape, "x"), "5x2", "kEmbedding output is batch x feature_dim")
  tap.ok(out[3] == 0 and out[4] == 0, "kEmbedding index -1 gives a zero vector", string.format("%g %g", out[3], out[4]))
  tap.ok(out[1] == out[7] and out[2] == out[8], "kEmbedding: one index, one row")
  tap.ok(out[1] ~= out[5] and out[1] ~= out[9] and out[5] ~= out[9], "kEmbedding: different indices, different rows")
  out = fwd({ type = "kEmbedding", vocab_size = 4, param = { { init = { type = "kConstant", value = 0.25 } } } },
            { { shape = { 2, 1 }, data = { 3, -1 } } })[1]
  tap.is(table.concat(out.shape, "x"), "2x100", "kEmbedding feature_dim defaults to 100")
  tap.ok(out[1] == 0.25 and out[100] == 0.25 and out[101] == 0 and out[200] == 0,
         "kEmbedding with a constant table; -1 row zero")
end

-- kSoftmax
values(fwd({ type = "kSoftmax" }, { { shape = { 2, 2 }, data = { 0, math.log(2), 5, 5 } } })[1], { 2, 2 },
       { 1 / 3, 2 / 3, 0.5, 0.5 }, "kSoftmax rows")
values(fwd({ type = "kSoftmax" }, { { shape = { 1, 3 }, data = { 1000, 1000 + math.log(3), -1000 } } })[1], { 1, 3 },
       { 0.25, 0.75, 0 }, "kSoftmax is stable for large scores", 1e-4)

-- kLRN on one pixel of three channels: s_c = knorm + alpha / local_size * (sum of squares in the
-- window), as SINGA's lrn.cc, Caffe and PyTorch compute it.
values(fwd({ type = "kLRN", local_size = 3, alpha = 1, beta = 1, knorm = 1 },
           { { shape = { 1, 3, 1, 1 }, data = { 1, 2, 3 } } })[1], { 1, 3, 1, 1 },
       { 3 / 8, 6 / 17, 9 / 16 }, "kLRN across channels, window clipped at the ends")
values(fwd({ type = "kLRN" }, { { shape = { 1, 2, 1, 2 }, data = { 1, 0, 1, 2 } } })[1], { 1, 2, 1, 2 },
       { 1.4 ^ -0.75, 0, 1.4 ^ -0.75, 2 * 1.8 ^ -0.75 }, "kLRN defaults: local_size 5, alpha 1, beta 0.75, knorm 1", 1e-6)

-- kActivation matches the single-activation layers.
do
  local x = { shape = { 2, 3 }, data = { -2, -0.5, 0, 0.3, 1, 4 } }
  for _, p in ipairs{ { "RELU", "kReLU" }, { "SIGMOID", "kSigmoid" }, { "TANH", "kTanh" }, { "STANH", "kSTanh" } } do
    local a = fwd({ type = "kActivation", activation = p[1] }, { x })[1]
    local b = fwd({ type = p[2] }, { x })[1]
    local same = #a == #b
    for i = 1, #a do same = same and a[i] == b[i] end
    tap.ok(same, "kActivation " .. p[1] .. " equals " .. p[2])
  end
  values(fwd({ type = "kActivation", activation = "RELU", negative_slope = 0.1 }, { x })[1], { 2, 3 },
         { -0.2, -0.05, 0, 0.3, 1, 4 }, "kActivation RELU with negative_slope")
  values(fwd({ type = "kActivation", activation = "STANH" }, { { shape = { 1, 1 }, data = { 1 } } })[1], { 1, 1 },
         { 1.7159047 * math.tanh(0.6666667) }, "kActivation STANH value", 1e-5)
end

-- kConcate
local a = { shape = { 2, 2 }, data = { 1, 2, 3, 4 } }
local b = { shape = { 1, 2 }, data = { 5, 6 } }
values(fwd({ type = "kConcate", concate_dim = 0 }, { a, b })[1], { 3, 2 }, { 1, 2, 3, 4, 5, 6 }, "kConcate dim 0")
values(fwd({ type = "kConcate", concate_dim = 1 }, { a, { shape = { 2, 1 }, data = { 7, 8 } }, a })[1], { 2, 5 },
       { 1, 2, 7, 1, 2,   3, 4, 8, 3, 4 }, "kConcate dim 1, three sources")
values(fwd({ type = "kConcate", concate_dim = 1 }, { { shape = { 2, 1, 1, 2 }, data = { 1, 2, 3, 4 } },
                                                      { shape = { 2, 2, 1, 2 }, data = { 5, 6, 7, 8, 9, 10, 11, 12 } } })[1],
       { 2, 3, 1, 2 }, { 1, 2, 5, 6, 7, 8,   3, 4, 9, 10, 11, 12 }, "kConcate dim 1 joins channels")

-- kSlice: destination k reads slice k.
do
  local x = { shape = { 4, 2 }, data = { 1, 2, 3, 4, 5, 6, 7, 8 } }
  local r = fwd({ type = "kSlice", slice_dim = 0, num_slices = 2 }, { x }, 2)
  values(r[1], { 2, 2 }, { 1, 2, 3, 4 }, "kSlice dim 0: first destination, first rows")
  values(r[2], { 2, 2 }, { 5, 6, 7, 8 }, "kSlice dim 0: second destination, last rows")
  r = fwd({ type = "kSlice", slice_dim = 1, num_slices = 2 }, { x }, 2)
  values(r[1], { 4, 1 }, { 1, 3, 5, 7 }, "kSlice dim 1: first destination, first column")
  values(r[2], { 4, 1 }, { 2, 4, 6, 8 }, "kSlice dim 1: second destination, second column")
  r = fwd({ type = "kSlice", slice_dim = 1, num_slices = 2 }, { { shape = { 1, 4, 1, 1 }, data = { 1, 2, 3, 4 } } }, 2)
  values(r[2], { 1, 2, 1, 1 }, { 3, 4 }, "kSlice dim 1 cuts channels")
  r = fwd({ type = "kSlice", slice_dim = 0, num_slices = 4 }, { x }, 2)
  values(r[2], { 1, 2 }, { 3, 4 }, "kSlice with fewer destinations than slices")
  values(fwd({ type = "kSlice", num_slices = 2 }, { x })[1], { 4, 2 }, { 1, 2, 3, 4, 5, 6, 7, 8 },
         "kSlice without destinations passes its input through")
  r = fwd({ type = "kSplit", num_splits = 2 }, { x }, 2)
  values(r[2], { 4, 2 }, { 1, 2, 3, 4, 5, 6, 7, 8 }, "kSplit: every destination reads the input")
end

-- Whole nets.  8 classes and a batch of 8 without shuffling: every batch's labels are 0..7.
local dir = td.tmpdir("2100-layers")
local img, lab = td.idx(dir, 64, 8, 8, 8)

local function job(layers, o)
  o = o or {}
  local all = {
    { name = "data", type = "kIDXData", batchsize = 8, images = img, labels = lab },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
  }
  for _, l in ipairs(layers) do all[#all + 1] = l end
  return {
    name = "layers", seed = 5, train_steps = o.steps or 20, disp_freq = o.steps or 20,
    test_freq = o.test_freq, test_steps = o.test_steps,
    updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = o.lr or 0.05 } },
    neuralnet = { layer = all },
  }
end

local function train(layers, o)
  local ok, r = pcall(singa.train, job(layers, o))
  if not ok then tap.diag(r) return { train = {}, test = {} } end
  return r
end

-- The first destination in the layer list takes slice 0.  kAccuracy scores the one-hot rows of
-- the first half of the labels against the first half (from a second slice): 1 when "first"
-- read slice 0, 0 when it read slice 1.  kEuclideanLoss is only there to make a train net.
local function order_job(first_listed)
  local dsts = {
    { name = "first", type = "kOneHot", srclayer = "slice", vocab_size = 8 },
    { name = "second", type = "kOneHot", srclayer = "slice", vocab_size = 8 },
  }
  if not first_listed then dsts[1], dsts[2] = dsts[2], dsts[1] end
  return {
    { name = "slice", type = "kSlice", srclayer = "label", slice_dim = 0, num_slices = 2 },
    dsts[1], dsts[2],
    { name = "half", type = "kSlice", srclayer = "label", slice_dim = 0, num_slices = 2 },
    { name = "acc", type = "kAccuracy", srclayer = { "first", "half" } },
    { name = "fc", type = "kInnerProduct", srclayer = "image", num_output = 8 },
    { name = "onehot", type = "kOneHot", srclayer = "label", vocab_size = 8 },
    { name = "loss", type = "kEuclideanLoss", srclayer = { "fc", "onehot" } },
  }
end
tap.near(train(order_job(true), { steps = 3 }).train.accuracy, 1, 0, "kSlice: the first destination listed takes slice 0")
tap.near(train(order_job(false), { steps = 3 }).train.accuracy, 0, 0, "kSlice: the second destination listed takes slice 1")

-- Connection layers change nothing a net computes: the same losses, bit for bit.
local plain = {
  { name = "fc0", type = "kInnerProduct", srclayer = "image", num_output = 12 },
  { name = "act", type = "kTanh", srclayer = "fc0" },
  { name = "fc", type = "kInnerProduct", srclayer = "act", num_output = 8 },
  { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc", "label" } },
}
local base = train(plain, { test_freq = 10, test_steps = 2 })
tap.ok(base.test.loss and base.test.loss < 1, string.format("baseline trains (test loss %.3f)", base.test.loss or -1))

local function same_as_base(r, name)
  tap.ok(r.train.loss == base.train.loss and r.test.loss == base.test.loss, name,
         string.format("train loss %s vs %s, test loss %s vs %s", tostring(r.train.loss), tostring(base.train.loss),
                       tostring(r.test.loss), tostring(base.test.loss)))
end

for dim = 0, 1 do
  same_as_base(train({
    { name = "fc0", type = "kInnerProduct", srclayer = "image", num_output = 12 },
    { name = "slice", type = "kSlice", srclayer = "fc0", slice_dim = dim, num_slices = 2 },
    { name = "join", type = "kConcate", srclayer = { "slice", "slice" }, concate_dim = dim },
    { name = "act", type = "kTanh", srclayer = "join" },
    { name = "fc", type = "kInnerProduct", srclayer = "act", num_output = 8 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc", "label" } },
  }, { test_freq = 10, test_steps = 2 }), "kSlice then kConcate on dim " .. dim .. " is the identity, forward and backward")
end

same_as_base(train({
  { name = "fc0", type = "kInnerProduct", srclayer = "image", num_output = 12 },
  { name = "slice", type = "kSlice", srclayer = "fc0", slice_dim = 1, num_slices = 3 },
  { name = "a", type = "kTanh", srclayer = "slice" },
  { name = "b", type = "kActivation", activation = "TANH", srclayer = "slice" },
  { name = "c", type = "kTanh", srclayer = "slice" },
  { name = "act", type = "kConcate", srclayer = { "a", "b", "c" }, concate_dim = 1 },
  { name = "fc", type = "kInnerProduct", srclayer = "act", num_output = 8 },
  { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc", "label" } },
}, { test_freq = 10, test_steps = 2 }), "kSlice into three activations and kConcate back")

do -- two inner products on one source: the engine's own gradient sum vs kSplit's
  local function two(split)
    local src = split and "split" or "fc0"
    local layers = {
      { name = "fc0", type = "kInnerProduct", srclayer = "image", num_output = 12 },
      { name = "fa", type = "kInnerProduct", srclayer = src, num_output = 4 },
      { name = "fb", type = "kInnerProduct", srclayer = src, num_output = 4 },
      { name = "join", type = "kConcate", srclayer = { "fa", "fb" }, concate_dim = 1 },
      { name = "loss", type = "kSoftmaxLoss", srclayer = { "join", "label" } },
    }
    if split then table.insert(layers, 2, { name = "split", type = "kSplit", srclayer = "fc0", num_splits = 2 }) end
    return train(layers, { test_freq = 10, test_steps = 2 })
  end
  local without, with = two(false), two(true)
  tap.ok(without.train.loss and with.train.loss == without.train.loss and with.test.loss == without.test.loss,
         "kSplit sums its destinations' gradients as the engine does",
         string.format("%s vs %s", tostring(with.train.loss), tostring(without.train.loss)))
end

do -- kActivation trains exactly like the layer it names
  local r = train({
    { name = "fc0", type = "kInnerProduct", srclayer = "image", num_output = 12 },
    { name = "act", type = "kActivation", activation = "TANH", srclayer = "fc0" },
    { name = "fc", type = "kInnerProduct", srclayer = "act", num_output = 8 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc", "label" } },
  }, { test_freq = 10, test_steps = 2 })
  same_as_base(r, "kActivation TANH trains exactly like kTanh")
end

do -- an embedding of the label learns to predict the label (the table's gradient, with momentum)
  local r = train({
    { name = "emb", type = "kEmbedding", srclayer = "label", vocab_size = 8, feature_dim = 8 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "emb", "label" } },
  }, { steps = 60, lr = 0.5, test_steps = 1 })
  tap.ok(r.test.accuracy == 1 and r.test.loss < 0.1,
         string.format("kEmbedding learns its table (accuracy %s, loss %s)", tostring(r.test.accuracy), tostring(r.test.loss)))
end

do -- kLRN and kSoftmax inside a trained net
  local r = train({
    { name = "norm", type = "kLRN", srclayer = "image", local_size = 1 },
    { name = "fc", type = "kInnerProduct", srclayer = "norm", num_output = 8 },
    { name = "soft", type = "kSoftmax", srclayer = "fc" },
    { name = "onehot", type = "kOneHot", srclayer = "label", vocab_size = 8 },
    { name = "loss", type = "kEuclideanLoss", srclayer = { "soft", "onehot" } },
    { name = "acc", type = "kAccuracy", srclayer = { "fc", "label" } },
  }, { steps = 100, lr = 0.5, test_steps = 2 })
  tap.ok(r.test.accuracy and r.test.accuracy > 0.9,
         string.format("kLRN -> kInnerProduct -> kSoftmax trained on squared error (accuracy %s)", tostring(r.test.accuracy)))
end

tap.done()

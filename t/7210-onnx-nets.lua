-- ONNX export (singa.export_onnx): the MLP, LeNet, the cifar10 net, the GRU demo's net and a net
-- of the other exported layer types, each trained a few steps, exported, checked by
-- python3-onnx's onnx.checker (full_check) and run in onnxruntime-node on a batch, whose outputs
-- must agree with singa.predict's to 1e-5.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"
local ot = require "onnxtools"

local why = ot.missing()
if why then
  print("1..0 # SKIP " .. why)
  return
end

local dir = td.tmpdir("7210-onnx-nets")
local function rand_gen(seed)
  local s = seed
  return function()
    s = (s * 1103515245 + 12345) % 2147483648
    return s / 2147483648
  end
end

-- The first n records of an IDX image file as rows of raw pixels.
local function idx_rows(images, n)
  local s = assert(td.read(images))
  local _, count, h, w = string.unpack(">I4I4I4I4", s)
  local rows = {}
  for i = 1, math.min(n, count) do
    local row, off = {}, 16 + (i - 1) * h * w
    for k = 1, h * w do row[k] = s:byte(off + k) end
    rows[i] = row
  end
  return rows, { #rows, h, w }
end

local function updater(lr)
  return { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = lr or 0.05 } }
end

-- Trains job, exports it, checks the file and compares onnxruntime's outputs with singa.predict's.
local function check(what, job, rows, dims, want_ops)
  local r = singa.train(job)
  local model = dir .. "/" .. job.name .. ".onnx"
  local info = singa.export_onnx(job, model)
  tap.ok(info.path == model and info.nodes > 0 and info.bytes > 0 and info.step == job.train_steps and
         info.checkpoint == td.ckpt(job.checkpoint_path, job.train_steps),
         what .. ": exported with the newest checkpoint's params", string.format("%s step %s", info.checkpoint, info.step))
  local ok, report = ot.check(model)
  tap.ok(ok and report:find("ir_version 7", 1, true) and report:find("opset ai.onnx:13", 1, true),
         what .. ": onnx.checker (full_check) accepts it, IR 7, opset 13", report)
  for _, op in ipairs(want_ops or {}) do
    tap.ok(report:find(" " .. op .. "%f[%s%z]") ~= nil, what .. ": written with " .. op, report)
  end
  tap.ok(report:find("inputs " .. info.input .. "\n", 1, true) and report:find("outputs " .. info.output .. "\n", 1, true),
         what .. ": input '" .. info.input .. "' and output '" .. info.output .. "' named after the layers", report)
  local want = singa.predict(job, rows)
  local lo, hi = math.huge, -math.huge
  for _, row in ipairs(want) do
    for _, v in ipairs(row) do lo, hi = math.min(lo, v), math.max(hi, v) end
  end
  tap.ok(hi - lo > 0.05, string.format("%s: its outputs differ (%.3g to %.3g), so agreeing means something", what, lo, hi))
  local got, out = ot.run(model, rows, dims, dir)
  local diff = got and ot.maxdiff(want, got) or math.huge
  tap.ok(got and diff <= 1e-5, string.format("%s: onnxruntime agrees with singa.predict on %d instances (max |diff| %.3g)",
                                             what, #rows, diff), out)
  return r
end

-- The Fashion-MNIST MLP's shape (demos/fmnist_mlp.lua), small: kMnist, fc, kReLU, kDropout.
local img, lab = td.idx(dir .. "/mnist", 200, 10, 12, 12, 7)
local rows, dims = idx_rows(img, 37)
local function data(batch)
  return { name = "data", type = "kIDXData", batchsize = batch or 20, shuffle = true, images = img, labels = lab }
end
check("MLP", {
  name = "mlp", seed = 1, train_steps = 6, checkpoint_path = dir .. "/mlp",
  updater = updater(),
  neuralnet = { layer = {
    data(),
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255, norm_b = 0.5 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 32 },
    { name = "relu1", type = "kReLU", srclayer = "fc1" },
    { name = "drop", type = "kDropout", srclayer = "relu1", dropout_ratio = 0.3 },
    { name = "fc2", type = "kInnerProduct", srclayer = "drop", num_output = 16, transpose = true },
    { name = "relu2", type = "kReLU", srclayer = "fc2" },
    { name = "fc3", type = "kInnerProduct", srclayer = "relu2", num_output = 10 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc3", "label" } },
  } },
}, rows, dims, { "Gemm", "Relu", "Identity", "Softmax", "Mul", "Sub" })

-- SINGA's conv.conf LeNet (demos/lenet.lua), on 12 x 12 images.
check("LeNet", {
  name = "lenet", seed = 2, train_steps = 4, checkpoint_path = dir .. "/lenet",
  updater = updater(0.01),
  neuralnet = { layer = {
    data(),
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "conv1", type = "kConvolution", srclayer = "image", num_filters = 6, kernel = 3 },
    { name = "pool1", type = "kPooling", srclayer = "conv1", pool = "MAX", kernel = 2, stride = 2 },
    { name = "conv2", type = "kConvolution", srclayer = "pool1", num_filters = 8, kernel = 2 },
    { name = "pool2", type = "kPooling", srclayer = "conv2", pool = "MAX", kernel = 2, stride = 2 },
    { name = "ip1", type = "kInnerProduct", srclayer = "pool2", num_output = 20 },
    { name = "relu1", type = "kReLU", srclayer = "ip1" },
    { name = "ip2", type = "kInnerProduct", srclayer = "relu1", num_output = 10 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "ip2", "label" } },
  } },
}, rows, dims, { "Conv", "MaxPool", "Flatten", "Gemm" })

-- The cifar10 net of demos/cifar10_cnn.lua (its layers, kernels, pads, strides, kLRN), on
-- generated CIFAR-format records.  singa.predict takes kRGBImage's batch as the layer gives it
-- (3 x 32 x 32 values after its mean and scale), so the ONNX input is that too.
local rnd = rand_gen(99)
local recs = {}
for i = 1, 40 do
  local px = {}
  for k = 1, 3072 do px[k] = string.char(math.floor(rnd() * 256)) end
  recs[i] = string.char((i - 1) % 10) .. table.concat(px)
end
td.write(dir .. "/cifar.bin", table.concat(recs))
local crows = {}
for i = 1, 9 do
  local row = {}
  for k = 1, 3072 do row[k] = (rnd() * 255 - 120.7) end
  crows[i] = row
end
local function lrn(name, src)
  return { name = name, type = "kLRN", srclayer = src, local_size = 3, alpha = 5e-2, beta = 0.75 }
end
check("cifar10 net", {
  name = "cifar", seed = 3, train_steps = 2, checkpoint_path = dir .. "/cifar",
  updater = updater(0.001),
  neuralnet = { layer = {
    { name = "data", type = "kRGBImage", path = dir .. "/cifar.bin", batchsize = 8, mean = 120.7 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "conv1", type = "kConvolution", srclayer = "data", num_filters = 32, kernel = 5, stride = 1, pad = 2,
      param = { { name = "w1", init = { type = "kGaussian", std = 0.01 } }, { name = "b1" } } },
    { name = "pool1", type = "kPooling", srclayer = "conv1", pool = "MAX", kernel = 3, stride = 2 },
    { name = "relu1", type = "kReLU", srclayer = "pool1" },
    lrn("norm1", "relu1"),
    { name = "conv2", type = "kConvolution", srclayer = "norm1", num_filters = 32, kernel = 5, stride = 1, pad = 2 },
    { name = "relu2", type = "kReLU", srclayer = "conv2" },
    { name = "pool2", type = "kPooling", srclayer = "relu2", pool = "AVG", kernel = 3, stride = 2 },
    lrn("norm2", "pool2"),
    { name = "conv3", type = "kConvolution", srclayer = "norm2", num_filters = 64, kernel = 5, stride = 1, pad = 2 },
    { name = "relu3", type = "kReLU", srclayer = "conv3" },
    { name = "pool3", type = "kPooling", srclayer = "relu3", pool = "AVG", kernel = 3, stride = 2, pad = 1 },
    { name = "ip1", type = "kInnerProduct", srclayer = "pool3", num_output = 10 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "ip1", "label" }, topk = 1 },
  } },
}, crows, { 9, 3, 32, 32 }, { "Conv", "MaxPool", "AveragePool", "LRN" })

-- demos/gru_fmnist.lua's net: a kSlice of the image's rows, the GRU unrolled over them.
check("GRU", {
  name = "gru", seed = 4, train_steps = 3, checkpoint_path = dir .. "/gru",
  train_one_batch = { alg = "kBPTT" },
  updater = { type = "kAdam", learning_rate = { type = "kFixed", base_lr = 0.01 } },
  neuralnet = { layer = {
    data(),
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255, norm_b = 0 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "rows", type = "kSlice", srclayer = "image", slice_dim = 1, num_slices = 12 },
    { name = "gru", type = "kGRU", srclayer = "rows", dim_hidden = 16, unroll_len = 12 },
    { name = "fc", type = "kInnerProduct", srclayer = "gru", num_output = 10 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc", "label" } },
  } },
}, rows, dims, { "Slice", "MatMul", "Sigmoid", "Tanh" })

-- The other types: kSTanh, kSigmoid, kTanh, kActivation, a leaky kReLU, kBM (2-d and 4-d), kSplit
-- into a kConcate, a kSlice of channels, and kSoftmax as the output.
check("other layers", {
  name = "others", seed = 5, train_steps = 5, checkpoint_path = dir .. "/others",
  updater = updater(0.02),
  neuralnet = { layer = {
    data(),
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "conv", type = "kConvolution", srclayer = "image", num_filters = 4, kernel = 3, pad = 1, stride = 2 },
    { name = "bm4", type = "kBM", srclayer = "conv" },
    { name = "chans", type = "kSlice", srclayer = "bm4", slice_dim = 1, num_slices = 2 },
    { name = "ca", type = "kSigmoid", srclayer = "chans" },
    { name = "cb", type = "kActivation", activation = "TANH", srclayer = "chans" },
    { name = "cat4", type = "kConcate", concate_dim = 1, srclayer = { "ca", "cb" } },
    { name = "fc1", type = "kInnerProduct", srclayer = "cat4", num_output = 24 },
    { name = "bm", type = "kBM", srclayer = "fc1", momentum = 0.5 },
    { name = "split", type = "kSplit", srclayer = "bm" },
    { name = "a", type = "kSTanh", srclayer = "split" },
    { name = "b", type = "kReLU", srclayer = "split", negative_slope = 0.1 },
    { name = "c", type = "kActivation", activation = "SIGMOID", srclayer = "split" },
    { name = "cat", type = "kConcate", concate_dim = 1, srclayer = { "a", "b", "c" } },
    { name = "d", type = "kTanh", srclayer = "cat" },
    { name = "fc2", type = "kInnerProduct", srclayer = "d", num_output = 10, bias_term = false },
    { name = "prob", type = "kSoftmax", srclayer = "fc2" },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "target", type = "kOneHot", srclayer = "label", vocab_size = 10 },
    { name = "loss", type = "kEuclideanLoss", srclayer = { "prob", "target" } },
  } },
}, rows, dims, { "BatchNormalization", "Concat", "Slice", "LeakyRelu", "Sigmoid", "Tanh", "Softmax" })

-- kEmbedding reads an index per instance (index -1: a zero vector).
local lines = {}
for i = 1, 60 do lines[i] = string.format("%d,%d", i % 3, (i * 7) % 6) end
td.write(dir .. "/index.csv", table.concat(lines, "\n") .. "\n")
check("embedding", {
  name = "embedding", seed = 6, train_steps = 4, checkpoint_path = dir .. "/embedding",
  updater = updater(0.1),
  neuralnet = { layer = {
    { name = "data", type = "kCSVInput", path = dir .. "/index.csv", batchsize = 12 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "embed", type = "kEmbedding", srclayer = "data", vocab_size = 6, feature_dim = 5,
      param = { { name = "table", init = { type = "kGaussian", std = 1 } } } },
    { name = "fc", type = "kInnerProduct", srclayer = "embed", num_output = 3 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc", "label" } },
  } },
}, { { 0 }, { 5 }, { -1 }, { 3 }, { 2 }, { -1 }, { 1 } }, { 7, 1 }, { "Gather", "Cast" })

tap.done()

-- Plugin layers export themselves (plugin ABI 1.4, singa_layer_type's export_onnx): kSwish
-- (plugins/swish.c: Mul, Sigmoid) and kPReLU (plugins/prelu.c: PRelu, on a matrix, on N x C x H x W
-- and with one shared slope), trained, exported, checked and run in onnxruntime-node against
-- singa.predict.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"
local ot = require "onnxtools"

local why = ot.missing()
if why then
  print("1..0 # SKIP " .. why)
  return
end
local dir = td.tmpdir("7250-onnx-plugin")
local img, lab = td.idx(dir .. "/data", 120, 10, 10, 10, 11)
local s = assert(td.read(img))
local rows = {}
for i = 1, 23 do
  local row = {}
  for k = 1, 100 do row[k] = s:byte(16 + (i - 1) * 100 + k) end
  rows[i] = row
end

local job = {
  name = "plugins", seed = 7, train_steps = 5, checkpoint_path = dir .. "/ckpt",
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = { layer = {
    { name = "data", type = "kIDXData", batchsize = 20, shuffle = true, images = img, labels = lab },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255, norm_b = 0.5 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "conv", type = "kConvolution", srclayer = "image", num_filters = 3, kernel = 3, stride = 2 },
    { name = "prelu4", type = "kPReLU", srclayer = "conv",
      param = { { name = "slopes4", init = { type = "kUniform", low = -0.5, high = 0.5 } } } },
    { name = "fc1", type = "kInnerProduct", srclayer = "prelu4", num_output = 16 },
    { name = "swish", type = "kSwish", srclayer = "fc1", beta = 1.5 },
    { name = "prelu", type = "kPReLU", srclayer = "swish",
      param = { { name = "slopes", init = { type = "kUniform", low = 0.1, high = 0.9 } } } },
    { name = "fc2", type = "kInnerProduct", srclayer = "prelu", num_output = 12 },
    { name = "shared", type = "kPReLU", srclayer = "fc2", channel_shared = true,
      param = { { name = "slope1", init = { type = "kConstant", value = -0.3 } } } },
    { name = "fc3", type = "kInnerProduct", srclayer = "shared", num_output = 10 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc3", "label" } },
  } },
}
singa.train(job)
local model = dir .. "/plugins.onnx"
local info = singa.export_onnx(job, model)
tap.ok(info.output == "loss" and info.step == 5, "a net of plugin layers exports")
local ok, report = ot.check(model)
tap.ok(ok and report:find("PRelu", 1, true) and report:find("Sigmoid", 1, true), "onnx.checker accepts it, with PRelu and Sigmoid", report)
local want, got, out = singa.predict(job, rows), ot.run(model, rows, { 23, 10, 10 }, dir)
local diff = got and ot.maxdiff(want, got) or math.huge
tap.ok(diff <= 1e-5, string.format("onnxruntime agrees with singa.predict (max |diff| %.3g)", diff), out)
tap.done()

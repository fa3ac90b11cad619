-- The CIFAR-10 convnet of SINGA's examples/cifar10/job.conf (v0.2 - v0.3), on the CIFAR-10
-- binary files.  Matched: the layers conv1 (32 5x5, pad 2) -> pool1 (MAX 3/2) -> relu1 -> norm1
-- (LRN local_size 3, alpha 5e-5, beta 0.75) -> conv2 (32 5x5, pad 2) -> relu2 -> pool2 (AVG 3/2)
-- -> norm2 -> conv3 (64 5x5, pad 2) -> relu3 -> pool3 (AVG 3/2) -> ip1 (10) -> softmax loss; the
-- params' inits (Gaussian std 1e-4 for w1, 0.01 for w2-w4, biases 0), lr_scale 2 / wd_scale 0
-- on biases and wd_scale 250 on w4; kSGD with momentum 0.9 and weight decay 0.004; kFixedStep
-- learning rates 0.001, 1e-4, 1e-5 from steps 0, 60000, 65000; train batch 64, test batch 100;
-- 1000 training steps, 100 test steps every 300, display every 30.
-- Different: SINGA read a shard or record file made by its create_data tool and subtracted the
-- per-pixel mean in image_mean.bin; here kRGBImage reads the .bin files directly and subtracts
-- one number, the mean pixel of the training set (kRGBImage's `meanfile` takes a per-pixel mean
-- instead).  Our kLRN works across channels, as SINGA's did from v0.2 on.
--
-- Run: ./singa-tui -e demos/cifar10_cnn.lua [DIR [TRAIN_STEPS [THREADS]]]
-- DIR (default $CIFAR10_DIR, else ./cifar-10-batches-bin) holds data_batch_1.bin ...
-- data_batch_5.bin and test_batch.bin from https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz
local singa = require "singa"

local dir = (arg and arg[1]) or os.getenv("CIFAR10_DIR") or "cifar-10-batches-bin"
local steps = tonumber(arg and arg[2]) or 1000
local threads = tonumber(arg and arg[3]) or 1

local train_files = {}
for i = 1, 5 do train_files[i] = dir .. "/data_batch_" .. i .. ".bin" end
local test_file = dir .. "/test_batch.bin"
for _, f in ipairs{ train_files[1], train_files[2], train_files[3], train_files[4], train_files[5], test_file } do
  local h = io.open(f, "rb")
  if not h then
    io.stderr:write(string.format([[
cifar10_cnn: cannot read '%s'.
This demo needs the CIFAR-10 binary version: download
  https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz
unpack it (tar xzf cifar-10-binary.tar.gz) and point CIFAR10_DIR, or the first argument, at the
cifar-10-batches-bin folder holding data_batch_1.bin ... data_batch_5.bin and test_batch.bin:
  CIFAR10_DIR=/path/to/cifar-10-batches-bin ./singa-tui -e demos/cifar10_cnn.lua
  ./singa-tui -e demos/cifar10_cnn.lua /path/to/cifar-10-batches-bin [train_steps] [threads]
]], f))
    os.exit(1)
  end
  h:close()
end

local MEAN = 120.7 -- the mean pixel value of the CIFAR-10 training set

local function params(w, std, b, ws)
  return { { name = w, init = { type = "kGaussian", std = std }, wd_scale = ws },
           { name = b, lr_scale = 2, wd_scale = 0, init = { type = "kConstant", value = 0 } } }
end
local function lrn(name, src)
  return { name = name, type = "kLRN", srclayer = src, local_size = 3, alpha = 5e-5, beta = 0.75 }
end

local job = {
  name = "cifar10-convnet", seed = 1,
  train_steps = steps, disp_freq = 30, test_freq = 300, test_steps = 100,
  checkpoint_freq = 1000, checkpoint_path = "ckpt/cifar10-cnn",
  overwrite = true, -- each run starts over: its first checkpoint replaces the last run's
  num_openblas_threads = threads,
  updater = { type = "kSGD", momentum = 0.9, weight_decay = 0.004,
              learning_rate = { type = "kFixedStep", step = { 0, 60000, 65000 }, step_lr = { 0.001, 0.0001, 0.00001 } } },
  neuralnet = { layer = {
    { name = "data", type = "kRGBImage", exclude = "kTest", path = train_files, batchsize = 64, shuffle = true, mean = MEAN },
    { name = "data", type = "kRGBImage", exclude = "kTrain", path = test_file, batchsize = 100, mean = MEAN },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "conv1", type = "kConvolution", srclayer = "data", num_filters = 32, kernel = 5, stride = 1, pad = 2,
      param = params("w1", 0.0001, "b1") },
    { name = "pool1", type = "kPooling", srclayer = "conv1", pool = "MAX", kernel = 3, stride = 2 },
    { name = "relu1", type = "kReLU", srclayer = "pool1" },
    lrn("norm1", "relu1"),
    { name = "conv2", type = "kConvolution", srclayer = "norm1", num_filters = 32, kernel = 5, stride = 1, pad = 2,
      param = params("w2", 0.01, "b2") },
    { name = "relu2", type = "kReLU", srclayer = "conv2" },
    { name = "pool2", type = "kPooling", srclayer = "relu2", pool = "AVG", kernel = 3, stride = 2 },
    lrn("norm2", "pool2"),
    { name = "conv3", type = "kConvolution", srclayer = "norm2", num_filters = 64, kernel = 5, stride = 1, pad = 2,
      param = params("w3", 0.01, "b3") },
    { name = "relu3", type = "kReLU", srclayer = "conv3" },
    { name = "pool3", type = "kPooling", srclayer = "relu3", pool = "AVG", kernel = 3, stride = 2 },
    { name = "ip1", type = "kInnerProduct", srclayer = "pool3", num_output = 10, param = params("w4", 0.01, "b4", 250) },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "ip1", "label" }, topk = 1 },
  } },
}
local r = singa.train(job)
print(string.format("test accuracy %.4f (train loss %.4f) after %d steps in %.1f s",
                    r.test.accuracy, r.train.loss, r.steps, r.seconds))
require("singa.demo").model(job, r, "singa.predict(job, images), job being this script's table: per image "
                            .. "(a row of its 3072 pixel values as in the .bin files, 0-255) its 10 class probabilities")

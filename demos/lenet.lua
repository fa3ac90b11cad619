-- LeNet as in SINGA's examples/mnist/conv.conf: conv20-5, maxpool 2/2, conv50-5, maxpool 2/2,
-- ip500, relu, ip10; here on Fashion-MNIST.  Run: ./singa-tui -e demos/lenet.lua [train_steps] [threads]
local singa = require "singa"
local fm = os.getenv("FMNIST_DIR") or "/usr/share/datasets/fashion-mnist/"

local function params(w, b)
  return { { name = w, init = { type = "kUniformSqrtFanIn" } }, { name = b, lr_scale = 2, wd_scale = 0 } }
end

local job = {
  name = "lenet", seed = 1,
  train_steps = tonumber(arg and arg[1]) or 12000, disp_freq = 500,
  test_freq = 4000, test_steps = 100,
  checkpoint_freq = 4000, checkpoint_path = "ckpt/lenet",
  overwrite = true, -- each run starts over: its first checkpoint replaces the last run's
  num_openblas_threads = tonumber(arg and arg[2]) or 1,
  updater = { type = "kSGD", momentum = 0.9, weight_decay = 5e-4,
              learning_rate = { type = "kStep", base_lr = 0.02, gamma = 0.2, change_freq = 5000 } },
  neuralnet = { layer = {
    { name = "data", type = "kIDXData", exclude = "kTest", batchsize = 64, shuffle = true,
      images = fm .. "train-images-idx3-ubyte.gz", labels = fm .. "train-labels-idx1-ubyte.gz" },
    { name = "data", type = "kIDXData", exclude = "kTrain", batchsize = 100,
      images = fm .. "t10k-images-idx3-ubyte.gz", labels = fm .. "t10k-labels-idx1-ubyte.gz" },
    { name = "mnist", type = "kMnist", srclayer = "data", norm_a = 255, norm_b = 0 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "conv1", type = "kConvolution", srclayer = "mnist", num_filters = 20, kernel = 5,
      param = params("w1", "b1") },
    { name = "pool1", type = "kPooling", srclayer = "conv1", pool = "MAX", kernel = 2, stride = 2 },
    { name = "conv2", type = "kConvolution", srclayer = "pool1", num_filters = 50, kernel = 5,
      param = params("w2", "b2") },
    { name = "pool2", type = "kPooling", srclayer = "conv2", pool = "MAX", kernel = 2, stride = 2 },
    { name = "ip1", type = "kInnerProduct", srclayer = "pool2", num_output = 500, param = params("w3", "b3") },
    { name = "relu1", type = "kReLU", srclayer = "ip1" },
    { name = "ip2", type = "kInnerProduct", srclayer = "relu1", num_output = 10, param = params("w4", "b4") },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "ip2", "label" } },
  } },
}
local r = singa.train(job)
print(string.format("test accuracy %.4f (train loss %.4f) after %d steps in %.1f s",
                    r.test.accuracy, r.train.loss, r.steps, r.seconds))
require("singa.demo").model(job, r, "singa.predict(job, images), job being this script's table: per image "
                            .. "(a row of 784 pixel values, 0-255) its 10 class probabilities")

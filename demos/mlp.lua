-- SINGA's MNIST MLP example (examples/mnist/job.conf): 784-2500-2000-1500-1000-500-10 with
-- scaled tanh, uniform init in [-0.05, 0.05], SGD with a slowly decaying step schedule; here on
-- Fashion-MNIST.  Run: ./singa-tui -e demos/mlp.lua [train_steps] [threads]
local singa = require "singa"
local fm = os.getenv("FMNIST_DIR") or "/usr/share/datasets/fashion-mnist/"

local layers = {
  { name = "data", type = "kIDXData", exclude = "kTest", batchsize = 64, shuffle = true,
    images = fm .. "train-images-idx3-ubyte.gz", labels = fm .. "train-labels-idx1-ubyte.gz" },
  { name = "data", type = "kIDXData", exclude = "kTrain", batchsize = 100,
    images = fm .. "t10k-images-idx3-ubyte.gz", labels = fm .. "t10k-labels-idx1-ubyte.gz" },
  { name = "mnist", type = "kMnist", srclayer = "data", norm_a = 127.5, norm_b = 1 },
  { name = "label", type = "kLabel", srclayer = "data" },
}
local src = "mnist"
for i, width in ipairs{ 2500, 2000, 1500, 1000, 500, 10 } do
  local uniform = { type = "kUniform", low = -0.05, high = 0.05 }
  layers[#layers + 1] = { name = "fc" .. i, type = "kInnerProduct", srclayer = src, num_output = width,
                          param = { { name = "w" .. i, init = uniform }, { name = "b" .. i, init = uniform } } }
  src = "fc" .. i
  if width ~= 10 then
    layers[#layers + 1] = { name = "tanh" .. i, type = "kSTanh", srclayer = src }
    src = "tanh" .. i
  end
end
layers[#layers + 1] = { name = "loss", type = "kSoftmaxLoss", srclayer = { src, "label" } }

local r = singa.train{
  name = "mlp", seed = 1,
  train_steps = tonumber(arg and arg[1]) or 1000, disp_freq = 100,
  test_freq = 500, test_steps = 100,
  num_openblas_threads = tonumber(arg and arg[2]) or 1,
  updater = { type = "kSGD",
              learning_rate = { type = "kStep", base_lr = 0.001, gamma = 0.997, change_freq = 60 } },
  neuralnet = { layer = layers },
}
print(string.format("test accuracy %.4f (train loss %.4f) after %d steps in %.1f s",
                    r.test.accuracy, r.train.loss, r.steps, r.seconds))

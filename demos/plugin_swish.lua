-- demos/fmnist_mlp.lua's MLP (784-512-256-10) with the plugin activation kSwish
-- (plugins/swish.c: x * sigmoid(beta x)) in place of kReLU.  singa-tui loads plugins/swish.so
-- by itself; this script only names the type.  Run: ./singa-tui -e demos/plugin_swish.lua [train_steps]
local singa = require "singa"
local fm = os.getenv("FMNIST_DIR") or "/usr/share/datasets/fashion-mnist/"

for _, p in ipairs(singa.plugins()) do
  print(string.format("plugin %s %s: %s (%s)", p.name, p.version, table.concat(p.types, ", "), p.path))
end

local job = {
  name = "plugin-swish", seed = 1,
  train_steps = tonumber(arg and arg[1]) or 12000, disp_freq = 1000,
  test_freq = 4000, test_steps = 100,
  checkpoint_freq = 4000, checkpoint_path = "ckpt/plugin-swish",
  overwrite = true, -- each run starts over: its first checkpoint replaces the last run's
  updater = { type = "kSGD", momentum = 0.9, weight_decay = 5e-5,
              learning_rate = { type = "kStep", base_lr = 0.04, gamma = 0.3, change_freq = 5000 } },
  neuralnet = { layer = {
    { name = "data", type = "kIDXData", exclude = "kTest", batchsize = 64, shuffle = true,
      images = fm .. "train-images-idx3-ubyte.gz", labels = fm .. "train-labels-idx1-ubyte.gz" },
    { name = "data", type = "kIDXData", exclude = "kTrain", batchsize = 100,
      images = fm .. "t10k-images-idx3-ubyte.gz", labels = fm .. "t10k-labels-idx1-ubyte.gz" },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255, norm_b = 0 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 512 },
    { name = "swish1", type = "kSwish", srclayer = "fc1" },
    { name = "fc2", type = "kInnerProduct", srclayer = "swish1", num_output = 256 },
    { name = "swish2", type = "kSwish", srclayer = "fc2", beta = 1.5 },
    { name = "fc3", type = "kInnerProduct", srclayer = "swish2", num_output = 10 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc3", "label" } },
  } },
}
local r = singa.train(job)
print(string.format("test accuracy %.4f (train loss %.4f) after %d steps in %.1f s",
                    r.test.accuracy, r.train.loss, r.steps, r.seconds))
require("singa.demo").model(job, r, "singa.predict(job, images), job being this script's table: per image "
                            .. "(a row of 784 pixel values, 0-255) its 10 class probabilities")

-- A GRU reading each Fashion-MNIST image as 28 rows of 28 pixels, one row per time step, then a
-- classifier on the last state.  The net is unrolled 28 times and trained by back-propagation
-- through time.  Run: ./singa-tui -e demos/gru_fmnist.lua [train_steps] [threads]
local singa = require "singa"
local fm = os.getenv("FMNIST_DIR") or "/usr/share/datasets/fashion-mnist/"

local job = {
  name = "gru-fmnist", seed = 1,
  train_steps = tonumber(arg and arg[1]) or 6000, disp_freq = 500,
  test_freq = 2000, test_steps = 100,
  checkpoint_freq = 2000, checkpoint_path = "ckpt/gru-fmnist",
  overwrite = true, -- each run starts over: its first checkpoint replaces the last run's
  num_openblas_threads = tonumber(arg and arg[2]) or 1,
  train_one_batch = { alg = "kBPTT" },
  updater = { type = "kAdam", learning_rate = { type = "kStep", base_lr = 0.002, gamma = 0.3, change_freq = 2500 } },
  neuralnet = { layer = {
    { name = "data", type = "kIDXData", exclude = "kTest", batchsize = 64, shuffle = true,
      images = fm .. "train-images-idx3-ubyte.gz", labels = fm .. "train-labels-idx1-ubyte.gz" },
    { name = "data", type = "kIDXData", exclude = "kTrain", batchsize = 100,
      images = fm .. "t10k-images-idx3-ubyte.gz", labels = fm .. "t10k-labels-idx1-ubyte.gz" },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255, norm_b = 0 },
    { name = "label", type = "kLabel", srclayer = "data" },
    -- the k-th destination of a kSlice reads slice k: copy k of the GRU reads row k
    { name = "rows", type = "kSlice", srclayer = "image", slice_dim = 1, num_slices = 28 },
    { name = "gru", type = "kGRU", srclayer = "rows", dim_hidden = 128, unroll_len = 28 },
    -- a single layer reading an unrolled one reads its last copy
    { name = "fc", type = "kInnerProduct", srclayer = "gru", num_output = 10 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc", "label" } },
  } },
}
local r = singa.train(job)
print(string.format("test accuracy %.4f (train loss %.4f) after %d steps in %.1f s",
                    r.test.accuracy, r.train.loss, r.steps, r.seconds))
require("singa.demo").model(job, r, "singa.predict(job, images), job being this script's table: per image "
                            .. "(a row of 784 pixel values, 0-255) its 10 class probabilities")

-- tui-tiny.lua [STEPS] [CHECKPOINT_PATH]: a tiny job for the workbench's tests (t/61xx), endless
-- unless STEPS is given; it reads the IDX files testdata writes into the test's folder.
local singa = require "singa"
local td = require "testdata"
local img, lab = td.idx("data", 64, 4)
singa.train{
  name = "tiny", seed = 1, train_steps = tonumber(arg[1]) or 100000000, disp_freq = 100000,
  checkpoint_path = arg[2],
  updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = { layer = {
    { name = "data", type = "kIDXData", batchsize = 16, images = img, labels = lab },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "fc", type = "kInnerProduct", srclayer = "image", num_output = 4 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc", "label" } },
  } },
}

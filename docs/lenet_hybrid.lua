-- The picture in the README: LeNet partitioned the "one weird trick" way over a group of 2
-- workers, convolution layers on the batch dimension and fully connected layers on the features.
-- Drawn with: ./singa-tui --dot docs/lenet_hybrid.lua | dot -Tsvg -o docs/lenet_hybrid.svg
local singa = require "singa"
local fm = os.getenv("FMNIST_DIR") or "/usr/share/datasets/fashion-mnist/"

singa.train{
  train_steps = 1000,
  cluster = singa.cluster.sandblaster{ workers = 2, servers = 1 },
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.01 } },
  neuralnet = { partition_dim = 0, layer = {
    { name = "data", type = "kIDXData", batchsize = 64,
      images = fm .. "train-images-idx3-ubyte.gz", labels = fm .. "train-labels-idx1-ubyte.gz" },
    { name = "mnist", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "conv1", type = "kConvolution", srclayer = "mnist", num_filters = 20, kernel = 5 },
    { name = "pool1", type = "kPooling", srclayer = "conv1", pool = "MAX", kernel = 2, stride = 2 },
    { name = "conv2", type = "kConvolution", srclayer = "pool1", num_filters = 50, kernel = 5 },
    { name = "pool2", type = "kPooling", srclayer = "conv2", pool = "MAX", kernel = 2, stride = 2 },
    { name = "ip1", type = "kInnerProduct", srclayer = "pool2", num_output = 500, partition_dim = 1 },
    { name = "relu1", type = "kReLU", srclayer = "ip1", partition_dim = 1 },
    { name = "ip2", type = "kInnerProduct", srclayer = "relu1", num_output = 10, partition_dim = 1 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "ip2", "label" } },
  } },
}

-- Benchmark job: LeNet (conv20-5, maxpool 2/2, conv50-5, maxpool 2/2, ip500, relu, ip10), batch 64,
-- SGD momentum 0.9, lr 0.01, on the Fashion-MNIST training set, as bench/torch_ref.py --model lenet.
--
-- usage: singa-tui -e bench/lenet.lua [THREADS [STEPS [WARMUP]]]
-- Prints: RESULT images_per_sec=<n> seconds=<s> steps=<n> threads=<n>
local bench = dofile((arg[0]:match("^(.*)/") or ".") .. "/common.lua")

local batch = 64
local function layers()
  local l = bench.data_layers(batch)
  local function add(t) l[#l + 1] = t end
  add { name = "conv1", type = "kConvolution", srclayer = "image", num_filters = 20, kernel = 5 }
  add { name = "pool1", type = "kPooling", srclayer = "conv1", pool = "MAX", kernel = 2, stride = 2 }
  add { name = "conv2", type = "kConvolution", srclayer = "pool1", num_filters = 50, kernel = 5 }
  add { name = "pool2", type = "kPooling", srclayer = "conv2", pool = "MAX", kernel = 2, stride = 2 }
  add { name = "ip1", type = "kInnerProduct", srclayer = "pool2", num_output = 500 }
  add { name = "relu1", type = "kReLU", srclayer = "ip1" }
  add { name = "ip2", type = "kInnerProduct", srclayer = "relu1", num_output = 10 }
  add { name = "loss", type = "kSoftmaxLoss", srclayer = { "ip2", "label" } }
  return l
end

bench.run { name = "bench-lenet", batch = batch, base_lr = 0.01, layers = layers, default_steps = 300 }

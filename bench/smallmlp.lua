-- Benchmark job: small MLP 784-512-256-10 ReLU, batch 128, SGD momentum 0.9, lr 0.01, on the
-- Fashion-MNIST training set (Debian package dataset-fashion-mnist), as bench/torch_ref.py --model smallmlp.
--
-- usage: singa-tui -e bench/smallmlp.lua [THREADS [STEPS [WARMUP]]]
--   THREADS  num_openblas_threads (default 1)
--   STEPS    timed training steps (default 2000)
--   WARMUP   steps of a separate, untimed job run first (default 20; 0 to skip)
-- Prints: RESULT images_per_sec=<n> seconds=<s> steps=<n> threads=<n>
local bench = dofile((arg[0]:match("^(.*)/") or ".") .. "/common.lua")

local batch = 128
local function layers()
  local l = bench.data_layers(batch)
  local prev = "image"
  for i, n in ipairs { 512, 256 } do
    l[#l + 1] = { name = "fc" .. i, type = "kInnerProduct", srclayer = prev, num_output = n }
    l[#l + 1] = { name = "relu" .. i, type = "kReLU", srclayer = "fc" .. i }
    prev = "relu" .. i
  end
  l[#l + 1] = { name = "fc3", type = "kInnerProduct", srclayer = prev, num_output = 10 }
  l[#l + 1] = { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc3", "label" } }
  return l
end

bench.run { name = "bench-smallmlp", batch = batch, base_lr = 0.01, layers = layers, default_steps = 2000 }

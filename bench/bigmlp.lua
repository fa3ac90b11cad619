-- Benchmark job: big MLP 784-2500-2000-1500-1000-500-10 tanh (SINGA's MNIST example with kTanh, as
-- the PyTorch reference uses tanh), batch 64, SGD momentum 0.9, lr 0.001, on the Fashion-MNIST
-- training set (Debian package dataset-fashion-mnist), as bench/torch_ref.py --model bigmlp.
--
-- usage: singa-tui -e bench/bigmlp.lua [THREADS [STEPS [WARMUP]]]
--   THREADS  num_openblas_threads (default 1)
--   STEPS    timed training steps (default 200)
--   WARMUP   steps of a separate, untimed job run first (default 5; 0 to skip)
-- Prints: RESULT images_per_sec=<n> seconds=<s> steps=<n> threads=<n>
local bench = dofile((arg[0]:match("^(.*)/") or ".") .. "/common.lua")

local batch = 64
local function layers() return bench.bigmlp_layers(batch) end

bench.run { name = "bench-bigmlp", batch = batch, base_lr = 0.001, layers = layers, default_steps = 200,
            default_warmup = 5 }

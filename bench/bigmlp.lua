-- Benchmark job: big MLP 784-2500-2000-1500-1000-500-10 tanh (SINGA's MNIST example with kTanh, as
-- the PyTorch reference uses tanh), batch 64, SGD momentum 0.9, lr 0.001, on the Fashion-MNIST
-- training set (Debian package dataset-fashion-mnist), as bench/torch_ref.py --model bigmlp.
--
-- usage: singa-tui -e bench/bigmlp.lua [THREADS [STEPS [WARMUP [BATCH]]]]
--   THREADS  num_openblas_threads (default 1)
--   STEPS    timed training steps (default 200)
--   WARMUP   steps of a separate, untimed job run first (default 5; 0 to skip)
--   BATCH    the batch (default 64; bench/ceiling.sh times a process's share of a split one)
-- Prints: RESULT images_per_sec=<n> seconds=<s> steps=<n> threads=<n>
local bench = dofile((arg[0]:match("^(.*)/") or ".") .. "/common.lua")

local batch = math.tointeger(tonumber(arg[4] or 64))
if not batch or batch < 1 then error("argument 4 (BATCH) must be a positive integer, got '" .. tostring(arg[4]) .. "'", 0) end
local function layers() return bench.bigmlp_layers(batch) end

bench.run { name = "bench-bigmlp", batch = batch, base_lr = 0.001, layers = layers, default_steps = 200,
            default_warmup = 5 }

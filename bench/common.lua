-- Shared by the benchmark jobs bench/smallmlp.lua, bench/bigmlp.lua and bench/replicas.lua.
local singa = require "singa"

local M = {}

M.dataset = os.getenv("SINGA_BENCH_DATA") or "/usr/share/datasets/fashion-mnist/"

-- The data layers: Fashion-MNIST training images and labels, shuffled, scaled to [0, 1].
function M.data_layers(batch)
  local fm = M.dataset
  return {
    { name = "data", type = "kIDXData", batchsize = batch, shuffle = true,
      images = fm .. "train-images-idx3-ubyte.gz", labels = fm .. "train-labels-idx1-ubyte.gz" },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255, norm_b = 0 },
    { name = "label", type = "kLabel", srclayer = "data" },
  }
end

-- SINGA's big MLP, 784-2500-2000-1500-1000-500-10 tanh, on data_layers(batch).
function M.bigmlp_layers(batch)
  local l = M.data_layers(batch)
  local prev = "image"
  for i, n in ipairs { 2500, 2000, 1500, 1000, 500 } do
    l[#l + 1] = { name = "fc" .. i, type = "kInnerProduct", srclayer = prev, num_output = n }
    l[#l + 1] = { name = "tanh" .. i, type = "kTanh", srclayer = "fc" .. i }
    prev = "tanh" .. i
  end
  l[#l + 1] = { name = "fc6", type = "kInnerProduct", srclayer = prev, num_output = 10 }
  l[#l + 1] = { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc6", "label" } }
  return l
end

local function job(o, threads, steps)
  return {
    name = o.name, seed = 1, train_steps = steps, disp_freq = 0, test_steps = 0,
    num_openblas_threads = threads, profile = os.getenv("BENCH_PROFILE") == "1",
    -- BENCH_WORKERS=n: a Sandblaster group of n workers in this process (the distributed runtime)
    cluster = tonumber(os.getenv("BENCH_WORKERS") or "1") > 1 and singa.cluster.sandblaster{ workers = tonumber(os.getenv("BENCH_WORKERS")) } or nil,
    updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = o.base_lr } },
    neuralnet = { layer = o.layers() },
  }
end

local function int_arg(i, default, min)
  local v = arg[i]
  if v == nil or v == "" then return default end
  local n = math.tointeger(tonumber(v))
  if not n or n < min then error(string.format("argument %d must be an integer >= %d, got '%s'", i, min, v), 0) end
  return n
end

-- o: name, batch, base_lr, layers (function returning the layer list), default_steps, default_warmup.
-- Arguments: THREADS STEPS WARMUP.  The warm-up is a separate short job run first (untimed), so that
-- OpenBLAS's thread pool and the CPU are warm when the timed job starts; the timed job's seconds
-- cover its training loop only (its data files are read when it is created, before the clock).
function M.run(o)
  local threads = int_arg(1, 1, 1)
  local steps = int_arg(2, o.default_steps, 1)
  local warmup = int_arg(3, o.default_warmup or 20, 0)
  if warmup > 0 then singa.train(job(o, threads, warmup)) end
  collectgarbage()
  local r = singa.train(job(o, threads, steps))
  print(string.format("RESULT images_per_sec=%.0f seconds=%.3f steps=%d threads=%d",
                      o.batch * r.steps / r.seconds, r.seconds, r.steps, threads))
  for _, l in ipairs(r.profile or {}) do
    print(string.format("LAYER %s %s %.4f %.4f", l.name, l.type, l.forward_ms, l.backward_ms))
  end
end

return M

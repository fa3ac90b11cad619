-- Time to accuracy (bench/tta.sh): the big MLP (bench/bigmlp.lua's net: 784-2500-2000-1500-1000-
-- 500-10 tanh, batch 64, SGD momentum 0.9, lr 0.01 or $BENCH_TTA_LR: bench/bigmlp.lua's 0.001,
-- tuned for speed, takes twice the steps to 84.5%) on Fashion-MNIST, tested on 2,000 test images
-- (20 batches of 100) every 100 steps, by one process or by 2 processes in one of the ways below.
-- The time to the target is read from the --metrics file's test records by bench/tta.sh.
--
-- usage: singa-tui [--procs 2] [--metrics FILE] -e bench/tta.lua CONFIG [STEPS]
--   CONFIG  one:                one process, no cluster
--           allreduce:          a worker and a server in each of 2 processes, the batch split
--           allreduce-powersgd: the same, cluster.compress = { powersgd = 4 }
--           hogwild:            a server group per process, each its own batch of 64, synced
--                               every 50 steps SINGA's way
--           hogwild-outer:      the same, the sync by an outer Nesterov (momentum 0.9, lr 0.7)
--           feature:            the net cut on its features across the 2 processes
--           pipeline:           fc1-fc2 on one process, fc3-fc6 on the other (location), 8
--                               micro-batches a step
--   STEPS   training steps (default 2500); a test every 100 and at the end
-- Prints `RESULT config=<s> steps=<n> seconds=<s> images=<n>`: the images one step trains (64,
-- or 128 where each process's group has a batch of its own).
local singa = require "singa"

local here = arg[0]:match("^(.*)/") or "."
local bench = dofile(here .. "/common.lua")
local usage = "usage: singa-tui [--procs 2] [--metrics FILE] -e bench/tta.lua CONFIG [STEPS]"
local config, steps = arg[1] or error(usage, 0), math.tointeger(tonumber(arg[2] or 2500))
if not steps or steps < 1 then error("STEPS must be a positive integer\n" .. usage, 0) end

local batch = 64
local function layers(second_from)
  local l = bench.data_layers(batch)
  l[1].exclude = "kTest"
  table.insert(l, 2, { name = "data", type = "kIDXData", exclude = "kTrain", batchsize = 100,
                       images = bench.dataset .. "t10k-images-idx3-ubyte.gz",
                       labels = bench.dataset .. "t10k-labels-idx1-ubyte.gz" })
  local prev = "image"
  for i, n in ipairs { 2500, 2000, 1500, 1000, 500, 10 } do
    local at = second_from and i >= second_from and 1 or nil
    l[#l + 1] = { name = "fc" .. i, type = "kInnerProduct", srclayer = prev, num_output = n, location = at }
    prev = "fc" .. i
    if i < 6 then
      l[#l + 1] = { name = "tanh" .. i, type = "kTanh", srclayer = prev, location = at }
      prev = "tanh" .. i
    end
  end
  l[#l + 1] = { name = "loss", type = "kSoftmaxLoss", srclayer = { prev, "label" }, location = second_from and 1 or nil }
  return l
end

local allreduce = function(extra)
  local o = { workers = 2, procs = 2 }
  for k, v in pairs(extra or {}) do o[k] = v end
  return singa.cluster.allreduce(o)
end
local hogwild = function(extra)
  local o = { groups = 2, procs = 2, sync_freq = 50 }
  for k, v in pairs(extra or {}) do o[k] = v end
  return singa.cluster.hogwild(o)
end
-- Each made when chosen: a field another configuration needs is not asked of this build.
local configs = {
  one = function() return { net = { layer = layers() } } end,
  allreduce = function() return { cluster = allreduce(), net = { layer = layers() } } end,
  ["allreduce-powersgd"] = function()
    return { cluster = allreduce { compress = { powersgd = 4 } }, net = { layer = layers() } }
  end,
  hogwild = function() return { cluster = hogwild(), net = { layer = layers() }, groups = 2 } end,
  ["hogwild-outer"] = function()
    return { cluster = hogwild { outer = { type = "kNesterov", momentum = 0.9,
                                           learning_rate = { type = "kFixed", base_lr = 0.7 } } },
             net = { layer = layers() }, groups = 2 }
  end,
  feature = function() return { cluster = allreduce(), net = { partition_dim = 1, layer = layers() } } end,
  pipeline = function() return { cluster = allreduce(), net = { micro_batches = 8, layer = layers(3) } } end,
}
if not configs[config] then error("unknown CONFIG '" .. config .. "' (see the header of bench/tta.lua)\n" .. usage, 0) end
local c = configs[config]()

local r = singa.train {
  name = "bench-tta", seed = 1, train_steps = steps, disp_freq = 100, test_freq = 100, test_steps = 20,
  num_openblas_threads = 1, cluster = c.cluster,
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = tonumber(os.getenv("BENCH_TTA_LR") or 0.01) } },
  neuralnet = c.net,
}
if singa.rank() > 0 then return end
print(string.format("RESULT config=%s steps=%d seconds=%.3f images=%d", config, r.steps, r.seconds,
                    batch * (c.groups or 1)))

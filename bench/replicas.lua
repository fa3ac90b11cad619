-- Benchmark job of bench/replicas.sh (issue 33): bench/bigmlp.lua's net (784-2500-2000-1500-1000-500-10
-- tanh, SGD momentum 0.9, lr 0.001) on Fashion-MNIST, batch 66 (22 rows a worker), trained by
-- singa.cluster.allreduce{ workers = 3, procs = 3, replicas = REPLICAS }: a worker, a server and
-- (with REPLICAS = 2) a backup of another process's server in each of 3 processes.
--
-- usage: singa-tui --procs 3 [--metrics FILE] -e bench/replicas.lua REPLICAS STEPS [DISP [THREADS [SHRINK]]]
--   REPLICAS  cluster.replicas (1: no backups)
--   STEPS     training steps; DISP: disp_freq (default STEPS - 1: one display window over steps
--             1..STEPS-1, the first step, which waits for the initial values, left out); 1 records
--             every step's `seconds` in the --metrics file
--   THREADS   num_openblas_threads of each process (default 1)
--   SHRINK    cluster.shrink, "share" or "batch" (default: unset, which is "share")
-- Rank 0 prints: RESULT images_per_sec=<n> steps=<n> replicas=<n>
local singa = require "singa"
local common = dofile((arg[0]:match("^(.*)/") or ".") .. "/common.lua")

local usage = "usage: singa-tui --procs 3 -e bench/replicas.lua REPLICAS STEPS [DISP [THREADS [SHRINK]]]"
local replicas, steps = math.tointeger(tonumber(arg[1])), math.tointeger(tonumber(arg[2]))
if not replicas or not steps or steps < 2 then error(usage, 0) end
local function opt(i, default) return (arg[i] == nil or arg[i] == "") and default or math.tointeger(tonumber(arg[i])) end
local disp = opt(3, steps - 1) or error(usage, 0)
local threads = opt(4, 1) or error(usage, 0)
local shrink = arg[5] ~= "" and arg[5] or nil

local batch = 66
local layers = common.bigmlp_layers(batch)

local r = singa.train {
  name = "bench-replicas", seed = 1, train_steps = steps, disp_freq = disp, test_steps = 0,
  num_openblas_threads = threads,
  cluster = singa.cluster.allreduce { workers = 3, procs = 3, replicas = replicas, shrink = shrink },
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.001 } },
  neuralnet = { layer = layers },
}
if singa.rank() == 0 then
  print(string.format("RESULT images_per_sec=%.0f steps=%d replicas=%d", r.images_per_sec, r.steps, replicas))
end

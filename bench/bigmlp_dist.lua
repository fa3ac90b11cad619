-- Benchmark job: bench/bigmlp.lua's net (784-2500-2000-1500-1000-500-10 tanh, batch 64, SGD
-- momentum 0.9, lr 0.001) trained by several workers of one synchronous group (Sandblaster) in
-- one process, against the same job without a cluster (bench/dist.sh).  The net, batch and
-- learning rate are taken from bench/bigmlp.lua itself: it is loaded with a `run` that only
-- records them.
--
-- usage: singa-tui -e bench/bigmlp_dist.lua WORKERS THREADS [STEPS [WARMUP [SERVERS]]]
--   WORKERS  0: no cluster (one worker updating its own params, as bench/bigmlp.lua);
--            n: singa.cluster.sandblaster{ workers = n, servers = SERVERS } in this process,
--            each worker computing batch / n rows of every batch
--   THREADS  num_openblas_threads (each worker's BLAS calls use at most this many)
--   STEPS    timed steps (default 150); WARMUP: steps of an untimed job run first (default 5)
--   SERVERS  servers, each updating its slice of every param (default 1)
-- Prints: RESULT images_per_sec=<n> seconds=<s> steps=<n> workers=<n> threads=<n> servers=<n>
local singa = require "singa"

local here = arg[0]:match("^(.*)/") or "."
local common = dofile(here .. "/common.lua")

-- bench/bigmlp.lua's options (name, batch, base_lr, layers, ...), without running its job.
local function bigmlp_options()
  local got
  local fake = setmetatable({ run = function(o) got = o end }, { __index = common })
  local env = setmetatable({ dofile = function() return fake end }, { __index = _G })
  assert(loadfile(here .. "/bigmlp.lua", "t", env))()
  return assert(got, "bench/bigmlp.lua did not call run")
end

local function int_arg(i, default, min)
  local v = arg[i]
  if v == nil or v == "" then
    if default then return default end
    error("usage: singa-tui -e bench/bigmlp_dist.lua WORKERS THREADS [STEPS [WARMUP [SERVERS]]]", 0)
  end
  local n = math.tointeger(tonumber(v))
  if not n or n < min then error(string.format("argument %d must be an integer >= %d, got '%s'", i, min, v), 0) end
  return n
end

local workers, threads = int_arg(1, nil, 0), int_arg(2, nil, 1)
local steps, warmup, servers = int_arg(3, 150, 1), int_arg(4, 5, 0), int_arg(5, 1, 1)
local o = bigmlp_options()
if workers > 0 and o.batch % workers ~= 0 then error(string.format("%d workers do not divide batch %d", workers, o.batch), 0) end

local function job(n)
  return {
    name = o.name .. "-dist", seed = 1, train_steps = n, disp_freq = 0, test_steps = 0,
    num_openblas_threads = threads,
    cluster = workers > 0 and singa.cluster.sandblaster { workers = workers, servers = servers } or nil,
    updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = o.base_lr } },
    neuralnet = { layer = o.layers() },
  }
end

if warmup > 0 then singa.train(job(warmup)) end
collectgarbage()
local r = singa.train(job(steps))
print(string.format("RESULT images_per_sec=%.0f seconds=%.3f steps=%d workers=%d threads=%d servers=%d",
                    o.batch * r.steps / r.seconds, r.seconds, r.steps, workers, threads, workers > 0 and servers or 0))

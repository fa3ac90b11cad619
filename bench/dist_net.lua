-- Benchmark job: a bench model's net (bench/bigmlp.lua: 784-2500-2000-1500-1000-500-10 tanh;
-- bench/lenet.lua: LeNet on Fashion-MNIST; batch 64 both) trained by several workers of one
-- synchronous group (Sandblaster) in one process, or (AllReduce) a worker and a server in each
-- of several processes, against the same job without a cluster (bench/dist.sh).  The net, batch and learning rate are taken from the model's file itself: it
-- is loaded with a `run` that only records them.
--
-- usage: singa-tui [--procs P] -e bench/dist_net.lua MODEL WORKERS THREADS [STEPS [WARMUP [SERVERS [SCHEME [PROCS [COMPRESS]]]]]]
--   MODEL    bigmlp or lenet
--   WORKERS  0: no cluster (one worker updating its own params, as the model's file);
--            n: singa.cluster.sandblaster{ workers = n, servers = SERVERS } in this process
--   THREADS  num_openblas_threads (each worker's BLAS calls use at most this many)
--   STEPS    timed steps (default 150); WARMUP: steps of an untimed job run first (default 5)
--   SERVERS  servers, each updating its slice of every param (default 1)
--   SCHEME   how the group's workers share the net: batch (default; each computes batch / n
--            rows through a whole copy), feature (the net cut on the features where a layer can
--            be), hybrid (convolutions and poolings on the batch, the rest on the features),
--            outer: no cut, WORKERS Hogwild groups in PROCS (= WORKERS) processes, each training
--            the whole batch, syncing every $BENCH_SYNC_FREQ (default 50) updates with cluster.outer
--            kNesterov 0.9, rate 0.7 (DiLoCo); images/s counts every group's (group 0's times
--            the groups: the rounds keep them in step)
--            pipeline (bigmlp cut between its layers: data to fc2 on worker 0, fc3 to the loss on
--            worker 1, each batch in neuralnet.micro_batches = 8 micro-batches, or $BENCH_MICRO_BATCHES)
--            auto: cluster = { plan = "auto" } over PROCS (= WORKERS) processes, the planner's choice
--            (its link: $SINGA_PLAN_LINK); images/s counts every worker group's
--   PROCS    1 (default), or WORKERS: singa.cluster.allreduce{ workers = WORKERS, procs = PROCS }
--            (run under singa-tui --procs PROCS; SERVERS is then ignored)
--   COMPRESS none (default), fp16, bf16, topk (1% with error feedback), topk8 (the same, values back
--            as int8 changes), topkupdate (the same, values = "update") or powersgd
--            ({ powersgd = 4 }): cluster.compress
-- Prints (images/s and seconds of the timed steps, those after the first: r.images_per_sec of a
-- display window over them):
--   RESULT images_per_sec=<n> seconds=<s> steps=<n> workers=<n> threads=<n> servers=<n> scheme=<s>
--   bridge_bytes=<n> param_bytes=<n>: per step, what the bridges between a cut net's workers
--   carried (features and gradients, as counted in r.stats), and the gradients sent to the
--   servers and values got back (each param once per worker that sends its own gradient: every
--   worker in the batch scheme, the group once when the net is cut; in one process they go by
--   address, so this is what a multi-process run would move); with PROCS > 1 also wire_bytes=<n>:
--   per step, the bytes of every message rank 0 sent to or got from another process (rank 0 is
--   then the only one that prints)
local singa = require "singa"

local here = arg[0]:match("^(.*)/") or "."
local common = dofile(here .. "/common.lua")
local usage = "usage: singa-tui [--procs P] -e bench/dist_net.lua MODEL WORKERS THREADS [STEPS [WARMUP [SERVERS [SCHEME [PROCS [COMPRESS]]]]]]"

-- The model file's options (name, batch, base_lr, layers, ...), without running its job.
local function model_options(model)
  local got
  local fake = setmetatable({ run = function(o) got = o end }, { __index = common })
  -- its own arguments none (bigmlp.lua reads a BATCH from arg[4], here our STEPS)
  local env = setmetatable({ dofile = function() return fake end, arg = { [0] = arg[0] } }, { __index = _G })
  local chunk = loadfile(here .. "/" .. model .. ".lua", "t", env)
  if not chunk then error("unknown model '" .. tostring(model) .. "' (bigmlp, lenet)\n" .. usage, 0) end
  chunk()
  return assert(got, "bench/" .. model .. ".lua did not call run")
end

local function int_arg(i, default, min)
  local v = arg[i]
  if v == nil or v == "" then
    if default then return default end
    error(usage, 0)
  end
  local n = math.tointeger(tonumber(v))
  if not n or n < min then error(string.format("argument %d must be an integer >= %d, got '%s'", i, min, v), 0) end
  return n
end

local model = arg[1] or error(usage, 0)
local workers, threads = int_arg(2, nil, 0), int_arg(3, nil, 1)
local steps, warmup, servers = int_arg(4, 150, 1), int_arg(5, 5, 0), int_arg(6, 1, 1)
local scheme = arg[7] or "batch"
local procs = int_arg(8, 1, 1)
if procs > 1 and procs ~= workers then error("PROCS must be 1 or WORKERS", 0) end
local compresses = { none = false, fp16 = "fp16", bf16 = "bf16", topk = { topk = 0.01, error_feedback = true },
  topk8 = { topk = 0.01, error_feedback = true, values = "int8" }, powersgd = { powersgd = 4 },
  topkupdate = { topk = 0.01, error_feedback = true, values = "update" } }
local compress = compresses[arg[9] or "none"]
if compress == nil then error("unknown COMPRESS '" .. arg[9] .. "' (none, fp16, bf16, topk, topk8, topkupdate, powersgd)", 0) end
if scheme ~= "batch" and scheme ~= "feature" and scheme ~= "hybrid" and scheme ~= "outer" and scheme ~= "pipeline"
  and scheme ~= "auto" then
  error("unknown scheme '" .. scheme .. "' (batch, feature, hybrid, outer, pipeline, auto)", 0)
end
if scheme == "auto" and procs ~= workers then error("scheme auto needs WORKERS = PROCS", 0) end
if scheme == "outer" and (workers < 2 or procs ~= workers) then error("scheme outer needs WORKERS = PROCS >= 2", 0) end
local o = model_options(model)
if workers > 0 and scheme ~= "outer" and o.batch % workers ~= 0 then error(string.format("%d workers do not divide batch %d", workers, o.batch), 0) end

-- The pipeline: every layer from fc3 on (in the model's order) on worker 1, the rest on worker 0.
local function pipeline(layers)
  local at = 0
  for _, l in ipairs(layers) do
    if l.name == "fc3" then at = 1 end
    l.location = at
  end
  if at == 0 then error("the pipeline scheme cuts the net at fc3, which " .. model .. " has not", 0) end
  return { micro_batches = math.tointeger(tonumber(os.getenv("BENCH_MICRO_BATCHES") or 8)), layer = layers }
end

local function net()
  local layers = o.layers()
  if scheme == "pipeline" then return pipeline(layers) end
  for _, l in ipairs(layers) do
    if scheme == "hybrid" and (l.type == "kConvolution" or l.type == "kPooling") then l.partition_dim = 0 end
  end
  return { partition_dim = (scheme == "feature" or scheme == "hybrid") and 1 or nil, layer = layers }
end

-- The timed job trains one step more than it times: its display window fires at step 0 (the first
-- step, which waits for the initial values) and then at `n`, timing steps 1..n, as the DDP
-- reference times its loop after its warm-up; the final exchange of values is not timed either.
local function job(n)
  return {
    name = o.name .. "-dist", seed = 1, train_steps = n + 1, disp_freq = n, test_steps = 0,
    num_openblas_threads = threads,
    cluster = scheme == "auto" and { plan = "auto" }
      or scheme == "outer" and singa.cluster.hogwild { groups = workers, procs = procs, compress = compress or nil,
      sync_freq = tonumber(os.getenv("BENCH_SYNC_FREQ") or "50"),
      outer = { type = "kNesterov", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.7 } } }
      or procs > 1 and singa.cluster.allreduce { workers = workers, procs = procs, compress = compress or nil }
      or workers > 0 and singa.cluster.sandblaster { workers = workers, servers = servers } or nil,
    updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = o.base_lr } },
    neuralnet = net(),
  }
end

if warmup > 0 then singa.train(job(warmup)) end
collectgarbage()
local r = singa.train(job(steps))
if singa.rank() > 0 then return end
local bridge, floats, wire = 0, 0, 0
for _, t in ipairs(r.stats.traffic) do
  if t.type == "bridge" or t.type == "bridge-grad" then bridge = bridge + t.bytes_received end
  if t.rank == 0 and t.peer:match("rank [1-9]") then wire = wire + t.bytes_sent + t.bytes_received end
end
for _, p in pairs(r.params) do floats = floats + p:numel() end
local senders = workers == 0 and 0 or (scheme == "batch" or scheme == "outer") and workers or 1
-- the worker groups that trained (the plan's choice may be Hogwild's): those rank 0 heard from,
-- as its messages' peers name them ("worker 1.0 (rank 1)"); the workers' rows of other processes
-- come with heartbeats, which a short job may end before
local groups = {}
for _, w in ipairs(r.stats.workers or {}) do groups[w.group] = true end
for _, t in ipairs(r.stats.traffic) do
  local g = t.peer:match("^worker (%d+)%.")
  if g then groups[tonumber(g)] = true end
end
local ngroups = 0
for _ in pairs(groups) do ngroups = ngroups + 1 end
local images = r.images_per_sec * (scheme == "outer" and workers or scheme == "auto" and math.max(ngroups, 1) or 1)
print(string.format("RESULT images_per_sec=%.0f seconds=%.3f steps=%d workers=%d threads=%d servers=%d scheme=%s "
                    .. "bridge_bytes=%.0f param_bytes=%.0f wire_bytes=%.0f",
                    images, o.batch * steps / r.images_per_sec, steps, workers, threads, workers > 0 and servers or 0,
                    scheme, bridge / r.steps, senders * 2 * 4 * floats, wire / r.steps))

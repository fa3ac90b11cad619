-- Benchmark job: the round trip of one param between a worker and a server (bench/dist.sh).
-- The net is a single kInnerProduct without bias on Fashion-MNIST images (784 inputs), batch 1,
-- so its weight is the only trained param and compute is small next to moving it:
--   SIZE 1:  784 x 334  = 261,856 floats = 1,047,424 bytes (1.00 MB; 0.999 MiB)
--   SIZE 16: 784 x 5350 = 4,194,400 floats = 16,777,600 bytes (16.0 MiB)
-- Plain SGD (no momentum), fixed lr.  Every step sends the weight's gradient to the server, which
-- applies the update and replies with the new values: SIZE MB each way.
--
-- usage: singa-tui [--procs 2] -e bench/dist_param.lua MODE SIZE [STEPS [WARMUP]]
--   MODE  local   one process, no cluster: the step's compute alone (forward, backward, update)
--         inproc  sandblaster{workers = 1, servers = 1} in one process: the runtime without tcp
--         procs   sandblaster{workers = 1, servers = 1, procs = 2}, run with `--procs 2`:
--                 the worker in rank 0, the server in rank 1, over loopback tcp
--   STEPS timed steps (default 2000 for SIZE 1, 200 for SIZE 16)
--   WARMUP steps of a separate untimed job first (default STEPS / 10; 0 to skip)
-- Prints (rank 0 only): RESULT mode=<m> bytes=<n> steps_per_sec=<r> seconds=<s> steps=<n>
local singa = require "singa"

local usage = "usage: singa-tui [--procs 2] -e bench/dist_param.lua local|inproc|procs 1|16 [STEPS [WARMUP]]"
local mode, size = arg[1], tonumber(arg[2])
local outputs = { [1] = 334, [16] = 5350 }
if not (mode == "local" or mode == "inproc" or mode == "procs") or not outputs[size] then error(usage, 0) end
local steps = math.tointeger(tonumber(arg[3] or "")) or (size == 1 and 2000 or 200)
local warmup = math.tointeger(tonumber(arg[4] or "")) or steps // 10

local fm = os.getenv("SINGA_BENCH_DATA") or "/usr/share/datasets/fashion-mnist/"
local nout = outputs[size]

local function cluster()
  if mode == "local" then return nil end
  return singa.cluster.sandblaster { workers = 1, servers = 1, procs = mode == "procs" and 2 or 1 }
end

local function job(n)
  return {
    name = "bench-dist-param", seed = 1, train_steps = n, disp_freq = 0, test_steps = 0,
    cluster = cluster(),
    updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 1e-4 } },
    neuralnet = { layer = {
      { name = "data", type = "kIDXData", batchsize = 1, shuffle = true,
        images = fm .. "train-images-idx3-ubyte.gz", labels = fm .. "train-labels-idx1-ubyte.gz" },
      { name = "image", type = "kMnist", srclayer = "data", norm_a = 255, norm_b = 0 },
      { name = "label", type = "kLabel", srclayer = "data" },
      { name = "fc", type = "kInnerProduct", srclayer = "image", num_output = nout, bias_term = false },
      { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc", "label" } },
    } },
  }
end

if warmup > 0 then singa.train(job(warmup)) end
collectgarbage()
local r = singa.train(job(steps))
if singa.rank() == 0 then
  print(string.format("RESULT mode=%s bytes=%d steps_per_sec=%.1f seconds=%.3f steps=%d", mode, 784 * nout * 4,
                      r.steps / r.seconds, r.seconds, r.steps))
  if os.getenv("BENCH_STATS") == "1" then
    for _, t in ipairs(r.stats and r.stats.traffic or {}) do
      print(string.format("STATS %-12s %-22s sent %6d recv %6d bytes_sent %12d bytes_recv %12d wait %.3f", t.type,
                          t.peer, t.sent, t.received, t.bytes_sent, t.bytes_received, t.wait or 0))
    end
  end
end

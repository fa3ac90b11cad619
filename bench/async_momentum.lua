-- Accuracy run (not timed): asynchronous groups with momentum, with and without
-- cluster.momentum_compensation, against one group (README, "Asynchronous groups and momentum").
-- Fashion-MNIST, batch 64, kFixed rate, 300 steps per group; each run's loss is group 0's over
-- its last 10 steps (a display every 10 steps, from the workspace's log) and its worst 10-step
-- window after step 100.
--
-- usage: singa-tui -e bench/async_momentum.lua SETTING [RUNS [STEPS [MOMENTUM]]]
--   SETTING  mlp-1:        784-128-10 kSTanh, one group, kSGD 0.9, lr 0.02
--            mlp-hogwild2: the same, Hogwild 2 groups (sync_freq $SYNC_FREQ, default 1), compensated
--            mlp-hogwild2-off: the same, momentum_compensation = false
--            conv-1, conv-downpour2, conv-downpour2-off, conv-downpour4, conv-downpour4-off:
--            conv 8x5x5/2, max pool, ip 64 kSTanh; kSGD 0.9, lr 0.1
--   RUNS     runs, seeds 1..RUNS (default 6); STEPS: per group (default 300); MOMENTUM: kSGD's
--            (default 0.9)
-- Prints a line per run (also the mean loss of the last 50 steps, steadier than 10's) and
-- `RESULT setting=<s> momentum=<m> final=<min>-<max> mean=<mean> worst=<max>`.
local singa = require "singa"

local setting, runs, steps, momentum = arg[1], tonumber(arg[2] or 6), tonumber(arg[3] or 300), tonumber(arg[4] or 0.9)
local sync_freq = tonumber(os.getenv("SYNC_FREQ") or 1)
local fm = os.getenv("FMNIST_DIR") or "/usr/share/datasets/fashion-mnist/"
local mlp = {
  { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 128 },
  { name = "act", type = "kSTanh", srclayer = "fc1" },
  { name = "fc2", type = "kInnerProduct", srclayer = "act", num_output = 10 },
}
local conv = {
  { name = "conv", type = "kConvolution", srclayer = "image", num_filters = 8, kernel = 5, stride = 2 },
  { name = "relu", type = "kReLU", srclayer = "conv" },
  { name = "pool", type = "kPooling", srclayer = "relu", pool = "MAX", kernel = 2, stride = 2 },
  { name = "fc1", type = "kInnerProduct", srclayer = "pool", num_output = 64 },
  { name = "act", type = "kSTanh", srclayer = "fc1" },
  { name = "fc2", type = "kInnerProduct", srclayer = "act", num_output = 10 },
}
local settings = {
  ["mlp-1"] = { mlp, 0.02 },
  ["mlp-hogwild2"] = { mlp, 0.02, singa.cluster.hogwild{ groups = 2, sync_freq = sync_freq } },
  ["mlp-hogwild2-off"] = { mlp, 0.02, singa.cluster.hogwild{ groups = 2, sync_freq = sync_freq,
                                                                momentum_compensation = false } },
  ["conv-1"] = { conv, 0.1 },
  ["conv-downpour2"] = { conv, 0.1, singa.cluster.downpour{ groups = 2 } },
  ["conv-downpour2-off"] = { conv, 0.1, singa.cluster.downpour{ groups = 2, momentum_compensation = false } },
  ["conv-downpour4"] = { conv, 0.1, singa.cluster.downpour{ groups = 4 } },
  ["conv-downpour4-off"] = { conv, 0.1, singa.cluster.downpour{ groups = 4, momentum_compensation = false } },
}
local s = settings[setting or ""]
if not s then error("usage: singa-tui -e bench/async_momentum.lua SETTING [RUNS [STEPS]] (see its header)", 0) end

local ws = os.tmpname()
os.remove(ws)
local function run(seed)
  local net = { layer = {
    { name = "data", type = "kIDXData", batchsize = 64, shuffle = true,
      images = fm .. "train-images-idx3-ubyte.gz", labels = fm .. "train-labels-idx1-ubyte.gz" },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
  } }
  for _, l in ipairs(s[1]) do table.insert(net.layer, l) end
  table.insert(net.layer, { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc2", "label" } })
  -- A plain job has no workspace log: one worker on 2 servers (the same training) writes one.
  local cluster = {}
  for k, v in pairs(s[3] or { nservers_per_group = 2 }) do cluster[k] = v end
  cluster.workspace = string.format("%s-%d", ws, seed)
  local ok, err = pcall(singa.train, { name = "async-momentum", seed = seed, train_steps = steps, disp_freq = 10,
    cluster = cluster, stop_on_nonfinite = false, neuralnet = net,
    updater = { type = "kSGD", momentum = momentum, learning_rate = { type = "kFixed", base_lr = s[2] } } })
  local final, worst, last = math.huge, 0, {}
  for line in io.lines(cluster.workspace .. "/rank0.log") do
    local step, loss = line:match("step (%d+) kTrain, group 0: loss (%S+)")
    step, loss = tonumber(step), tonumber(loss)
    if loss then
      if loss ~= loss then loss = math.huge end
      final = loss
      table.insert(last, loss)
      if #last > 5 then table.remove(last, 1) end
      if step > 100 then worst = math.max(worst, loss) end
    end
  end
  os.execute("rm -rf '" .. cluster.workspace .. "'")
  if not ok then io.stderr:write(tostring(err), "\n") end
  local sum = 0
  for _, l in ipairs(last) do sum = sum + l / #last end
  return final, worst, sum
end

local lo, hi, worst, mean = math.huge, 0, 0, 0
for seed = 1, runs do
  local f, w, l50 = run(seed)
  print(string.format("run %s seed %d: final loss %.3f (last 50 steps %.3f), worst %.3f", setting, seed, f, l50, w))
  lo, hi, worst, mean = math.min(lo, f), math.max(hi, f), math.max(worst, w), mean + f / runs
end
print(string.format("RESULT setting=%s momentum=%g final=%.3f-%.3f mean=%.3f worst=%.3f", setting, momentum, lo, hi,
                    mean, worst))

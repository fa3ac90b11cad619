-- The SINGA paper's frameworks side by side (section 4.3): one net, one data set, one updater,
-- trained under Sandblaster, AllReduce, Downpour, Hogwild and a hybrid (Downpour with two
-- synchronous groups of two workers), each in one process, plus one worker without a cluster
-- for reference.  Only the job's `cluster` line differs between the runs.  The table gives each
-- framework's training throughput and the steps and wall time it needs to reach a target test
-- accuracy; a second table shows every test on the way.
--
--   ./singa-tui -e demos/frameworks.lua [max_steps [target [test_freq]]]
--     max_steps  steps each run trains (default 4000; the cap when the target is not reached)
--     target     test accuracy to reach (default 0.85)
--     test_freq  test the whole test set (10,000 images) every this many steps (default 250)
-- About a minute and a half on 2 cores with the defaults; each run's tests are printed as they come
-- (in the workbench, which has no job of its own to show for this script, they go to its log).
--
-- The net: Fashion-MNIST MLP 784-512-256-10 with ReLU, batch 64 per worker group (a group of
-- two workers gives each 32 rows of every batch).  Every worker uses one BLAS thread; the
-- reference worker uses two, so every run can use both cores of a small machine.
--
-- The updater is plain SGD (lr 0.1, no momentum) for every framework, so that the comparison is
-- fair: asynchronous frameworks with momentum 0.9 are unstable (stale gradients pile up in the
-- momentum history), and a momentum that suits one framework would favour it.
--
-- How it is measured.  Each framework runs in a child process (this script, run again with
-- --one), so that the parent can watch the test results as the job prints them and note when
-- each arrives.  The child first trains 500 steps without tests: images/s is the images every
-- worker group trained (groups x batch x steps) over those steps' wall time.  Then a fresh job
-- trains max_steps steps, testing every test_freq steps and at step 0: the wall time to the
-- target is from the arrival of the step 0 test to the arrival of the first test at or above the
-- target (tests included, as a user waits for them).  Steps are worker group 0's (worker 0 of
-- group 0 tests); in the asynchronous frameworks every group makes about that many steps too.
local singa = require "singa"

local fm = os.getenv("FMNIST_DIR") or "/usr/share/datasets/fashion-mnist/"
local BATCH, LR, THROUGHPUT_STEPS = 64, 0.1, 500

-- name, what, groups x workers per group (for images/s), cluster (nil: no cluster), BLAS threads
local frameworks = {
  { name = "1 worker", what = "no cluster, 2 BLAS threads", groups = 1, threads = 2 },
  { name = "Sandblaster", what = "1 group of 2 workers, 1 server", groups = 1, threads = 1,
    cluster = function() return singa.cluster.sandblaster { workers = 2, servers = 1 } end },
  { name = "AllReduce", what = "1 group of 2 workers, 2 servers", groups = 1, threads = 1,
    cluster = function() return singa.cluster.allreduce { workers = 2 } end },
  { name = "Downpour", what = "2 groups of 1 worker, 1 server", groups = 2, threads = 1,
    cluster = function() return singa.cluster.downpour { groups = 2, workers = 1, servers = 1 } end },
  { name = "Hogwild", what = "2 groups of 1 worker, 2 server groups", groups = 2, threads = 1,
    cluster = function() return singa.cluster.hogwild { groups = 2 } end },
  { name = "Hybrid", what = "Downpour: 2 groups of 2 workers, 1 server", groups = 2, threads = 1,
    cluster = function() return singa.cluster.downpour { groups = 2, workers = 2, servers = 1 } end },
}

local function job(fw, steps, test_freq)
  return {
    name = "frameworks", seed = 1, train_steps = steps, disp_freq = 0,
    test_freq = test_freq or 0, test_steps = test_freq and 100 or 0,
    num_openblas_threads = fw.threads,
    cluster = fw.cluster and fw.cluster() or nil,
    updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = LR } },
    neuralnet = { layer = {
      { name = "data", type = "kIDXData", exclude = "kTest", batchsize = BATCH, shuffle = true,
        images = fm .. "train-images-idx3-ubyte.gz", labels = fm .. "train-labels-idx1-ubyte.gz" },
      { name = "data", type = "kIDXData", exclude = "kTrain", batchsize = 100,
        images = fm .. "t10k-images-idx3-ubyte.gz", labels = fm .. "t10k-labels-idx1-ubyte.gz" },
      { name = "image", type = "kMnist", srclayer = "data", norm_a = 255, norm_b = 0 },
      { name = "label", type = "kLabel", srclayer = "data" },
      { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 512 },
      { name = "relu1", type = "kReLU", srclayer = "fc1" },
      { name = "fc2", type = "kInnerProduct", srclayer = "relu1", num_output = 256 },
      { name = "relu2", type = "kReLU", srclayer = "fc2" },
      { name = "fc3", type = "kInnerProduct", srclayer = "relu2", num_output = 10 },
      { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc3", "label" } },
    } },
  }
end

-- The child: `--one INDEX STEPS TEST_FREQ` trains framework INDEX and prints what the parent reads.
if arg[1] == "--one" then
  local fw = assert(frameworks[tonumber(arg[2])], "--one: no such framework")
  local steps, test_freq = math.tointeger(tonumber(arg[3])), math.tointeger(tonumber(arg[4]))
  local r = singa.train(job(fw, THROUGHPUT_STEPS))
  print(string.format("THROUGHPUT %.1f", fw.groups * BATCH * r.steps / r.seconds))
  r = singa.train(job(fw, steps, test_freq))
  print(string.format("DONE %d %.3f %.4f", r.steps, r.seconds, r.test.accuracy))
  return
end

local function int_arg(i, default)
  if arg[i] == nil then return default end
  local n = tonumber(arg[i])
  n = n and math.tointeger(n)
  if not n or n < 1 then error(string.format("argument %d must be a positive integer, got '%s'", i, arg[i]), 0) end
  return n
end
local max_steps, test_freq = int_arg(1, 4000), int_arg(3, 250)
local target = tonumber(arg[2] or "0.85")
if not target or target <= 0 or target >= 1 then error("target must be a test accuracy between 0 and 1", 0) end

-- Wall-clock seconds (Lua's os.clock is CPU time): /proc/uptime on Linux, else whole seconds.
local function now()
  local f = io.open("/proc/uptime")
  local t = f and f:read("n")
  if f then f:close() end
  return t or os.time()
end

local function quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- This program: $SINGA_TUI, else the executable of the process running this script (the
-- parent of the shell io.popen starts).
local function program()
  local p = os.getenv("SINGA_TUI")
  if p and p ~= "" then return p end
  local sh = io.popen("readlink /proc/$PPID/exe")
  p = sh:read("l")
  sh:close()
  return assert(p and p ~= "" and p, "cannot find the singa-tui program; set SINGA_TUI")
end

local exe = program()

-- Runs framework i in a child process; returns its row: throughput, the test curve
-- { {step, accuracy, seconds since the step 0 test}, ... }, and the child's final line.  Its
-- progress is printed as it arrives (the workbench shows no job of its own for this script:
-- the jobs train in the children).
local function run(i)
  local cmd = string.format("exec %s -e %s --one %d %d %d 2>&1", quote(exe), quote(arg[0]), i, max_steps, test_freq)
  local child = io.popen(cmd)
  local row = { fw = frameworks[i], curve = {} }
  local t0, output = nil, {}
  for line in child:lines() do
    local t = now()
    output[#output + 1] = line
    -- An asynchronous job's records name the group ("step 250    test g0    loss ...").
    local step, acc = line:match("^step (%d+)%s+test%s.-loss %S+%s+accuracy (%S+)")
    if step then
      step, acc = tonumber(step), tonumber(acc)
      if step == 0 then t0 = t end
      row.curve[#row.curve + 1] = { step = step, acc = acc, t = t - (t0 or t) }
      if not row.reached and acc >= target then row.reached = row.curve[#row.curve] end
      print(string.format("  %s: step %d/%d, test accuracy %.4f, %.1f s", row.fw.name, step, max_steps, acc, t - t0))
    end
    if not row.ips and line:match("^THROUGHPUT") then
      row.ips = tonumber(line:match("^THROUGHPUT (%S+)"))
      print(string.format("  %s: %.0f images/s; now training to test accuracy %.2f", row.fw.name, row.ips, target))
    end
    local steps, secs, final = line:match("^DONE (%d+) (%S+) (%S+)")
    if steps then row.steps, row.seconds, row.final = tonumber(steps), tonumber(secs), tonumber(final) end
  end
  local ok, how, code = child:close()
  if not ok or not row.final then
    error(string.format("%s: the run failed (%s %s):\n%s", row.fw.name, how, code, table.concat(output, "\n")), 0)
  end
  return row
end

print(string.format("Fashion-MNIST MLP 784-512-256-10, batch %d per group, plain SGD lr %g; target test accuracy %.3f,",
                    BATCH, LR, target))
print(string.format("tested every %d steps, at most %d steps per run.  Each run is a child process: %s", test_freq,
                    max_steps, exe))
print()
local rows = {}
for i, fw in ipairs(frameworks) do
  print(string.format("%s (%s): measuring images/s over %d steps in a child process", fw.name, fw.what,
                      THROUGHPUT_STEPS))
  local row = run(i)
  io.write(string.format("%-12s %-42s ", fw.name, fw.what))
  rows[i] = row
  local best = 0
  for _, c in ipairs(row.curve) do best = math.max(best, c.acc) end
  row.best = best
  if row.reached then
    print(string.format("%6.0f images/s, %.3f at step %d after %.1f s", row.ips, row.reached.acc, row.reached.step,
                        row.reached.t))
  else
    print(string.format("%6.0f images/s, not reached in %d steps (best %.4f)", row.ips, row.steps, best))
  end
end

local function thousands(n)
  local s = string.format("%.0f", n)
  return (s:reverse():gsub("(%d%d%d)", "%1,"):reverse():gsub("^,", ""))
end

print()
print(string.format("| framework   | cluster                                   | images/s | steps to %.2f | time to %.2f | best test acc | final test acc |",
                    target, target))
print("|-------------|-------------------------------------------|---------:|--------------:|-------------:|--------------:|---------------:|")
for _, row in ipairs(rows) do
  local steps = row.reached and tostring(row.reached.step) or ("> " .. row.steps)
  local secs = row.reached and string.format("%.1f s", row.reached.t) or "-"
  print(string.format("| %-11s | %-41s | %8s | %13s | %12s | %13.4f | %14.4f |", row.fw.name, row.fw.what,
                      thousands(row.ips), steps, secs, row.best, row.final))
end

-- Every test on the way, one column per framework.
print()
local head = { string.format("%6s", "step") }
for _, row in ipairs(rows) do head[#head + 1] = string.format("%11s", row.fw.name) end
print("test accuracy by step (seconds since step 0 in brackets)")
print(table.concat(head, " "))
local by_step, steps = {}, {}
for i, row in ipairs(rows) do
  for _, c in ipairs(row.curve) do
    if not by_step[c.step] then by_step[c.step] = {}; steps[#steps + 1] = c.step end
    by_step[c.step][i] = c
  end
end
table.sort(steps)
for _, s in ipairs(steps) do
  local line = { string.format("%6d", s) }
  for i = 1, #rows do
    local c = by_step[s][i]
    line[#line + 1] = c and string.format("%5.3f(%4.1f)", c.acc, c.t) or string.format("%11s", "")
  end
  print(table.concat(line, " "))
end

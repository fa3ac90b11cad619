-- Stragglers: a worker slowed on purpose (t/plugins/slow.c sleeps in worker 0.1's forward
-- passes) is flagged in singa.stats().workers, with the share of its group's step it costs; the
-- others are not; the times add up; the metrics file carries them.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"

local build = assert(os.getenv("SINGA_TUI"), "SINGA_TUI is not set"):match("^(.*)/[^/]*$") or "."
singa.load_plugin(build .. "/t/plugins/.libs/slow.so")
local dir = td.tmpdir("6300-stragglers")
local img, lab = td.idx(dir .. "/train", 120, 10, 8, 8, 6300)

local net = td.mlp(img, lab, 16)
local slowed = { name = "slow", type = "kSlow", srclayer = "act", sleep_ms = 15, worker = 1 }
for _, l in ipairs(net.layer) do if l.name == "fc2" then l.srclayer = "slow" end end
table.insert(net.layer, slowed)
local r = singa.train{ name = "stragglers", seed = 1, train_steps = 25, disp_freq = 0,
  cluster = singa.cluster.sandblaster{ workers = 3 },
  updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.05 } }, neuralnet = net }

local w = {}
for _, t in ipairs(singa.stats().workers) do w[t.group .. "." .. t.id] = t end
tap.ok(w["0.0"] and w["0.1"] and w["0.2"], "singa.stats().workers has every worker of the group")
local slow, fast = w["0.1"], w["0.0"]
tap.ok(slow.straggler and slow.share > 0 and slow.share < 1,
       string.format("the slowed worker 0.1 is flagged (work %.4fs, share %.2f)", slow.work, slow.share))
tap.ok(not fast.straggler and fast.share == 0 and not w["0.2"].straggler, "the other workers are not flagged")
tap.ok(slow.compute >= 0.015 and fast.compute < slow.compute / 1.5,
       string.format("compute: 0.1 %.4fs (sleeps 15 ms), 0.0 %.4fs", slow.compute, fast.compute))
tap.ok(fast.wait > slow.wait, string.format("the fast worker waits for values longer (%.4fs > %.4fs)", fast.wait, slow.wait))
tap.ok(slow.window == 20 and slow.steps == 25 and slow.rank == 0 and slow.host ~= "",
       string.format("window %d of %d steps, rank %d, host %s", slow.window, slow.steps, slow.rank, slow.host))
tap.ok(math.abs(slow.step - (slow.compute + slow.send + slow.wait + slow.bridge)) < 1e-9 and
       math.abs(slow.work - (slow.compute + slow.send)) < 1e-9, "step = compute + send + wait + bridge, work = compute + send")
tap.is(#r.stats.workers, 3, "the job's result carries the same table")

-- Without a slow worker nobody is flagged.
slowed.sleep_ms = 0
singa.train{ name = "even", seed = 1, train_steps = 10, disp_freq = 0, cluster = singa.cluster.sandblaster{ workers = 2 },
  updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.05 } }, neuralnet = net }
local flagged = 0
for _, t in ipairs(singa.stats().workers) do flagged = flagged + (t.straggler and 1 or 0) end
tap.ok(#singa.stats().workers == 2 and flagged == 0, "an even group: no straggler")
tap.done()

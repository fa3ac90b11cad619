-- The jobs of the fault suite (t/faults/faults.py), one per layout.
-- job.lua LAYOUT DIR STEPS [CKDIR]: trains the runtime tests' MLP on DIR/data (procs.sh's
-- gen_data) with LAYOUT's cluster, checkpointing to CKDIR (DIR/ckpt) every 50 steps and keeping
-- them all; rank 0 writes every param value to DIR/params.txt.  Every worker sleeps 4 ms a step
-- (t/plugins/slow.so), so a job lasts long enough for its faults however fast the machine is.
local singa = require "singa"
local td = require "testdata"
local layout, dir, steps = arg[1], arg[2], tonumber(arg[3])
local ckdir = arg[4] or dir .. "/ckpt"
local layouts = {
  allreduce3 = function() return singa.cluster.allreduce{ workers = 3, procs = 3 } end,
  allreduce4 = function() return singa.cluster.allreduce{ workers = 4, procs = 4 } end,
  allreduce3r = function() return singa.cluster.allreduce{ workers = 3, procs = 3, replicas = 2 } end,
  sandblaster3 = function() return singa.cluster.sandblaster{ workers = 2, servers = 2, procs = 3 } end,
  downpour3 = function() return singa.cluster.downpour{ groups = 2, procs = 3 } end,
  hogwild2 = function() return singa.cluster.hogwild{ groups = 2, procs = 2, sync_freq = 20 } end,
}
local cluster = assert(layouts[layout], "unknown layout " .. tostring(layout))()
cluster.heartbeat_timeout = tonumber(os.getenv("FAULT_HEARTBEAT")) or 2
if cluster.replicas then cluster.workspace = dir .. "/ws" end -- each replica's digest at the end
cluster.join_timeout = 30
singa.load_plugin(os.getenv("SLOW_SO"))
local net = td.mlp(dir .. "/../data/images-idx3-ubyte", dir .. "/../data/labels-idx1-ubyte")
for _, l in ipairs(net.layer) do if l.name == "fc2" then l.srclayer = "slow" end end
table.insert(net.layer, { name = "slow", type = "kSlow", srclayer = "act", sleep_ms = 4, group = -1 })
local r = singa.train{
  name = "faults", seed = 7, train_steps = steps, disp_freq = 10, test_steps = 2,
  checkpoint_path = ckdir, checkpoint_freq = 50, checkpoint_keep = 1000,
  cluster = cluster,
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = net,
}
local rank, size = singa.rank()
if rank == 0 then
  local f = assert(io.open(dir .. "/params.txt", "w"))
  td.write_params(f, r.params)
  f:close()
end
print(string.format("rank %d of %d: %d steps", rank, size, r.steps))

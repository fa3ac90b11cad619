-- The jobs of t/8810-replicas.sh and t/8811-shrink.sh.  replicas-job.lua MODE OUT STEPS
-- [WORKSPACE [CKDIR]]: trains on the data in OUT's folder (procs.sh's gen_data) with the cluster
-- of MODE, every process's log in WORKSPACE, a checkpoint every 20 steps in CKDIR; rank 0 writes
-- every param value to OUT, and every process says how many bytes the others sent it.
local singa = require "singa"
local td = require "testdata"
local mode, out, steps, ws, ckdir = arg[1], arg[2], tonumber(arg[3]), arg[4], arg[5]
local clusters = {
  none = singa.cluster.allreduce{ workers = 3, procs = 3 },
  one = singa.cluster.allreduce{ workers = 3, procs = 3, replicas = 1 },
  two = singa.cluster.allreduce{ workers = 3, procs = 3, replicas = 2 },
  three = singa.cluster.allreduce{ workers = 3, procs = 3, replicas = 3 },
  sandblaster = singa.cluster.sandblaster{ workers = 2, servers = 2, procs = 3, replicas = 2 },
  downpour = singa.cluster.downpour{ groups = 2, procs = 3, replicas = 2 },
  lua = singa.cluster.allreduce{ workers = 3, procs = 3, replicas = 2 }, -- with a kLua updater
  -- refused
  zero = singa.cluster.allreduce{ workers = 3, procs = 3, replicas = 0 },
  half = singa.cluster.allreduce{ workers = 3, procs = 3, replicas = 1.5 },
  four = singa.cluster.allreduce{ workers = 3, procs = 3, replicas = 4 },
  hogwild = singa.cluster.hogwild{ groups = 3, procs = 3, replicas = 2 },
}
local cluster = assert(clusters[mode], mode)
local updater -- train_mlp's kSGD with momentum 0.9
if mode == "lua" then -- kSGD with momentum; it is given its gradient scaled in place
  updater = { type = "kLua", state = { "history" }, learning_rate = { type = "kFixed", base_lr = 0.05 },
              update = function(_, w, g, state, lr) state.history:scale(0.9):axpy(-lr, g); w:add(state.history) end }
end
cluster.workspace = ws
cluster.join_timeout = 120
td.train_mlp(singa, {
  name = "replicas", train_steps = steps, disp_freq = ckdir and 1 or 1000, test_steps = 2,
  checkpoint_path = ckdir, checkpoint_freq = ckdir and 20 or nil,
  cluster = cluster,
  updater = updater,
}, out)
local rank, bytes = singa.rank(), 0
for _, l in ipairs(singa.stats().links) do
  if l.rank == rank then bytes = bytes + l.bytes_received end
end
print(string.format("rank %d received %d bytes", rank, bytes))

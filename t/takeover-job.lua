-- The jobs of t/8814-takeover.sh.  takeover-job.lua MODE OUT STEPS WORKSPACE CKDIR: as
-- replicas-job.lua's (the data in OUT's folder, a checkpoint every 20 steps in CKDIR), with a
-- heartbeat_timeout of 1 s, so a silence is found soon; every surviving process writes its
-- params to OUT.<rank>.
local singa = require "singa"
local td = require "testdata"
local mode, out, steps, ws, ckdir = arg[1], arg[2], tonumber(arg[3]), arg[4], arg[5]
local dir = out:match("^(.*)/")
local clusters = {
  two = singa.cluster.allreduce{ workers = 3, procs = 3, replicas = 2 },
  three = singa.cluster.allreduce{ workers = 3, procs = 3, replicas = 3 },
}
local cluster = assert(clusters[mode], mode)
cluster.workspace = ws
cluster.join_timeout = 120
cluster.heartbeat_timeout = 1
local r = singa.train{
  name = "takeover", seed = 7, train_steps = steps, disp_freq = 1, test_steps = 2, test_freq = 100,
  checkpoint_path = ckdir, checkpoint_freq = 20,
  cluster = cluster,
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = td.mlp(dir .. "/data/images-idx3-ubyte", dir .. "/data/labels-idx1-ubyte"),
}
local rank, size = singa.rank()
local f = assert(io.open(out .. "." .. rank, "w"))
td.write_params(f, r.params)
f:close()
print(string.format("rank %d of %d: %d steps", rank, size, r.steps))

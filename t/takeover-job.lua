-- The jobs of t/8814-takeover.sh.  takeover-job.lua MODE OUT STEPS WORKSPACE CKDIR: as
-- replicas-job.lua's (the data in OUT's folder, a checkpoint every 20 steps in CKDIR), with a
-- heartbeat_timeout of 1 s, so a silence is found soon; every surviving process writes its
-- params to OUT.<rank>.
local singa = require "singa"
local td = require "testdata"
local mode, out, steps, ws, ckdir = arg[1], arg[2], tonumber(arg[3]), arg[4], arg[5]
local clusters = {
  two = singa.cluster.allreduce{ workers = 3, procs = 3, replicas = 2 },
  three = singa.cluster.allreduce{ workers = 3, procs = 3, replicas = 3 },
}
local cluster = assert(clusters[mode], mode)
cluster.workspace = ws
cluster.join_timeout = 120
cluster.heartbeat_timeout = 1
td.train_mlp(singa, {
  name = "takeover", train_steps = steps, disp_freq = 1, test_steps = 2, test_freq = 100,
  checkpoint_path = ckdir, checkpoint_freq = 20,
  cluster = cluster,
}, out, true)

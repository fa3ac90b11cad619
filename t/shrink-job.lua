-- The jobs of t/8812-shrink-share.sh.  shrink-job.lua MODE OUT STEPS CKDIR [WORKSPACE]: trains
-- on the data in OUT's folder (procs.sh's gen_data), a checkpoint every 10 steps in CKDIR:
-- MODE "share", "batch" or "default" (cluster.shrink given or not), a 3-process AllReduce job
-- with replicas = 2; "plain", one process, one worker, resuming from CKDIR's newest checkpoint
-- (the same global batch, unpartitioned).  Rank 0 writes every param value to OUT.
local singa = require "singa"
local td = require "testdata"
local mode, out, steps, ckdir, ws = arg[1], arg[2], tonumber(arg[3]), arg[4], arg[5]
local cluster
if mode ~= "plain" then
  cluster = singa.cluster.allreduce{ workers = 3, procs = 3, replicas = 2,
                                     shrink = mode ~= "default" and mode or nil }
  cluster.workspace = ws
  cluster.join_timeout = 120
end
td.train_mlp(singa, {
  name = "shrink", train_steps = steps, disp_freq = 1, resume = mode == "plain",
  checkpoint_path = ckdir, checkpoint_freq = 10, checkpoint_keep = 1000,
  cluster = cluster,
}, out)

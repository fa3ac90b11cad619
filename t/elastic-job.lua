-- The elastic jobs of t/8600-elastic.sh and t/8601-elastic-mpi.sh.
-- elastic-job.lua MODE OUT STEPS CKDIR fresh|resume [FREQ]: trains on the data in OUT's folder
-- (procs.sh's gen_data) with the cluster of MODE, checkpointing to CKDIR every FREQ (10) steps;
-- rank 0 writes every param value to OUT.
local singa = require "singa"
local td = require "testdata"
local mode, out, steps, ckdir, resume = arg[1], arg[2], tonumber(arg[3]), arg[4], arg[5] == "resume"
local clusters = {
  three = singa.cluster.allreduce{ workers = 3, procs = 3 },
  two = singa.cluster.allreduce{ workers = 2, procs = 2 },
  once = singa.cluster.allreduce{ workers = 3, procs = 3, elastic = { min = 1, max_restarts = 1 } },
  mpi = singa.cluster.allreduce{ workers = 3, procs = 3, elastic = { min = 2, max_restarts = 3 } },
  -- refused
  min0 = singa.cluster.allreduce{ workers = 3, procs = 3, elastic = { min = 0 } },
  min4 = singa.cluster.allreduce{ workers = 3, procs = 3, elastic = { min = 4 } },
  negative = singa.cluster.allreduce{ workers = 3, procs = 3, elastic = { min = 2, max_restarts = -1 } },
  typo = singa.cluster.allreduce{ workers = 3, procs = 3, elastic = { min = 2, max_restart = 1 } },
  async = singa.cluster.downpour{ groups = 2, procs = 3, elastic = { min = 2 } },
  batch = singa.cluster.allreduce{ workers = 6, procs = 6, elastic = { min = 5 } },
  servers = { nworkers_per_group = 1, nservers_per_group = 2, server_worker_separate = true, elastic = { min = 2 } },
}
local cluster = assert(clusters[mode], mode)
cluster.heartbeat_timeout = 5
-- Under a sanitizer beside the suite's other jobs a rank can take over the default 30 s to start.
cluster.join_timeout = 120
td.train_mlp(singa, {
  name = "elastic", train_steps = steps, disp_freq = 1000, test_steps = 2,
  checkpoint_path = ckdir, checkpoint_freq = ckdir and (tonumber(arg[6]) or 10) or nil, resume = resume,
  cluster = cluster,
}, out)

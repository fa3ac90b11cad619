-- Benchmark job: demos/fmnist_mlp.lua's job (the net, batch, updater, schedule and steps) under
-- AllReduce over 2 processes, with a cluster.compress, or under Hogwild with an outer optimizer, for
-- its final test accuracy (bench/accuracy.sh).
--
-- usage: singa-tui --procs 2 -e bench/fmnist_compress.lua COMPRESS [STEPS]
--   COMPRESS none, fp16, bf16, topk (1% with error feedback, values back in fp16), topk8 (the
--            same with the values back as int8 changes), powersgd ({ powersgd = 4 }) or outer
--            (no compression: Hogwild, a server group per process, each training the demo's
--            batch and steps, synced every 50 updates by an outer kNesterov, momentum 0.9, lr 0.7)
--   STEPS    train_steps (default: the demo's)
-- Prints on rank 0: RESULT accuracy=<test accuracy over the 10,000 test images> loss=<last train
-- loss> steps=<n> seconds=<s>
local singa = require "singa"

local here = arg[0]:match("^(.*)/") or "."
local usage = "usage: singa-tui --procs 2 -e bench/fmnist_compress.lua none|fp16|bf16|topk|topk8|powersgd|outer [STEPS]"
local compresses = {
  none = false, fp16 = "fp16", bf16 = "bf16", topk = { topk = 0.01, error_feedback = true },
  topk8 = { topk = 0.01, error_feedback = true, values = "int8" }, powersgd = { powersgd = 4 },
}
local compress = compresses[arg[1] or ""]
if compress == nil and arg[1] ~= "outer" then error(usage, 0) end

-- The demo's job table, without running it: its singa.train only records the job.
local job
local fake = setmetatable({ train = function(j) job = j error("recorded", 0) end }, { __index = singa })
local env = setmetatable({ require = function(m) return m == "singa" and fake or require(m) end,
                           arg = {} }, { __index = _G })
local chunk = assert(loadfile(here .. "/../demos/fmnist_mlp.lua", "t", env))
pcall(chunk)
assert(job, "demos/fmnist_mlp.lua did not call singa.train")

job.train_steps = tonumber(arg[2]) or job.train_steps
job.checkpoint_path, job.checkpoint_freq = nil, nil
job.test_freq = 0
job.test_steps = 100 -- the whole test set, batch 100
if arg[1] == "outer" then
  job.cluster = singa.cluster.hogwild{ groups = 2, procs = 2, sync_freq = 50,
    outer = { type = "kNesterov", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.7 } } }
else
  job.cluster = singa.cluster.allreduce{ workers = 2, procs = 2, compress = compress or nil }
end
local r = singa.train(job)
if singa.rank() == 0 then
  print(string.format("RESULT accuracy=%.4f loss=%.4f steps=%d seconds=%.1f", r.test.accuracy, r.train.loss,
                      r.steps, r.seconds))
end

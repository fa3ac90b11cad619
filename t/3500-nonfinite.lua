-- A run whose loss stops being finite stops with an error naming the step, the param and the
-- last good checkpoint (plain and distributed jobs); stop_on_nonfinite = false trains on.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"

local dir = td.tmpdir("3500-nonfinite")
local img, lab = td.idx(dir, 200, 4)

-- lr: the rate up to step `at` (default: from the start), 1e30 from then on.
local function job(o)
  local at = o.at or 0
  return {
    name = "nonfinite", seed = 1, train_steps = o.steps or 30, disp_freq = 10,
    stop_on_nonfinite = o.stop, cluster = o.cluster,
    checkpoint_freq = o.ckpt or 0, checkpoint_path = o.ckpt and (dir .. "/" .. o.ckpt_dir) or nil,
    updater = { type = "kSGD", learning_rate = at > 0
      and { type = "kFixedStep", step = { 0, at }, step_lr = { 0.05, 1e30 } }
      or { type = "kFixed", base_lr = 1e30 } },
    neuralnet = { layer = {
      { name = "data", type = "kIDXData", batchsize = 16, images = img, labels = lab },
      { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
      { name = "label", type = "kLabel", srclayer = "data" },
      { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 16 },
      { name = "relu", type = "kReLU", srclayer = "fc1" },
      { name = "fc2", type = "kInnerProduct", srclayer = "relu", num_output = 4 },
      { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc2", "label" } },
    } },
  }
end

tap.raises({ "training step 1: the loss is NaN", "param 'fc1_weight' (layer 'fc1')",
             "the last good checkpoint is none", "stop_on_nonfinite = false" },
           "lr 1e30: the job stops at the first non-finite loss, naming the step and the param",
           singa.train, job{})

local ok, r = pcall(singa.train, job{ stop = false })
tap.ok(ok and r.steps == 30, "stop_on_nonfinite = false trains to the end", r)
tap.ok(ok and r.train.loss ~= r.train.loss, "... with a NaN loss, as SINGA did", ok and r.train.loss)

-- Diverging at step 12 with checkpoints every 5 steps: the one of step 10 is the last good one.
tap.raises({ "training step 13:", "the last good checkpoint is " .. td.ckpt(dir .. "/good", 10) },
           "the error names the newest checkpoint written before the loss went bad",
           singa.train, job{ at = 12, ckpt = 5, ckpt_dir = "good" })

-- Distributed: the worker that sees it stops the job like any other failure.
tap.raises({ "training step 1: the loss is NaN", "param '" },
           "a distributed job (2 workers, 2 servers) stops with the same error",
           singa.train, job{ cluster = { nworkers_per_group = 2, nservers_per_group = 2 } })
tap.raises("training step 1: the loss is NaN", "... and Downpour's asynchronous groups too",
           singa.train, job{ cluster = singa.cluster.downpour{ groups = 2 } })
tap.raises({ "training step 13:", "the last good checkpoint is " .. dir .. "/dgood/step000000010.*.ckpt" },
           "... naming the last good distributed checkpoint",
           singa.train, job{ at = 12, ckpt = 5, ckpt_dir = "dgood", cluster = { nworkers_per_group = 2 } })
ok, r = pcall(singa.train, job{ stop = false, cluster = { nworkers_per_group = 2 } })
tap.ok(ok and r.steps == 30, "a distributed job with stop_on_nonfinite = false trains to the end", r)

tap.raises("did you mean 'stop_on_nonfinite'", "a misspelt field is refused",
           singa.train, (function() local j = job{} j.stop_on_nonfinit = false return j end)())

tap.done()

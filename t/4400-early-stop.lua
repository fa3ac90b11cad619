-- Early stopping: on_validation sees each validation (or, without one, test) result and may end
-- training cleanly; checkpoint_keep_best keeps the best checkpoint through rotation and resume.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"

local dir = td.tmpdir("4400-early-stop")
local img, lab = td.idx(dir .. "/train", 200, 4)
local vimg, vlab = td.idx(dir .. "/val", 40, 4, 8, 8, 4242)

local function ls(d)
  local names = {}
  local p = io.popen("ls -1 '" .. d .. "' 2>/dev/null")
  for line in p:lines() do names[#names + 1] = line end
  p:close()
  table.sort(names)
  return table.concat(names, " ")
end

local function job(o)
  local layers = {
    { name = "data", type = "kIDXData", batchsize = 16, images = img, labels = lab, exclude = { "kTest", "kValidation" } },
    { name = "data", type = "kIDXData", batchsize = 20, images = vimg, labels = vlab, exclude = "kTrain" },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 16 },
    { name = "relu", type = "kReLU", srclayer = "fc1" },
    { name = "fc2", type = "kInnerProduct", srclayer = "relu", num_output = 4 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc2", "label" } },
  }
  local j = {
    name = "early", seed = 1, train_steps = o.steps or 60, disp_freq = 0,
    validate_freq = o.validate and 5 or nil, validate_steps = o.validate and 2 or nil,
    test_freq = o.test and 5 or nil, test_steps = o.test and 2 or nil,
    checkpoint_freq = o.ckpt, checkpoint_path = o.path and (dir .. "/" .. o.path) or nil,
    checkpoint_keep = o.keep, checkpoint_keep_best = o.best, resume = o.resume,
    on_validation = o.hook, cluster = o.cluster,
    updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = o.lr or 0.05 } },
    neuralnet = { layer = layers },
  }
  return j
end

-- on_validation: what it sees, and "stop".
local seen = {}
local r = singa.train(job{ validate = true, test = true, path = "stop", ckpt = 100, hook = function(v)
  seen[#seen + 1] = v
  if v.step >= 15 then return "stop" end
end })
tap.is(#seen, 4, "on_validation runs after each validation (steps 0, 5, 10, 15), not after the tests")
tap.ok(seen[2].step == 5 and seen[2].phase == "validation" and type(seen[2].loss) == "number" and
       seen[2].accuracy >= 0 and seen[2].accuracy <= 1, "it gets { step, phase, loss, accuracy }")
tap.ok(r.stopped_early == true and r.steps == 15, "\"stop\" ends training before that step's iteration; "
       .. "r.stopped_early and r.steps say so", r.steps)
tap.ok(r.validation and r.test, "the result holds the last validation and test")
tap.is(ls(dir .. "/stop"), "step000000015.ckpt", "a job that checkpoints writes its final checkpoint at the stop")

r = singa.train(job{ test = true, hook = function(v) if v.phase == "test" and v.step == 10 then return "stop" end end })
tap.ok(r.stopped_early and r.steps == 10, "without validation it watches the test results", r.steps)
r = singa.train(job{ validate = true, steps = 20, hook = function() end })
tap.ok(r.steps == 20 and not r.stopped_early, "returning nothing trains to the end")

tap.raises({ "on_validation at step 0 returned \"halt\"", "return \"stop\"" }, "any other word is refused",
           singa.train, job{ validate = true, hook = function() return "halt" end })
tap.raises({ "on_validation at step 0:", "boom" }, "an error in it stops the job with the step",
           singa.train, job{ validate = true, hook = function() error("boom") end })
tap.raises("the job has none: set validate_freq", "a job without validation or test is refused",
           singa.train, job{ hook = function() end })
tap.raises("not for a job with a cluster (distributed) yet", "a distributed job refuses it",
           singa.train, job{ validate = true, hook = function() end, cluster = { nworkers_per_group = 2 } })
tap.raises("did you mean 'on_validation'", "a misspelt field",
           singa.train, (function() local j = job{} j.on_validate = function() end return j end)())

-- checkpoint_keep_best: the best validation accuracy survives rotation (keep 1) and resume.
local accs = {}
r = singa.train(job{ validate = true, path = "best", ckpt = 5, keep = 1, best = "accuracy", steps = 40,
                     hook = function(v) accs[v.step] = v.accuracy end })
local best, bstep = -1, nil
for s = 0, 35, 5 do if accs[s] > best then best, bstep = accs[s], s end end
tap.ok(r.best and r.best.step == bstep and math.abs(r.best.accuracy - best) < 1e-9,
       "r.best: the step and validation accuracy of the best result", r.best and r.best.step)
tap.is(r.best and r.best.checkpoint, td.ckpt(dir .. "/best", bstep), "r.best.checkpoint names its file")
local want = { td.ckpt(dir .. "/best", bstep):match("[^/]*$"), "step000000040.ckpt" }
table.sort(want)
tap.is(ls(dir .. "/best"), bstep == 40 and want[2] or table.concat(want, " "),
       "with checkpoint_keep = 1 the newest and the best stay")
local ok, t = pcall(singa.test, job{ test = true, path = "best" })
tap.ok(ok and t.step == 40, "singa.test still reads the newest checkpoint", t)

-- A worse start: with lr 0 nothing improves after step 0, so the best is step 0 throughout,
-- also after resuming from a later checkpoint.
singa.train(job{ validate = true, path = "flat", ckpt = 5, keep = 1, best = "loss", steps = 20, lr = 0 })
r = singa.train(job{ validate = true, path = "flat", ckpt = 5, keep = 1, best = "loss", steps = 30, lr = 0, resume = true })
tap.ok(r.best and r.best.step == 0, "resume keeps the best so far (step 0 stays the best)", r.best and r.best.step)
tap.is(ls(dir .. "/flat"), "step000000000.ckpt step000000030.ckpt", "... and keeps its file through rotation")

tap.raises("did you mean 'accuracy'", "an unknown metric", singa.train,
           job{ validate = true, path = "x", best = "acuracy" })
tap.raises("checkpoint_keep_best is set but checkpoint_path is not", "it needs checkpoint_path", singa.train,
           job{ validate = true, best = "loss" })

tap.done()

-- Bad jobs: every mistake is refused before training with a message that names the culprit
-- (the field, layer, file or tensor) and, where a close name exists, suggests it.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"
local write = td.write

local dir = td.tmpdir("3000-errors")
local img, lab = td.idx(dir, 64, 4)

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- A small valid job; `mod` changes it into a bad one.
local function job(mod)
  local j = {
    name = "errors", seed = 1, train_steps = 2,
    updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.1 } },
    neuralnet = { layer = {
      { name = "data", type = "kIDXData", batchsize = 8, images = img, labels = lab },
      { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
      { name = "label", type = "kLabel", srclayer = "data" },
      { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 4 },
      { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc1", "label" } },
    } },
  }
  if mod then mod(j, j.neuralnet.layer) end
  return j
end

-- Layer i of the base job, by name, so edits below read clearly.
local function layer(layers, name)
  for _, l in ipairs(layers) do
    if l.name == name then return l end
  end
  error("no layer " .. name)
end

-- Passes when singa.train(job(mod)) fails with a message containing every string in `want`.
local function refuses(want, name, mod) return tap.raises(want, name, singa.train, job(mod)) end

-- The base job itself is fine (otherwise every refusal below proves nothing).
local ok, r = pcall(singa.train, job())
tap.ok(ok and r.steps == 2, "the base job trains", not ok and r or nil)

-- Fields
refuses({ "layer 'fc1'", "unknown field 'num_ouput'", "did you mean 'num_output'" },
        "misspelt layer field: did-you-mean", function(_, L)
  local fc = layer(L, "fc1"); fc.num_output = nil; fc.num_ouput = 4
end)
refuses({ "layer 'fc1'", "'num_output'", "integer", "\"ten\"" }, "wrong field type names field, wanted type and value",
        function(_, L) layer(L, "fc1").num_output = "ten" end)
refuses({ "'num_output'", "integer" }, "non-integer num_output refused",
        function(_, L) layer(L, "fc1").num_output = 2.5 end)
refuses({ "layer 'fc1'", "'num_output'" }, "num_output = 0 refused",
        function(_, L) layer(L, "fc1").num_output = 0 end)
refuses({ "unknown field 'train_step'", "did you mean 'train_steps'" }, "unknown job field: did-you-mean",
        function(j) j.train_step = 3 end)
refuses({ "job", "train_steps" }, "missing train_steps refused", function(j) j.train_steps = nil end)
refuses({ "train_steps", "positive" }, "train_steps = 0 refused", function(j) j.train_steps = 0 end)
refuses({ "train_steps", "integer" }, "fractional train_steps refused", function(j) j.train_steps = 2.5 end)
refuses({ "neuralnet", "unknown field 'layers'", "did you mean 'layer'" }, "neuralnet.layers: did-you-mean",
        function(j) j.neuralnet.layers, j.neuralnet.layer = j.neuralnet.layer, nil end)
refuses("neuralnet", "empty layer list refused", function(j) j.neuralnet.layer = {} end)
refuses({ "layer 4", "'name'" }, "layer without a name refused", function(_, L) layer(L, "fc1").name = nil end)
refuses({ "'fc1'", "'type'" }, "layer without a type refused", function(_, L) layer(L, "fc1").type = nil end)

-- Layer types and the graph
refuses({ "'fc1'", "unknown layer type 'kInnerProdcut'", "did you mean 'kInnerProduct'" },
        "unknown layer type: did-you-mean", function(_, L) layer(L, "fc1").type = "kInnerProdcut" end)
refuses({ "layer 'fc1'", "srclayer" }, "missing srclayer names the layer and the field",
        function(_, L) layer(L, "fc1").srclayer = nil end)
refuses({ "layer 'fc1'", "unknown srclayer 'imgae'", "did you mean 'image'" }, "unknown srclayer: did-you-mean",
        function(_, L) layer(L, "fc1").srclayer = "imgae" end)
refuses({ "layer 'fc1'", "srclayer 'image'", "excluded", "kTrain" }, "srclayer excluded from the phase",
        function(_, L) layer(L, "image").exclude = "kTrain" end)
refuses({ "srclayer 'image'", "excluded", "kTest" }, "srclayer excluded from the test phase only", function(j, L)
  j.test_steps, j.test_freq = 1, 1
  layer(L, "image").exclude = "kTest"
end)
refuses({ "cycle", "'image'", "'fc1'" }, "a cycle names its layers",
        function(_, L) layer(L, "image").srclayer = "fc1" end)
refuses({ "'image'", "itself" }, "a layer that is its own source is refused",
        function(_, L) layer(L, "image").srclayer = "image" end)
refuses({ "'fc1'", "kTrain", "name is used" }, "duplicate name within a phase", function(_, L)
  L[#L + 1] = { name = "fc1", type = "kReLU", srclayer = "image" }
end)
refuses({ "'data'", "kTest", "name is used" }, "duplicate name in the test phase only", function(j, L)
  j.test_steps, j.test_freq = 1, 1
  L[#L + 1] = { name = "data", type = "kIDXData", batchsize = 8, images = img, labels = lab, exclude = "kTrain" }
end)
do
  local good, res = pcall(singa.train, job(function(j, L)
    j.test_steps, j.test_freq = 1, 1
    layer(L, "data").exclude = "kTest"
    L[#L + 1] = { name = "data", type = "kIDXData", batchsize = 16, images = img, labels = lab, exclude = "kTrain" }
  end))
  tap.ok(good and res.test and res.test.accuracy ~= nil, "two 'data' layers with disjoint exclude are fine",
         not good and res or nil)
end
refuses({ "layer 'image'", "exclude", "unknown phase 'kTrian'", "did you mean 'kTrain'" },
        "unknown exclude phase: did-you-mean", function(_, L) layer(L, "image").exclude = "kTrian" end)
refuses({ "exclude", "unknown phase 'kFoo'" }, "unknown exclude phase without a close name",
        function(_, L) layer(L, "image").exclude = { "kTest", "kFoo" } end)
refuses({ "no loss layer" }, "a train net without a loss layer", function(_, L) L[#L] = nil end)
refuses({ "layer 'loss'", "'fc1'", "'fc2'", "8x10", "8x5" }, "kEuclideanLoss 10-wide vs 5-wide names both", function(_, L)
  layer(L, "fc1").num_output = 10
  L[#L + 1] = { name = "fc2", type = "kInnerProduct", srclayer = "image", num_output = 5 }
  local loss = layer(L, "loss")
  loss.type, loss.srclayer = "kEuclideanLoss", { "fc1", "fc2" }
end)
refuses({ "layer 'loss'", "labels", "'image'", "'fc1'" }, "kSoftmaxLoss labels not matching the predictions",
        function(_, L) layer(L, "loss").srclayer = { "fc1", "image" } end)
refuses({ "layer 'loss'", "needs 2" }, "kSoftmaxLoss with one source", function(_, L) layer(L, "loss").srclayer = "fc1" end)
refuses({ "layer 'loss'", "topk" }, "topk above the class count", function(_, L) layer(L, "loss").topk = 9 end)
refuses({ "layer 'drop'", "dropout_ratio", "1" }, "kDropout ratio 1 refused", function(_, L)
  table.insert(L, { name = "drop", type = "kDropout", srclayer = "fc1", dropout_ratio = 1 })
  layer(L, "loss").srclayer = { "drop", "label" }
end)
refuses({ "layer 'drop'", "dropout_ratio", "-0.1" }, "kDropout negative ratio refused", function(_, L)
  table.insert(L, { name = "drop", type = "kDropout", srclayer = "fc1", dropout_ratio = -0.1 })
  layer(L, "loss").srclayer = { "drop", "label" }
end)
refuses({ "layer 'label'", "no labels" }, "kLabel over a source without labels",
        function(_, L) layer(L, "label").srclayer = "image" end)
refuses({ "layer 'image'", "norm_a" }, "kMnist norm_a = 0 refused", function(_, L) layer(L, "image").norm_a = 0 end)
refuses({ "layer 'data'", "batchsize" }, "batchsize 0 refused", function(_, L) layer(L, "data").batchsize = 0 end)

-- Params
refuses({ "layer 'fc1'", "'param'", "3", "2" }, "param list longer than the layer's params",
        function(_, L) layer(L, "fc1").param = { {}, {}, {} } end)
refuses({ "layer 'fc1'", "share_from", "'nosuch'" }, "share_from naming an unknown param",
        function(_, L) layer(L, "fc1").param = { { share_from = "nosuch" } } end)
refuses({ "layer 'fc2'", "fc2_weight", "fc1_weight", "4x4", "4x64" }, "share_from with a shape mismatch", function(_, L)
  L[#L + 1] = { name = "fc2", type = "kInnerProduct", srclayer = "fc1", num_output = 4,
                param = { { share_from = "fc1_weight" } } }
  layer(L, "loss").srclayer = { "fc2", "label" }
end)
refuses({ "layer 'fc1'", "'w'" }, "two params of one name in one layer are refused",
        function(_, L) layer(L, "fc1").param = { { name = "w" }, { name = "w" } } end)
refuses({ "'fc1'", "unknown init type 'kGausian'", "did you mean 'kGaussian'" }, "unknown init type: did-you-mean",
        function(_, L) layer(L, "fc1").param = { { init = { type = "kGausian" } } } end)
refuses({ "'fc1'", "unknown field 'lr_scal'", "did you mean 'lr_scale'" }, "misspelt param field: did-you-mean",
        function(_, L) layer(L, "fc1").param = { { lr_scal = 2 } } end)

do -- distinct long layer names give distinct default param names
  local a, b = string.rep("x", 200) .. "1", string.rep("x", 200) .. "2"
  local good, res = pcall(singa.train, job(function(_, L)
    L[#L + 1] = { name = a, type = "kInnerProduct", srclayer = "image", num_output = 4 }
    L[#L + 1] = { name = b, type = "kInnerProduct", srclayer = "image", num_output = 4 }
    L[#L + 1] = { name = "l2", type = "kEuclideanLoss", srclayer = { a, b } }
  end))
  tap.ok(good, "two long layer names differing only at the end are two layers with their own params",
         not good and res or nil)
end

-- Data files
refuses({ "layer 'data'", dir .. "/nosuch-images" }, "a missing data file names the path",
        function(_, L) layer(L, "data").images = dir .. "/nosuch-images" end)
refuses({ "layer 'data'", dir .. "/nosuch-labels" }, "a missing labels file names the path",
        function(_, L) layer(L, "data").labels = dir .. "/nosuch-labels" end)
local raw = read(img)
write(dir .. "/truncated", raw:sub(1, 16 + 64 * 10 + 5))
refuses({ dir .. "/truncated", "truncated" }, "a truncated IDX file is refused",
        function(_, L) layer(L, "data").images = dir .. "/truncated" end)
write(dir .. "/short-header", raw:sub(1, 10))
refuses({ dir .. "/short-header", "header" }, "an IDX file cut inside its header",
        function(_, L) layer(L, "data").images = dir .. "/short-header" end)
write(dir .. "/bad-magic", "\1\2\3\4" .. raw:sub(5))
refuses({ dir .. "/bad-magic", "not an IDX file" }, "a file that is not IDX",
        function(_, L) layer(L, "data").images = dir .. "/bad-magic" end)
write(dir .. "/floats", "\0\0\13\3" .. raw:sub(5))
refuses({ dir .. "/floats", "element type" }, "an IDX file of floats is refused",
        function(_, L) layer(L, "data").images = dir .. "/floats" end)
write(dir .. "/img.gz.src", raw)
os.execute("gzip -c '" .. dir .. "/img.gz.src' > '" .. dir .. "/img.gz'")
local gz = read(dir .. "/img.gz")
write(dir .. "/cut.gz", gz:sub(1, #gz // 2))
refuses({ dir .. "/cut.gz" }, "a truncated gzip IDX file names the path",
        function(_, L) layer(L, "data").images = dir .. "/cut.gz" end)
do
  local good = pcall(singa.train, job(function(_, L) layer(L, "data").images = dir .. "/img.gz" end))
  tap.ok(good, "the same file gzip'd whole is read")
end
write(dir .. "/labels60", string.pack(">I4I4", 0x801, 60) .. string.rep("\0", 60))
refuses({ "layer 'data'", "60", "64", dir .. "/labels60" }, "images/labels count mismatch",
        function(_, L) layer(L, "data").labels = dir .. "/labels60" end)
write(dir .. "/labels9", string.pack(">I4I4", 0x801, 64) .. string.rep("\9", 64))
refuses({ "layer 'loss'", "label 9" }, "a label outside the classes is refused",
        function(_, L) layer(L, "data").labels = dir .. "/labels9" end)

-- Updater
refuses({ "updater", "unknown type 'kNesterv'", "did you mean 'kNesterov'" }, "bad updater type: did-you-mean",
        function(j) j.updater.type = "kNesterv" end)
refuses({ "updater", "learning_rate" }, "missing learning_rate", function(j) j.updater.learning_rate = nil end)
refuses({ "learning_rate", "base_lr" }, "missing base_lr", function(j) j.updater.learning_rate.base_lr = nil end)
refuses({ "learning_rate", "unknown type 'kFixd'", "did you mean 'kFixed'" }, "bad lr schedule: did-you-mean",
        function(j) j.updater.learning_rate.type = "kFixd" end)
refuses({ "kStep", "change_freq" }, "kStep without change_freq", function(j) j.updater.learning_rate.type = "kStep" end)
refuses({ "updater", "momentum" }, "momentum 1 refused", function(j) j.updater.momentum = 1 end)
refuses({ "updater", "unknown field 'momentun'", "did you mean 'momentum'" }, "misspelt updater field",
        function(j) j.updater.momentun = 0.9 end)
refuses({ "updater: unknown field 'base_lr': it belongs in learning_rate", "learning_rate = { type = \"kFixed\", base_lr" },
        "base_lr on the updater: says it belongs in learning_rate",
        function(j) j.updater.learning_rate, j.updater.base_lr = nil, 0.01 end)
refuses({ "updater: unknown field 'change_freq': it belongs in learning_rate" }, "a schedule's field on the updater",
        function(j) j.updater.change_freq = 10 end)
refuses({ "updater" }, "missing updater", function(j) j.updater = nil end)

-- Cluster and the rest of the job
refuses({ "cluster", "nworker_groups = 3", "multiple of nserver_groups = 2" }, "server groups that do not divide the worker groups",
        function(j) j.cluster = { nworker_groups = 3, nserver_groups = 2 } end)
refuses({ "cluster", "nworkers_per_procs = 3", "divide" }, "workers per process that split a group",
        function(j) j.cluster = { nworkers_per_group = 2, nworkers_per_procs = 3 } end)
refuses({ "batchsize", "does not split evenly over the 3 workers" }, "a batch that does not split over the workers",
        function(j) j.cluster = { nworkers_per_group = 3 } end)
os.execute("mkdir -p '" .. dir .. "/plain-ckpt'")
write(dir .. "/plain-ckpt/step000000002.ckpt", "")
refuses({ "checkpoint_path", "holds 1 checkpoint of an earlier run", "resume = true continues them", "overwrite = true replaces them" },
        "a fresh distributed job does not mix its checkpoints with a plain job's (resume reshards them)",
        function(j) j.cluster = { nworkers_per_group = 2 }; j.checkpoint_path = dir .. "/plain-ckpt" end)
-- A plain job the same: a fresh run refuses an earlier run's checkpoints, headless, naming the
-- folder and the two ways out; with overwrite = true it trains and its checkpoint replaces them.
refuses({ "checkpoint_path '" .. dir .. "/plain-ckpt' holds 1 checkpoint of an earlier run (newest: step 2), which a "
          .. "fresh run does not replace unasked: resume = true continues them, overwrite = true replaces them once "
          .. "this run has written its first checkpoint" },
        "a fresh plain job does not replace an earlier run's checkpoints unasked",
        function(j) j.checkpoint_path = dir .. "/plain-ckpt" end)
do
  local f = io.open(dir .. "/plain-ckpt/step000000002.ckpt")
  tap.ok(f and f:read("a") == "", "... and they stay")
  if f then f:close() end
  local ok, r = pcall(singa.train, job(function(j) j.checkpoint_path, j.overwrite = dir .. "/plain-ckpt", true end))
  f = io.open(dir .. "/plain-ckpt/step000000002.ckpt")
  tap.ok(ok and r.steps == 2 and f and f:read(8) == "SINGACKP",
         "with overwrite = true it trains, and its checkpoint replaces them", not ok and r or nil)
  if f then f:close() end
end
refuses({ "cluster", "nworkers_per_group", "must be in 1..4096, got 0" }, "zero workers refused",
        function(j) j.cluster = { nworkers_per_group = 0 } end)
do
  local good = pcall(singa.train, job(function(j) j.cluster = { nworker_groups = 1, nserver_groups = 1 } end))
  tap.ok(good, "an explicit one worker / one server cluster is fine")
end
refuses({ "train_one_batch", "kGibbs" }, "unknown training algorithm", function(j) j.train_one_batch = { alg = "kGibbs" } end)
refuses({ "checkpoint_path" }, "checkpoint_freq without checkpoint_path", function(j) j.checkpoint_freq = 1 end)
refuses({ "resume", "checkpoint_path" }, "resume without checkpoint_path", function(j) j.resume = true end)
refuses({ "job: field 'seed' must be an integer, got function" }, "a function value names its field", function(j) j.seed = print end)
refuses({ "layer 'image' (kMnist): field 'norm_a' must be a number, got function" }, "a nested function value names its layer and field",
        function(_, L) layer(L, "image").norm_a = function() end end)
refuses({ "job", "mixes" }, "a table mixing list items and fields", function(j) j[1] = 5 end)

tap.raises("table expected", "a non-table job (number)", singa.train, 5)
tap.raises("table expected", "no job at all", singa.train)
tap.raises("job", "a job that is a list", singa.train, { "a", "b" })

-- A table that contains itself is refused with a message, not a crash.  Run in a child process
-- inside a coroutine (a small Lua stack) so a stack overflow in the engine cannot take this
-- test down with it.
do
  local tui = os.getenv("SINGA_TUI")
  local script = dir .. "/cyclic.lua"
  write(script, [[
local singa = require "singa"
local t = {}
t.x = t
local ok, msg = coroutine.wrap(function() return pcall(singa.train, { name = t }) end)()
io.write(ok and "ACCEPTED" or msg, "\n")
]])
  local p = io.popen(string.format("'%s' -e '%s' 2>&1; echo \"exit=$?\"", tui, script))
  local out = p:read("a")
  p:close()
  tap.ok(out:find("nested too deeply", 1, true) and out:find("exit=0", 1, true),
         "a job table that contains itself is refused without crashing", out)
end

-- Scratch files go when everything passed; on a failure they stay for a look.
if tap.failed == 0 then os.execute("rm -rf '" .. dir .. "'") end
tap.done()

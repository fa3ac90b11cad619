-- ONNX export refusals: a layer without an ONNX form (an old plugin's, kConcate of instances) is named
-- before anything is written, so no file, temporary or not, is left and an older file at the
-- path is untouched; an unwritable path and a job without checkpoints are refused; a named
-- checkpoint is the one exported.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"
local ot = require "onnxtools"

local dir = td.tmpdir("7220-onnx-refuse")
local img, lab = td.idx(dir .. "/data", 60, 4, 6, 6, 3)

local function files(d)
  local p = io.popen("ls -A '" .. d .. "'")
  local s = p:read("a")
  p:close()
  return s
end

local function job(name, middle, steps)
  local layers = {
    { name = "data", type = "kIDXData", batchsize = 12, images = img, labels = lab },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 8 },
  }
  for _, l in ipairs(middle) do layers[#layers + 1] = l end
  layers[#layers + 1] = { name = "fc2", type = "kInnerProduct", srclayer = layers[#layers].name, num_output = 4 }
  layers[#layers + 1] = { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc2", "label" } }
  return { name = name, seed = 1, train_steps = steps or 2, checkpoint_freq = 1, checkpoint_path = dir .. "/" .. name,
           updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.1 } },
           neuralnet = { layer = layers } }
end

local out = dir .. "/out"
os.execute("mkdir -p '" .. out .. "'")
td.write(out .. "/model.onnx", "an older model")

-- kGainOld: a plugin of ABI 1.2 (t/plugins/gain.c), from before layer types could export themselves.
local build = os.getenv("SINGA_TUI"):match("^(.*)/[^/]*$")
local old = job("old", { { name = "gain", type = "kGainOld", srclayer = "fc1" } })
old.plugins = build .. "/t/plugins/.libs/gain_old.so"
singa.train(old)
tap.raises("layer 'gain' (kGainOld) has no ONNX form", "a layer of an older plugin the output depends on is refused, named with its type",
           singa.export_onnx, old, out .. "/model.onnx")
tap.is(files(out), "model.onnx\n", "nothing else is left in the folder (no temporary file)")
tap.is(td.read(out .. "/model.onnx"), "an older model", "the older file at the path is untouched")

-- Instances joined (kConcate on dim 0), then cut back to a batch (kSlice on dim 0).
local rows = job("rows", { { name = "a", type = "kReLU", srclayer = "fc1" }, { name = "b", type = "kTanh", srclayer = "fc1" },
                           { name = "cat", type = "kConcate", concate_dim = 0, srclayer = { "a", "b" } },
                           { name = "half", type = "kSlice", slice_dim = 0, num_slices = 2, srclayer = "cat" } })
singa.train(rows)
tap.raises("layer 'cat' (kConcate): concate_dim 0", "kConcate of instances (concate_dim 0) is refused, named",
           singa.export_onnx, rows, out .. "/rows.onnx")
tap.is(files(out), "model.onnx\n", "and leaves no file")

-- An unused layer without an ONNX form is dropped, not refused: the output does not depend on it.
local plain = job("plain", { { name = "act", type = "kReLU", srclayer = "fc1" } }, 3)
table.insert(plain.neuralnet.layer, { name = "top", type = "kArgSort", srclayer = "fc2", topk = 2 })
singa.train(plain)
local info = singa.export_onnx(plain, out .. "/plain.onnx")
tap.ok(info.output == "loss" and info.input == "data" and info.step == 3, "a kArgSort beside the output is dropped")

tap.raises("cannot create '" .. dir .. "/missing/m.onnx.tmp", "a path in a missing folder is refused, naming it",
           singa.export_onnx, plain, dir .. "/missing/m.onnx")
tap.raises("cannot create", "a path under a file is refused", singa.export_onnx, plain, out .. "/plain.onnx/m.onnx")
tap.raises("checkpoint_path", "a job that was never trained is refused, saying so",
           singa.export_onnx, job("untrained", {}), out .. "/u.onnx")
tap.is(files(out), "model.onnx\nplain.onnx\n", "refused exports leave no file")

-- A named checkpoint is exported instead of the newest.
local older = td.ckpt(plain.checkpoint_path, 1)
info = singa.export_onnx(plain, out .. "/older.onnx", older)
tap.ok(info.step == 1 and info.checkpoint == older, "the checkpoint named is the one exported", info.checkpoint)
local why = ot.missing()
if why then
  tap.ok(true, "its outputs are that checkpoint's predictions # SKIP " .. why)
else
  local at1 = job("plain", { { name = "act", type = "kReLU", srclayer = "fc1" } }, 3)
  at1.checkpoint_path = older
  local x = {}
  for i = 1, 5 do
    local r = {}
    for k = 1, 36 do r[k] = (i * 37 + k * 11) % 256 end
    x[i] = r
  end
  local got = ot.run(out .. "/older.onnx", x, { 5, 6, 6 }, dir)
  local newest = ot.run(out .. "/plain.onnx", x, { 5, 6, 6 }, dir)
  tap.ok(got and ot.maxdiff(singa.predict(at1, x), got) <= 1e-5 and ot.maxdiff(singa.predict(plain, x), newest) <= 1e-5 and
         ot.maxdiff(got, newest) > 1e-4, "its outputs are that checkpoint's predictions, not the newest's")
end
tap.done()

-- Labels are checked as the data layers read them, naming the file and the line or record: a
-- label must be a whole number >= 0, and below the classes of the loss layer that reads it,
-- which the net's setup checks against the whole data set, before any training step.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"
local write = td.write

local dir = td.tmpdir("2410-bad-labels")

-- A CSV file of n rows "label,f1,f2" with labels 0..9 in turn and `bad` at 1-based row `at`.
local function csv(name, n, at, bad)
  local rows = {}
  for i = 1, n do rows[i] = string.format("%s,%d,%d", i == at and bad or tostring((i - 1) % 10), i, -i) end
  local p = dir .. "/" .. name
  write(p, "\n" .. table.concat(rows, "\n") .. "\n") -- a blank first line: lines are the file's own
  return p
end

-- IDX images (n of 2 x 2) and labels 0..9 in turn with `bad` at 1-based record `at`.
local function idx(name, n, at, bad)
  local px, lb = {}, {}
  for i = 1, n do
    lb[i] = string.char(i == at and bad or (i - 1) % 10)
    px[i] = string.rep(string.char(i % 256), 4)
  end
  local images, labels = dir .. "/" .. name .. "-images", dir .. "/" .. name .. "-labels"
  write(images, string.pack(">I4I4I4I4", 0x803, n, 2, 2) .. table.concat(px))
  write(labels, string.pack(">I4I4", 0x801, n) .. table.concat(lb))
  return images, labels
end

-- CIFAR-10 binary records (1 label byte, 3 x 32 x 32 pixels) with `bad` at 1-based record `at`.
local function cifar(name, n, at, bad)
  local recs = {}
  for i = 1, n do recs[i] = string.char(i == at and bad or (i - 1) % 10) .. string.rep("\0", 3072) end
  local p = dir .. "/" .. name
  write(p, table.concat(recs))
  return p
end

-- A job: `data` (any input layer, in every phase unless it excludes some), kLabel, a 10-class
-- kInnerProduct and kSoftmaxLoss; `extra` layers are added.
local function job(data, o)
  o = o or {}
  data.name = "data"
  local layers = { data }
  for _, l in ipairs(o.before or {}) do layers[#layers + 1] = l end
  layers[#layers + 1] = { name = "label", type = "kLabel", srclayer = "data" }
  layers[#layers + 1] = { name = "fc", type = "kInnerProduct", srclayer = o.fc_src or "data", num_output = o.classes or 10 }
  layers[#layers + 1] = { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc", "label" } }
  for _, l in ipairs(o.extra or {}) do layers[#layers + 1] = l end
  return { name = "labels", train_steps = o.steps or 3, test_steps = o.test_steps or 0, test_freq = 0,
           updater = { type = "kSGD", learning_rate = { base_lr = 0.01 } }, neuralnet = { layer = layers } }
end

local function refuses(want, name, j) return tap.raises(want, name, singa.train, j) end

-- kCSVInput: read-time checks name the file and the line.
local f = csv("frac.csv", 20, 5, "2.5")
refuses({ "layer 'data' (kCSVInput)", "file '" .. f .. "' line 6: label 2.5 is not a class index" },
        "kCSVInput: a label 2.5 is refused at read time, naming file and line",
        job{ type = "kCSVInput", path = f, batchsize = 4 })
f = csv("neg.csv", 20, 17, "-1")
refuses({ "file '" .. f .. "' line 18: label -1 is not a class index" }, "kCSVInput: a label -1 is refused",
        job{ type = "kCSVInput", path = f, batchsize = 4 })
f = csv("big.csv", 20, 16, "15")
refuses({ "layer 'loss' (kSoftmaxLoss)", "label 15 at line 17 of file '" .. f .. "' (layer 'data') is out of range",
          "'fc' gives 10 classes, 0..9" },
        "kCSVInput: a label 15 of 10 classes is found at setup, not at the step that reads it",
        job({ type = "kCSVInput", path = f, batchsize = 4 }, { steps = 1 }))
refuses({ "layer 'acc' (kAccuracy)", "label 15 at line 17" }, "kAccuracy checks its labels too, through a kSplit",
        job({ type = "kCSVInput", path = f, batchsize = 4 }, { classes = 16, extra = {
              { name = "fc2", type = "kInnerProduct", srclayer = "data", num_output = 10 },
              { name = "split", type = "kSplit", srclayer = "label" },
              { name = "acc", type = "kAccuracy", srclayer = { "fc2", "split" } } } }))
local ok = pcall(singa.train, job({ type = "kCSVInput", path = f, batchsize = 4 }, { classes = 16 }))
tap.ok(ok, "label 15 is fine for 16 classes")
f = csv("nolabel.csv", 20, 16, "2.5")
refuses({ "layer 'data' (kCSVInput)", "file '" .. f .. "' line 17", "label 2.5" },
        "kCSVInput: a test-only data layer is checked as well",
        (function()
          local j = job({ type = "kCSVInput", path = csv("good.csv", 20), batchsize = 4, exclude = "kTest" },
                        { test_steps = 1, before = { { name = "data", type = "kCSVInput", path = f, batchsize = 4,
                                                        exclude = "kTrain" } } })
          return j
        end)())

-- kIDXData: the labels file and the record.
local img, lab = idx("big", 30, 23, 15)
refuses({ "layer 'loss' (kSoftmaxLoss)", "label 15 at record 23 of file '" .. lab .. "' (layer 'data') is out of range" },
        "kIDXData: a label 15 of 10 classes names the labels file and the record",
        job{ type = "kIDXData", images = img, labels = lab, batchsize = 5 })
img, lab = idx("good", 30)
tap.ok(pcall(singa.train, job{ type = "kIDXData", images = img, labels = lab, batchsize = 5 }), "kIDXData: labels 0..9 train")

-- kRGBImage: the file (of several) and the record in it.
local bins = { cifar("a.bin", 6), cifar("b.bin", 6, 4, 12) }
refuses({ "label 12 at record 4 of file '" .. bins[2] .. "' (layer 'data')", "0..9" },
        "kRGBImage: a label 12 of 10 classes names the file of the list and the record",
        job{ type = "kRGBImage", path = bins, batchsize = 3 })

-- singa-tui -e: the message on stderr and a non-zero exit.
local script = dir .. "/job.lua"
f = csv("cli.csv", 20, 16, "15")
write(script, string.format([[
local singa = require "singa"
singa.train({ name = "cli", train_steps = 100, updater = { type = "kSGD", learning_rate = { base_lr = 0.01 } },
  neuralnet = { layer = {
    { name = "data", type = "kCSVInput", path = %q, batchsize = 4 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "fc", type = "kInnerProduct", srclayer = "data", num_output = 10 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc", "label" } } } } })
]], f))
local p = io.popen(string.format("'%s' -e '%s' 2>&1; echo \"exit=$?\"", os.getenv("SINGA_TUI"), script))
local out = p:read("a")
p:close()
tap.ok(out:find("label 15 at line 17 of file '" .. f .. "'", 1, true) and not out:find("exit=0\n", 1, true)
       and not out:find("step ", 1, true),
       "singa-tui -e: the bad label is reported before any step, and the exit status is non-zero", out)

if tap.failed == 0 then os.execute("rm -rf '" .. dir .. "'") end
tap.done()

-- A net's summary (singa.summary, singa-tui --summary) and a job's params (singa.params):
-- layers with output shapes and parameter counts like Keras' model.summary(); copies of the
-- running job's params, the last job's after it, and an error before any job ran.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"

local dir = td.tmpdir("5400-summary-params")
local img, lab = td.idx(dir .. "/train", 64, 4)
local seen -- what singa.params() gave from inside the running job
local function job(steps)
  return {
    name = "summary", seed = 1, train_steps = steps, disp_freq = 0,
    updater = { type = "kSGD", learning_rate = function(step)
      if step == 3 and not seen then seen = singa.params() end
      return 0.05
    end },
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

tap.raises("no job is running or has run yet", "singa.params() before any job: an error that says so", singa.params)

local text, s = singa.summary(job(10))
local inputs = 8 * 8 -- testdata's images
local fc1, fc2 = inputs * 16 + 16, 16 * 4 + 4
tap.is(#s.layers, 7, "singa.summary: a row per layer")
tap.is(s.layers[4].name .. " " .. s.layers[4].type .. " " .. s.layers[4].params, "fc1 kInnerProduct " .. fc1,
       "... with its name, type and parameter count (weights and bias)")
tap.is(table.concat(s.layers[4].shape, "x"), "16x16", "... and its output shape (batch x outputs)")
tap.is(s.params, fc1 + fc2, "... and the total")
tap.ok(text:match("^layer +type +output +params\n") and text:match("\nfc1 +kInnerProduct +16x16 +1,040\n")
       and text:match("\ntotal params: 1,108\n$"), "... and as text, Keras-like", text)

local r = singa.train(job(10))
tap.ok(seen and next(seen) ~= nil, "singa.params() inside the running job gives its params")
local n = 0
for _ in pairs(seen or {}) do n = n + 1 end
tap.is(n, 4, "... all four (weights and biases of fc1, fc2)")
local after = singa.params()
local same, count = true, 0
for name, t in pairs(r.params) do
  count = count + 1
  same = same and after[name] ~= nil and after[name]:clone():sub(t):norm() == 0
end
tap.ok(same and count == 4, "after the job, singa.params() gives the last job's final values")
for _, t in pairs(after) do t:fill(0) end
local again = singa.params()
local kept = true
for name, t in pairs(r.params) do kept = kept and again[name]:clone():sub(t):norm() == 0 end
tap.ok(kept, "... as copies: changing them changes nothing")

-- singa-tui --summary prints the same text without training.
local script = dir .. "/job.lua"
local f = assert(io.open(script, "w"))
f:write(string.format([[
local singa = require "singa"
local td = require "testdata"
local img, lab = td.idx(%q, 64, 4)
singa.train{ name = "cli", train_steps = 100000000,
  updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.05 } }, neuralnet = { layer = {
  { name = "data", type = "kIDXData", batchsize = 16, images = img, labels = lab },
  { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
  { name = "label", type = "kLabel", srclayer = "data" },
  { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 16 },
  { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc1", "label" } } } } }
print("after train")
]], dir .. "/cli"))
f:close()
local p = io.popen(string.format("%q --summary %q 2>&1", os.getenv("SINGA_TUI"), script))
local out = p:read("a")
local ok = p:close()
tap.ok(ok and out:match("^layer +type +output +params\n") and out:match("\nfc1 +kInnerProduct +16x16 +1,040\n")
       and out:match("total params: 1,040\n$") and not out:match("after train"),
       "singa-tui --summary prints the summary and ends the script without training", out)
tap.done()

-- Bad updater and learning-rate fields are refused before training, naming the field.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"

local dir = td.tmpdir("3200-updater-errors")
local img, lab = td.idx(dir, 32, 4)

local function job(updater)
  return {
    name = "updater-errors", seed = 1, train_steps = 2, updater = updater,
    neuralnet = { layer = {
      { name = "data", type = "kIDXData", batchsize = 8, images = img, labels = lab },
      { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
      { name = "label", type = "kLabel", srclayer = "data" },
      { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 4 },
      { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc1", "label" } },
    } },
  }
end

local FIXED = { type = "kFixed", base_lr = 0.1 }
local function upd(t)
  t.learning_rate = t.learning_rate or FIXED
  return t
end

-- Passes when the job trains (want == nil) or fails with a message containing every string in want.
local function check(want, name, updater)
  local ok, msg = pcall(singa.train, job(updater))
  if not want then return tap.ok(ok, name, not ok and msg or nil) end
  if ok then return tap.ok(false, name, "no error raised") end
  msg = tostring(msg)
  for _, w in ipairs(want) do
    if not msg:find(w, 1, true) then return tap.ok(false, name, string.format("message %q lacks %q", msg, w)) end
  end
  return tap.ok(true, name)
end

-- Every updater and schedule trains with its defaults (so the refusals below prove something).
for _, t in ipairs{ "kSGD", "kNesterov", "kAdaGrad", "kRMSProp", "kAdaDelta", "kAdam", "kAdamMax" } do
  check(nil, t .. " with defaults trains", upd{ type = t })
end
for _, lr in ipairs{
  { type = "kStep", base_lr = 0.1, change_freq = 1 },
  { type = "kExponential", base_lr = 0.1, change_freq = 1 },
  { type = "kLinear", base_lr = 0.1, final_lr = 0.01, change_freq = 1 },
  { type = "kInverse", base_lr = 0.1, gamma = 0.1, pow = 0.75 },
  { type = "kInverseT", base_lr = 0.1, final_lr = 10 },
  { type = "kFixedStep", step = { 0, 1 }, step_lr = { 0.1, 0.01 } },
  { type = "kFixedStep", base_lr = 0.1, step = 1, step_lr = 0.01 },
} do
  check(nil, lr.type .. " trains", upd{ type = "kSGD", learning_rate = lr })
end

-- Values out of range
check({ "updater", "kRMSProp", "'rho'", "[0, 1)", "got 1" }, "rho = 1 refused", upd{ type = "kRMSProp", rho = 1 })
check({ "updater", "kAdaDelta", "'rho'", "got -0.5" }, "negative rho refused", upd{ type = "kAdaDelta", rho = -0.5 })
check({ "updater", "kAdam", "'beta1'", "[0, 1)" }, "beta1 = 1 refused", upd{ type = "kAdam", beta1 = 1 })
check({ "updater", "kAdamMax", "'beta2'", "[0, 1)" }, "beta2 > 1 refused", upd{ type = "kAdamMax", beta2 = 1.5 })
check({ "updater", "kAdaGrad", "'delta'", "> 0" }, "delta = 0 refused", upd{ type = "kAdaGrad", delta = 0 })
check({ "updater", "'delta'", "> 0" }, "negative delta refused", upd{ type = "kAdam", delta = -1e-8 })
check({ "updater", "'weight_decay'", ">= 0" }, "negative weight_decay refused", upd{ type = "kAdam", weight_decay = -1 })
check({ "updater", "clip_low", "clip_high" }, "clip_low above clip_high refused",
      upd{ type = "kAdam", clip_low = 1, clip_high = -1 })
check({ "'rho'", "a number" }, "a string rho refused with the type wanted", upd{ type = "kRMSProp", rho = "high" })

-- Fields of another updater type
check({ "updater", "'momentum' does not apply to kAdam", "kSGD, kNesterov" }, "momentum with kAdam refused",
      upd{ type = "kAdam", momentum = 0.9 })
check({ "'rho' does not apply to kSGD", "kRMSProp, kAdaDelta" }, "rho with kSGD refused", upd{ type = "kSGD", rho = 0.9 })
check({ "'beta2' does not apply to kRMSProp", "kAdam, kAdamMax" }, "beta2 with kRMSProp refused",
      upd{ type = "kRMSProp", beta2 = 0.9 })
check({ "'delta' does not apply to kNesterov" }, "delta with kNesterov refused", upd{ type = "kNesterov", delta = 1e-6 })
check({ "unknown type 'kAdamax'", "did you mean 'kAdamMax'" }, "misspelt updater type: did-you-mean",
      upd{ type = "kAdamax" })
check({ "unknown field 'beta'", "did you mean" }, "misspelt updater field: did-you-mean", upd{ type = "kAdam", beta = 0.9 })

-- Schedules: required fields, fields of another schedule, bad values
local function lr(t) return upd{ type = "kSGD", learning_rate = t } end
check({ "learning_rate", "'change_freq' is required for kExponential" }, "kExponential without change_freq",
      lr{ type = "kExponential", base_lr = 0.1 })
check({ "learning_rate", "'final_lr' is required for kLinear" }, "kLinear without final_lr",
      lr{ type = "kLinear", base_lr = 0.1, change_freq = 10 })
check({ "learning_rate", "'change_freq' is required for kLinear" }, "kLinear without change_freq",
      lr{ type = "kLinear", base_lr = 0.1, final_lr = 0.01 })
check({ "learning_rate", "'gamma' is required for kInverse" }, "kInverse without gamma",
      lr{ type = "kInverse", base_lr = 0.1, pow = 0.5 })
check({ "learning_rate", "'pow' is required for kInverse" }, "kInverse without pow",
      lr{ type = "kInverse", base_lr = 0.1, gamma = 0.1 })
check({ "learning_rate", "'final_lr' is required for kInverseT" }, "kInverseT without final_lr",
      lr{ type = "kInverseT", base_lr = 0.1 })
check({ "learning_rate", "'base_lr' is required for kInverseT" }, "kInverseT without base_lr",
      lr{ type = "kInverseT", final_lr = 10 })
check({ "'final_lr'", "> 0" }, "kInverseT with final_lr = 0", lr{ type = "kInverseT", base_lr = 0.1, final_lr = 0 })
check({ "'step' is required for kFixedStep" }, "kFixedStep without step", lr{ type = "kFixedStep", step_lr = { 0.1 } })
check({ "'step_lr' is required for kFixedStep" }, "kFixedStep without step_lr", lr{ type = "kFixedStep", step = { 0 } })
check({ "'step' has 3 entries but 'step_lr' has 2" }, "kFixedStep lists of different lengths",
      lr{ type = "kFixedStep", step = { 0, 5, 10 }, step_lr = { 0.1, 0.01 } })
check({ "'step' must be ascending", "5 follows 10" }, "kFixedStep steps out of order",
      lr{ type = "kFixedStep", step = { 0, 10, 5 }, step_lr = { 0.1, 0.01, 0.001 } })
check({ "'step' must be ascending" }, "kFixedStep with a repeated step",
      lr{ type = "kFixedStep", step = { 0, 5, 5 }, step_lr = { 0.1, 0.01, 0.001 } })
check({ "'step' must list whole numbers" }, "kFixedStep with a fractional step",
      lr{ type = "kFixedStep", step = { 0.5 }, step_lr = { 0.1 } })
check({ "'step_lr' must list rates >= 0" }, "kFixedStep with a negative rate",
      lr{ type = "kFixedStep", step = { 0 }, step_lr = { -0.1 } })
check({ "'step'", "a number or a list of numbers" }, "kFixedStep with a string step",
      lr{ type = "kFixedStep", step = { "ten" }, step_lr = { 0.1 } })
check({ "'gamma' does not apply to kFixed", "kStep, kInverse" }, "gamma with kFixed refused",
      lr{ type = "kFixed", base_lr = 0.1, gamma = 0.5 })
check({ "'final_lr' does not apply to kStep", "kLinear, kInverseT" }, "final_lr with kStep refused",
      lr{ type = "kStep", base_lr = 0.1, change_freq = 5, final_lr = 0.01 })
check({ "'change_freq'", "> 0" }, "change_freq = 0 refused", lr{ type = "kLinear", base_lr = 0.1, final_lr = 0, change_freq = 0 })
check({ "'base_lr'", ">= 0" }, "negative base_lr refused", lr{ type = "kFixed", base_lr = -0.1 })
check({ "'pow'", ">= 0" }, "negative pow refused", lr{ type = "kInverse", base_lr = 0.1, gamma = 1, pow = -1 })
check({ "unknown type 'kExponental'", "did you mean 'kExponential'" }, "misspelt schedule: did-you-mean", lr{ type = "kExponental", base_lr = 0.1, change_freq = 5 })

if tap.failed == 0 then os.execute("rm -rf '" .. dir .. "'") end
tap.done()

-- The adaptive updaters: each one learns, checkpoints its state slots, and a resumed run ends
-- exactly where the uninterrupted run does.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"
local read, ckpt = td.read, td.ckpt

local dir = td.tmpdir("4200-updater-resume")
local img, lab = td.idx(dir, 200, 4)

-- Shuffling, dropout, a test net and a weight shared by two branches, so every kind of
-- checkpointed state matters; `upd` is the updater table without its learning_rate.
local function job(upd, o)
  upd.learning_rate = o.lr or { type = "kFixed", base_lr = 0.01 }
  return {
    name = "updater-resume", seed = 3, train_steps = o.steps, disp_freq = 10, test_freq = 20, test_steps = 2,
    checkpoint_freq = 10, checkpoint_path = o.path, resume = o.resume or false,
    updater = upd,
    neuralnet = { layer = {
      { name = "data", type = "kIDXData", batchsize = 16, images = img, labels = lab, shuffle = true, exclude = "kTest" },
      { name = "data", type = "kIDXData", batchsize = 20, images = img, labels = lab, exclude = "kTrain" },
      { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
      { name = "label", type = "kLabel", srclayer = "data" },
      { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 16 },
      { name = "relu", type = "kReLU", srclayer = "fc1" },
      { name = "drop", type = "kDropout", srclayer = "relu", dropout_ratio = 0.2 },
      { name = "fc2", type = "kInnerProduct", srclayer = "drop", num_output = 4 },
      { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc2", "label" } },
      { name = "fc1t", type = "kInnerProduct", srclayer = "image", num_output = 16,
        param = { { name = "fc1t_weight", share_from = "fc1_weight" } } },
      { name = "fc2t", type = "kInnerProduct", srclayer = "fc1t", num_output = 4 },
      { name = "losst", type = "kSoftmaxLoss", srclayer = { "fc2t", "label" } },
    } },
  }
end

local function has(s, ...)
  for _, w in ipairs({ ... }) do
    if not (s and s:find(w, 1, true)) then return false end
  end
  return true
end

local cases = {
  { { type = "kAdam", weight_decay = 1e-4 }, { "m", "v" } },
  { { type = "kAdaDelta", weight_decay = 1e-4, delta = 1e-6 }, { "history", "update" }, { type = "kFixed", base_lr = 1 } },
  { { type = "kAdamMax", beta1 = 0.8, clip_low = -1, clip_high = 1 }, { "m", "u" } },
  { { type = "kAdaGrad" }, { "history" }, { type = "kStep", base_lr = 0.05, gamma = 0.5, change_freq = 15 } },
  { { type = "kRMSProp", rho = 0.9 }, { "history" },
    { type = "kFixedStep", step = { 0, 20, 30 }, step_lr = { 0.01, 0.005, 0.002 } } },
}
for _, c in ipairs(cases) do
  local upd, slots, lr = c[1], c[2], c[3]
  local function conf()
    local t = {}
    for k, v in pairs(upd) do t[k] = v end
    return t
  end
  local name = upd.type
  local whole, part = dir .. "/" .. name .. "-whole", dir .. "/" .. name .. "-part"
  local full = singa.train(job(conf(), { steps = 40, path = whole, lr = lr }))
  tap.ok(full.train.loss and full.train.loss < 1.2,
         string.format("%s: learns (train loss %.3f after 40 steps, chance is 1.386)", name, full.train.loss or -1))
  local want = { "param/fc1_weight" }
  for _, s in ipairs(slots) do want[#want + 1] = "updater/fc1_weight/" .. s end
  local bytes = read(ckpt(whole, 40))
  tap.ok(has(bytes, table.unpack(want)) and not has(bytes, "updater/fc1t_weight/"),
         name .. ": the checkpoint holds slots " .. table.concat(slots, ", ") .. " (none for the sharer)")
  singa.train(job(conf(), { steps = 25, path = part, lr = lr }))
  local resumed = singa.train(job(conf(), { steps = 40, path = part, lr = lr, resume = true }))
  tap.is(string.format("%.17g", resumed.train.loss or -1), string.format("%.17g", full.train.loss or -2),
         name .. ": resumed from step 25, the final train loss equals the uninterrupted run's to all digits")
  tap.ok(read(ckpt(part, 40)) == bytes, name .. ": and the final checkpoint is byte-identical")
end

-- A checkpoint of one updater does not resume another.
tap.raises("tensor 'updater/fc1_weight/history' is missing", "an kAdam checkpoint is refused by a kAdaDelta job",
           singa.train, job({ type = "kAdaDelta" }, { steps = 50, path = dir .. "/kAdam-whole", resume = true }))

if tap.failed == 0 then os.execute("rm -rf '" .. dir .. "'") end
tap.done()

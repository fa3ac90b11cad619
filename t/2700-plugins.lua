-- The plugin layers of plugins/ (kSwish, kPReLU), which singa-tui loads from plugins/.libs/ in
-- the build tree: listed by singa.plugins(), validated like built-in types, gradient-checked
-- alone and inside a net, right values, and trained in jobs (kPReLU's slopes as params).
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"

local TOL = 2e-2
local dir = td.tmpdir("2700-plugins")

-- singa.plugins(): both, in name order (the folder is scanned sorted), with their types.
local ps = singa.plugins()
local names = {}
for i, p in ipairs(ps) do names[i] = p.name end
tap.is(table.concat(names, " "), "prelu swish", "singa.plugins() lists the plugins of plugins/ in name order")
local by = {}
for _, p in ipairs(ps) do by[p.name] = p end
tap.ok(by.swish and by.swish.types[1] == "kSwish" and #by.swish.types == 1, "swish registers kSwish")
tap.ok(by.prelu and by.prelu.types[1] == "kPReLU" and #by.prelu.types == 1, "prelu registers kPReLU")
tap.ok(by.swish and by.swish.version == "1.0.0" and by.swish.abi == singa.plugin_abi and
       by.swish.path:find("plugins/.libs/swish.so", 1, true) ~= nil and by.swish.description ~= "",
       "a plugin entry has its version, ABI, path and description", by.swish and by.swish.path)
tap.is(singa.plugin_abi, "1.4", "singa.plugin_abi")
local types = {}
for _, t in ipairs(singa.layer_types()) do types[t] = true end
tap.ok(types.kSwish and types.kPReLU and types.kReLU, "singa.layer_types() has the plugin types beside the built-in ones")
tap.is(singa.load_plugin(by.swish.path).name, "swish", "singa.load_plugin of a loaded file gives that plugin")
tap.is(#singa.plugins(), 2, "and loads nothing again")

-- Gradient checks of each layer alone.
local cases = {
  { "kSwish (SiLU)", { type = "kSwish" }, { { shape = { 4, 6 } } } },
  { "kSwish beta 1.5", { type = "kSwish", beta = 1.5 }, { { shape = { 3, 5 } } } },
  { "kSwish beta -0.7", { type = "kSwish", beta = -0.7 }, { { shape = { 3, 5 } } } },
  { "kSwish on 4-d input, 2 readers", { type = "kSwish", beta = 2 }, { { shape = { 2, 3, 2, 2 } } }, 2 },
  { "kPReLU on a matrix (slope per feature)", { type = "kPReLU" }, { { shape = { 5, 4 } } } },
  { "kPReLU on 4-d input (slope per channel)", { type = "kPReLU",
      param = { { init = { type = "kUniform", low = 0.05, high = 0.6 } } } }, { { shape = { 2, 3, 2, 2 } } } },
  { "kPReLU channel_shared", { type = "kPReLU", channel_shared = true }, { { shape = { 3, 2, 1, 3 } } } },
  { "kPReLU on a vector", { type = "kPReLU" }, { { shape = { 7 } } } },
}
for _, c in ipairs(cases) do
  local layer = c[2]
  layer.name = "l"
  local err, worst, checked = singa.gradcheck(layer, c[3], 7, c[4])
  tap.ok(err < TOL and checked > 0, string.format("gradient check %s: max relative error %.2e over %d elements", c[1], err, checked), worst)
end

-- A net where both plugin layers feed two readers each, so their sources' gradients add up.
local images, labels = td.idx(dir, 24, 3, 4, 4)
local function net(extra)
  local layers = {
    { name = "data", type = "kIDXData", batchsize = 6, images = images, labels = labels },
    { name = "img", type = "kMnist", srclayer = "data", norm_a = 255, norm_b = 0.5 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "fc1", type = "kInnerProduct", srclayer = "img", num_output = 6 },
    { name = "swish_a", type = "kSwish", srclayer = "fc1" },
    { name = "swish_b", type = "kSwish", srclayer = "fc1", beta = 0.5 },
    { name = "cat", type = "kConcate", srclayer = { "swish_a", "swish_b" }, concate_dim = 1 },
    { name = "prelu", type = "kPReLU", srclayer = "cat" },
    { name = "fc2", type = "kInnerProduct", srclayer = "prelu", num_output = 3 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc2", "label" } },
  }
  for _, l in ipairs(extra or {}) do layers[#layers + 1] = l end
  return { layer = layers }
end
-- The whole-net check: three readers of one blob, so two of them add to a gradient another one
-- wrote (backward runs last reader first).  kPReLU's inputs stay 0.6 or more away from its kink
-- (small weights, biases near +1 or -1), where a finite difference would be wrong.
local function bias(sign) return { {}, { init = { type = "kUniform", low = 0.75, high = 1.25, value = sign } } } end
local small = { type = "kUniform", low = -0.02, high = 0.02 }
local check = { layer = {
  { name = "data", type = "kIDXData", batchsize = 6, images = images, labels = labels },
  { name = "img", type = "kMnist", srclayer = "data", norm_a = 255, norm_b = 0.5 },
  { name = "label", type = "kLabel", srclayer = "data" },
  { name = "pos", type = "kInnerProduct", srclayer = "img", num_output = 4, param = bias(1) },
  { name = "neg", type = "kInnerProduct", srclayer = "img", num_output = 4, param = bias(-1) },
  { name = "cat", type = "kConcate", srclayer = { "pos", "neg" }, concate_dim = 1 },
  { name = "swish_a", type = "kSwish", srclayer = "cat" },
  { name = "prelu", type = "kPReLU", srclayer = "cat" },
  { name = "swish_b", type = "kSwish", srclayer = "cat", beta = 0.5 },
  { name = "all", type = "kConcate", srclayer = { "swish_a", "prelu", "swish_b" }, concate_dim = 1 },
  { name = "fc", type = "kInnerProduct", srclayer = "all", num_output = 3 },
  { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc", "label" } },
} }
check.layer[4].param[1].init = small
check.layer[5].param[1].init = small
local err, worst, checked = singa.gradcheck_net(check)
tap.ok(err < TOL and checked > 100, string.format("whole-net gradient check, kSwish and kPReLU adding to a shared gradient: max relative error %.2e over %d elements", err, checked), worst)

-- Values on known inputs.
local function close(got, want, tol)
  if #got ~= #want then return false end
  for i = 1, #want do if math.abs(got[i] - want[i]) > tol then return false end end
  return true
end
local out = singa.forward({ name = "s", type = "kSwish" }, { { shape = { 1, 3 }, data = { -1, 0, 2 } } })[1]
tap.ok(close(out, { -1 / (1 + math.exp(1)), 0, 2 / (1 + math.exp(-2)) }, 1e-6), "kSwish values: x * sigmoid(x)",
       table.concat(out, " "))
out = singa.forward({ name = "s", type = "kSwish", beta = 3 }, { { shape = { 2 }, data = { -0.5, 0.5 } } })[1]
tap.ok(close(out, { -0.5 / (1 + math.exp(1.5)), 0.5 / (1 + math.exp(-1.5)) }, 1e-6), "kSwish values with beta 3",
       table.concat(out, " "))
out = singa.forward({ name = "p", type = "kPReLU" }, { { shape = { 2, 2 }, data = { -2, 3, 0, -0.4 } } })[1]
tap.ok(close(out, { -0.5, 3, 0, -0.1 }, 1e-6), "kPReLU starts with slope 0.25", table.concat(out, " "))
out = singa.forward({ name = "p", type = "kPReLU", param = { { init = { type = "kConstant", value = 0 } } } },
                    { { shape = { 1, 2 }, data = { -2, 3 } } })[1]
tap.ok(close(out, { 0, 3 }, 0), "kPReLU with an init of 0 is a ReLU (the init wins over 0.25)", table.concat(out, " "))
tap.ok(#out == 2 and table.concat(out.shape, "x") == "1x2", "kPReLU keeps its input's shape")

-- Validation works on plugin types as on built-in ones.
local function job(layers, extra)
  local j = { name = "plugins", seed = 1, train_steps = 60, disp_freq = 20, test_steps = 0,
              updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.2 } },
              neuralnet = layers }
  for k, v in pairs(extra or {}) do j[k] = v end
  return j
end
local typo = net()
typo.layer[5].betta = 2
tap.raises({ "layer 'swish_a' (kSwish)", "unknown field 'betta'", "did you mean 'beta'" },
           "an unknown field of a plugin layer, with a did-you-mean", singa.train, job(typo))
local wrong = net()
wrong.layer[8].channel_shared = "yes"
tap.raises({ "layer 'prelu' (kPReLU)", "channel_shared" }, "a plugin field of the wrong type", singa.train, job(wrong))
local misspelt = net()
misspelt.layer[5].type = "kSwich"
tap.raises("did you mean 'kSwish'", "a misspelt plugin type name gets a did-you-mean", singa.train, job(misspelt))

-- Training: the loss falls, and kPReLU's slopes are trained and checkpointed as params.
local function ckpt_param(file, name) return assert(td.read_ckpt(file), file)["param/" .. name] end
local ck = dir .. "/ckpt"
local r = singa.train(job(net(), { checkpoint_path = ck, checkpoint_freq = 30 }))
local first = r.train.loss
tap.ok(r.steps == 60 and r.train.loss < 0.8, string.format("a job with kSwish and kPReLU trains (last loss %.3f)", r.train.loss))
local s60 = ckpt_param(td.ckpt(ck, 60), "prelu_slope")
tap.ok(s60 and #s60 == 12, "the checkpoint holds kPReLU's 12 slopes (one per feature) as param prelu_slope")
local moved = 0
for i = 1, s60 and #s60 or 0 do if math.abs(s60[i] - 0.25) > 1e-4 then moved = moved + 1 end end
tap.ok(s60 and moved >= 6, string.format("after 60 steps the slopes were trained (%d of 12 moved)", moved),
       s60 and table.concat(s60, " "))
local resumed = singa.train(job(net(), { checkpoint_path = ck, checkpoint_freq = 30, train_steps = 80, resume = true }))
tap.ok(resumed.steps == 80, "the job resumes from its checkpoint with the plugin layers", first)
local shared = net()
shared.layer[8].channel_shared = true
local rs = singa.train(job(shared, { checkpoint_path = dir .. "/ckpt-shared", train_steps = 20 }))
local one = ckpt_param(td.ckpt(dir .. "/ckpt-shared", 20), "prelu_slope")
tap.ok(rs.steps == 20 and one and #one == 1 and one[1] ~= 0.25, "channel_shared: one slope, trained",
       one and table.concat(one, " "))

tap.done()

-- Plugin layers under every TrainOneBatch algorithm, not only kBP (t/2700): kBPTT, with kPReLU
-- and kSwish unrolled inside a recurrent net, and kCD, with a plugin layer turning the data into
-- an RBM's visible units.
--
-- kBPTT: the unrolled copies of kPReLU share one slope param (the updater and the checkpoint see
-- one, not one per copy); the whole unrolled net passes singa.gradcheck_net; and, through the
-- real training path, the gradient the updater is handed for the slope agrees with a finite
-- difference of the job's own loss, made by perturbing the slope between two steps from a kLua
-- updater.  The loss falls and the slopes are trained.
--
-- kCD: one CD-1 step through kSwish is the hand-computed update for the swish of the data (and
-- for none of the updates from the raw data); kPReLU under kCD gives bit for bit the run of the
-- built-in kReLU with the same slope (and, with slope 1, of the net without it); the
-- reconstruction error falls while kPReLU's slope, a fixed feature under kCD, stays as it was.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"

local dir = td.tmpdir("2710-plugins-algorithms")

-- { [entry name] = { values } } of a checkpoint's f32 entries, {} when there is none.
local function read_ckpt(path) return td.read_ckpt(path) or {} end

local function keys(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks)
  return ks
end

-- ==== kBPTT ====
-- Images of T rows x 6 pixels, fed one row per time step: row t goes through kPReLU copy t (a
-- slope per pixel column, shared by the copies), into GRU copy t, then kSwish copy t; the
-- classifier reads the last copy.  norm_b = 0.5 centres the pixels on 0, so every column has
-- inputs on kPReLU's negative side, at least 0.5/255 from its kink.
local T = 4
local images, labels = td.idx(dir, 24, 3, T, 6)
local function rnn_net(batch)
  return { layer = {
    { name = "data", type = "kIDXData", batchsize = batch or 24, shuffle = batch ~= nil, images = images, labels = labels },
    { name = "img", type = "kMnist", srclayer = "data", norm_a = 255, norm_b = 0.5 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "rows", type = "kSlice", srclayer = "img", slice_dim = 1, num_slices = T },
    { name = "prelu", type = "kPReLU", srclayer = "rows", unroll_len = T },
    { name = "gru", type = "kGRU", srclayer = "prelu", dim_hidden = 5, unroll_len = T },
    { name = "swish", type = "kSwish", srclayer = "gru", unroll_len = T, beta = 1.5 },
    { name = "ip", type = "kInnerProduct", srclayer = "swish", num_output = 3 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "ip", "label" } },
  } }
end

-- The engine's own whole-net check: every param (kPReLU's slopes summed over the 4 copies, the
-- GRU's, the classifier's) against central differences of the mean loss.
do
  local err, worst, checked = singa.gradcheck_net(rnn_net())
  tap.ok(err < 2e-2 and checked > 150,
         string.format("gradcheck_net: kPReLU and kSwish unrolled %d times around a kGRU: max relative error %.2e over %d elements",
                       T, err, checked), worst)
end

-- A kLua updater that changes nothing but records what it is handed at step 0 and, when told,
-- moves one slope by delta: the next step's loss is then the loss at the moved slope (the batch
-- is the whole set, unshuffled, so every step sees the same one).
local CK = dir .. "/bptt-ckpt"
local seen, slope0, grad0
local function probe_job(steps, k, delta)
  return { name = "bptt-probe", seed = 3, train_steps = steps, disp_freq = 1, checkpoint_path = CK, overwrite = true,
    updater = { type = "kLua", learning_rate = { type = "kFixed", base_lr = 0.1 },
      update = function(step, param, grad, _, _, name)
        seen[name] = (seen[name] or 0) + 1
        if name == "prelu_slope" and step == 0 then
          slope0, grad0 = param:totable(), grad:totable()
          if k then param[k] = param[k] + delta end
        end
      end },
    neuralnet = rnn_net() }
end

seen = {}
local ok, r = pcall(singa.train, probe_job(1))
tap.ok(ok and r.steps == 1, "a kBPTT job with unrolled plugin layers trains a step", not ok and r or nil)
local names = keys(seen)
local copies = {}
for _, n in ipairs(names) do if n:find("#", 1, true) then copies[#copies + 1] = n end end
tap.ok(seen.prelu_slope == 1 and #copies == 0 and #names == 12,
       "the updater is handed kPReLU's slope once, as 'prelu_slope', and no param of an unrolled copy (12 params: 1 + 9 GRU + 2)",
       table.concat(names, " "))
local ck = read_ckpt(td.ckpt(CK, 1))
local ck_copies = {}
for _, n in ipairs(keys(ck)) do if n:find("#", 1, true) then ck_copies[#ck_copies + 1] = n end end
tap.ok(ck["param/prelu_slope"] and #ck["param/prelu_slope"] == 6 and #ck_copies == 0,
       "the checkpoint holds one param/prelu_slope (6 slopes) and no entry for the copies",
       table.concat(keys(ck), " "))
tap.ok(slope0 and #slope0 == 6 and grad0 and #grad0 == 6, "the slope and its gradient reach the updater (6 values)")

-- The finite-difference check.  The copies share the slope, so the unrolled net's gradient is
-- the sum over the copies' gradients; the updater is handed their average
-- (docs/02-jobs-and-layers.md, "Recurrent nets: unrolling"), so T times it must equal dL/da.
if slope0 and grad0 and #grad0 == 6 then
  local DELTA, worst, where, biggest = 1e-2, 0, "", 0
  local fd = {}
  for k = 1, 6 do
    local okp, rp = pcall(singa.train, probe_job(2, k, DELTA))
    local okm, rm = pcall(singa.train, probe_job(2, k, -DELTA))
    fd[k] = okp and okm and (rp.train.loss - rm.train.loss) / (2 * DELTA) or 0 / 0
    local an = T * grad0[k]
    local rel = math.abs(fd[k] - an) / math.max(math.abs(fd[k]), math.abs(an), 1e-4)
    if not (rel <= worst) then
      worst, where = rel, string.format("slope %d: %d x updater's gradient %.6g, finite difference %.6g", k, T, an, fd[k])
    end
    if math.abs(fd[k]) > biggest then biggest = math.abs(fd[k]) end
  end
  tap.ok(worst < 2e-2 and biggest > 1e-3,
         string.format("kPReLU's slope through %d unrolled copies: %d x the updater's gradient equals the finite difference of the job's loss (max relative error %.2e, largest |dL/da| %.2e)",
                       T, T, worst, biggest), where)
  -- The check could fail: one copy's share (or the average read as the sum) does not match.
  local off = 0
  for k = 1, 6 do off = math.max(off, math.abs(fd[k] - grad0[k]) / math.abs(fd[k])) end
  tap.ok(off > 0.5, string.format("(and the gradient of a single copy's share is off by %.0f%%)", 100 * off))
else
  tap.ok(false, "finite-difference check of the slope: no gradient recorded")
  tap.ok(false, "finite-difference check of the slope: no gradient recorded")
end

-- Training: the loss falls and the shared slopes are trained.
do
  local function job(steps)
    return { name = "bptt", seed = 4, train_steps = steps, disp_freq = 20, checkpoint_path = dir .. "/bptt-train", overwrite = true,
             train_one_batch = { alg = "kBPTT" },
             updater = { type = "kAdam", learning_rate = { type = "kFixed", base_lr = 0.02 } },
             neuralnet = rnn_net(6) }
  end
  local ok1, r1 = pcall(singa.train, job(1))
  local okn, rn = pcall(singa.train, job(200))
  local first, last = ok1 and r1.train.loss or -1, okn and rn.train.loss or 1 / 0
  tap.ok(ok1 and okn and last < 0.5 * first,
         string.format("kBPTT, 200 steps: the loss falls from %.3f to %.3f (last 20 steps)", first, last),
         not ok1 and r1 or not okn and rn or nil)
  local s = read_ckpt(td.ckpt(dir .. "/bptt-train", 200))["param/prelu_slope"]
  local moved = 0
  for i = 1, s and #s or 0 do if math.abs(s[i] - 0.25) > 1e-3 then moved = moved + 1 end end
  tap.ok(s and #s == 6 and moved >= 4, string.format("the shared slopes were trained (%d of 6 moved)", moved),
         s and table.concat(s, " "))
end

-- ==== kCD ====
-- A tiny RBM (3 visible units, 2 hidden, batch 2) reading kSwish(beta 2) of the pixels.  Two
-- one-step runs with one seed: lr = 0 gives the initial params in its checkpoint, lr = 1 the
-- updated ones; the hidden samples are the only random part, so the update must be the Lua
-- computation for one of the 16 possible samplings (as t/2300-rbm.lua checks the RBM alone).
local V, H, B = 3, 2, 2
local pixels = { { 255, 0, 128 }, { 51, 204, 255 } }
local tiny = dir .. "/tiny-idx3-ubyte"
do
  local px = {}
  for _, row in ipairs(pixels) do for _, p in ipairs(row) do px[#px + 1] = string.char(p) end end
  td.write(tiny, string.pack(">I4I4I4I4", 0x803, B, 1, V) .. table.concat(px))
end
local f32 = td.f32
local function sigm(x) return 1 / (1 + math.exp(-x)) end
local BETA = 2

local function tiny_job(lr, path)
  return { name = "cd-swish", seed = 5, train_steps = 1, checkpoint_path = path, overwrite = true,
    train_one_batch = { alg = "kCD", cd_k = 1 },
    updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = lr } },
    neuralnet = { layer = {
      { name = "data", type = "kIDXData", batchsize = B, images = tiny },
      { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
      { name = "act", type = "kSwish", srclayer = "image", beta = BETA },
      { name = "vis", type = "kRBMVis", srclayer = { "act", "hid" },
        param = { { name = "W", init = { type = "kUniform", low = -1, high = 1 } },
                  { name = "bv", init = { type = "kUniform", low = -0.5, high = 0.5 } } } },
      { name = "hid", type = "kRBMHid", srclayer = "vis", hdim = H,
        param = { { name = "bh", init = { type = "kUniform", low = -0.5, high = 0.5 } } } },
    } } }
end

-- The CD-1 update (lr 1) and first-phase reconstruction error from data v0 and samples s.
local function cd1(v0, W, bv, bh, s)
  local function hid(v)
    local h = {}
    for b = 1, B do
      h[b] = {}
      for j = 1, H do
        local a = bh[j]
        for i = 1, V do a = a + v[b][i] * W[(j - 1) * V + i] end
        h[b][j] = sigm(a)
      end
    end
    return h
  end
  local h0, v1 = hid(v0), {}
  for b = 1, B do
    v1[b] = {}
    for i = 1, V do
      local a = bv[i]
      for j = 1, H do a = a + s[b][j] * W[(j - 1) * V + i] end
      v1[b][i] = sigm(a)
    end
  end
  local h1 = hid(v1)
  local err = 0
  for b = 1, B do for i = 1, V do err = err + (v0[b][i] - v1[b][i]) ^ 2 end end
  local nW, nbv, nbh = {}, {}, {}
  for j = 1, H do
    for i = 1, V do
      local g = 0
      for b = 1, B do g = g + h1[b][j] * v1[b][i] - h0[b][j] * v0[b][i] end
      nW[(j - 1) * V + i] = W[(j - 1) * V + i] - g / B
    end
  end
  for i = 1, V do
    local g = 0
    for b = 1, B do g = g + v1[b][i] - v0[b][i] end
    nbv[i] = bv[i] - g / B
  end
  for j = 1, H do
    local g = 0
    for b = 1, B do g = g + h1[b][j] - h0[b][j] end
    nbh[j] = bh[j] - g / B
  end
  return { W = nW, bv = nbv, bh = nbh }, err / B
end

-- How many of the 16 samplings give the engine's update and loss from data v0.
local function matching(v0, p0, p1, loss)
  local n = 0
  for code = 0, (1 << (B * H)) - 1 do
    local s, bit = {}, 0
    for b = 1, B do
      s[b] = {}
      for j = 1, H do
        s[b][j] = (code >> bit) & 1
        bit = bit + 1
      end
    end
    local want, err = cd1(v0, p0.W, p0.bv, p0.bh, s)
    local d = math.abs(err - loss)
    for _, name in ipairs({ "W", "bv", "bh" }) do
      for i = 1, #want[name] do d = math.max(d, math.abs(want[name][i] - p1[name][i])) end
    end
    if d < 2e-6 then n = n + 1 end
  end
  return n
end

do
  local ok0, r0 = pcall(singa.train, tiny_job(0, dir .. "/cd0"))
  local ok1, r1 = pcall(singa.train, tiny_job(1, dir .. "/cd1"))
  local c0, c1 = read_ckpt(td.ckpt(dir .. "/cd0", 1)), read_ckpt(td.ckpt(dir .. "/cd1", 1))
  local p0 = { W = c0["param/W"], bv = c0["param/bv"], bh = c0["param/bh"] }
  local p1 = { W = c1["param/W"], bv = c1["param/bv"], bh = c1["param/bh"] }
  if not (ok0 and ok1 and p0.W and p1.W and p0.bh and p1.bh) then
    tap.ok(false, "kCD with kSwish before the RBM: one step runs", not ok0 and r0 or not ok1 and r1 or "no checkpoint")
    tap.ok(false, "kCD with kSwish: the update from the raw data")
  else
    local raw, swished = {}, {}
    for b = 1, B do
      raw[b], swished[b] = {}, {}
      for i = 1, V do
        local x = f32(pixels[b][i] / 255)
        raw[b][i], swished[b][i] = x, x * sigm(BETA * x)
      end
    end
    local n = matching(swished, p0, p1, r1.train.loss)
    tap.ok(n >= 1 and r0.train.loss == r1.train.loss,
           string.format("kCD, one CD-1 step with kSwish before the RBM: the update and loss %.5f are the Lua computation from swish(data) for %d of 16 samplings",
                         r1.train.loss, n))
    tap.is(matching(raw, p0, p1, r1.train.loss), 0, "and for none from the raw data: the RBM learnt from kSwish's output")
  end
end

-- Bands of 8 x 8 pixels centred on 0 (norm_b = 0.5), an RBM of 16 hidden units reading `act`.
local bands = td.idx(dir .. "/bands", 400, 4, 8, 8, 777)
local function bands_job(act, steps, lr, path)
  local layers = {
    { name = "data", type = "kIDXData", batchsize = 20, shuffle = true, images = bands },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255, norm_b = 0.5 },
  }
  local src = "image"
  if act then
    act.name, act.srclayer, src = "act", "image", "act"
    layers[#layers + 1] = act
  end
  layers[#layers + 1] = { name = "vis", type = "kRBMVis", srclayer = { src, "hid" },
                          param = { { name = "W", init = { type = "kGaussian", std = 0.05 } }, { name = "bv" } } }
  layers[#layers + 1] = { name = "hid", type = "kRBMHid", srclayer = "vis", hdim = 16, param = { { name = "bh" } } }
  return { name = "cd-bands", seed = 2, train_steps = steps, test_steps = 20, disp_freq = 10, checkpoint_path = path, overwrite = true,
           train_one_batch = { alg = "kCD" },
           updater = { type = "kSGD", momentum = 0.5, learning_rate = { type = "kFixed", base_lr = lr } },
           neuralnet = { layer = layers } }
end
local function slope(v) return { { init = { type = "kConstant", value = v } } } end
local function losses(act)
  local ok, r = pcall(singa.train, bands_job(act, 30, 0.1))
  if not ok then return r end
  return string.format("train %.17g test %.17g", r.train.loss, r.test.loss)
end

-- The plugin layer is a layer like the built-in ones under kCD: 30 steps with kPReLU of slope a
-- are those of kReLU with negative_slope a, bit for bit; slope 1 is the net without the layer.
for _, a in ipairs({ 0, 0.3 }) do
  local plug, built = losses{ type = "kPReLU", param = slope(a) }, losses{ type = "kReLU", negative_slope = a }
  tap.ok(plug == built and plug:find("^train"), string.format("kCD, 30 steps: kPReLU with slope %g gives kReLU's (negative_slope %g) losses bit for bit", a, a),
         plug .. " vs " .. built)
end
do
  local plug, none = losses{ type = "kPReLU", param = slope(1) }, losses()
  tap.ok(plug == none and plug:find("^train"), "kCD, 30 steps: kPReLU with slope 1 gives the losses of the net without it",
         plug .. " vs " .. none)
  local half = losses{ type = "kPReLU", param = slope(0.5) }
  tap.ok(half ~= none and half:find("^train"), "and with slope 0.5 other ones: its forward pass ran", half)
end

-- Training: the reconstruction error falls; kPReLU's slope, which kCD does not train (only the
-- RBM layers' params), is checkpointed as it started.
do
  local path = dir .. "/cd-train"
  local ok0, before = pcall(singa.train, bands_job({ type = "kPReLU" }, 1, 0, path))
  local ok, after = pcall(singa.train, bands_job({ type = "kPReLU" }, 300, 0.1, path))
  local b, a = ok0 and before.test.loss or -1, ok and after.test.loss or 1 / 0
  tap.ok(ok0 and ok and a < 0.5 * b, string.format("kCD with kPReLU before the RBM, 300 steps: reconstruction error %.3f -> %.3f", b, a),
         not ok0 and before or not ok and after or nil)
  local c = read_ckpt(td.ckpt(path, 300))
  local s, W = c["param/act_slope"], c["param/W"]
  tap.ok(s and #s == 1 and s[1] == f32(0.25) and W and #W == 16 * 64 and c["updater/act_slope/history"] == nil,
         "its checkpoint holds kPReLU's slope, still 0.25 (a fixed feature, no updater state), beside the trained RBM",
         table.concat(keys(c), " "))
end

-- Partitioning: plugin types declare what they allow.  Under a net-wide partition_dim = 1,
-- kSwish (element-wise, FEATURE_PARTS) is cut on the features and reads a feature-partitioned
-- source part directly (one-to-one); kPReLU (FEATURE_WISE only: its slopes are not split) falls
-- back to the batch, through kSlice -> kConcate.
do
  local csv = dir .. "/part.csv"
  local f = assert(io.open(csv, "w"))
  for i = 1, 8 do f:write(string.format("%d,0.%d,0.5,0.25,0.75\n", i % 2, i)) end
  f:close()
  local g = singa.graph{ cluster = { nworkers_per_group = 2 }, neuralnet = { partition_dim = 1, layer = {
    { name = "data", type = "kCSVInput", path = csv, batchsize = 4 },
    { name = "fc", type = "kInnerProduct", srclayer = "data", num_output = 4 },
    { name = "sw", type = "kSwish", srclayer = "fc" },
    { name = "pr", type = "kPReLU", srclayer = "sw" } } } }
  local dims, by = {}, {}
  for _, l in ipairs(g.layers) do dims[l.name] = l.partition_dim end
  for _, n in ipairs(g.nodes) do by[n.name] = n end
  tap.ok(dims.sw == 1 and dims.pr == 0, "partition_dim = 1: kSwish on the features, kPReLU falls back to the batch",
         string.format("kSwish %s, kPReLU %s", dims.sw, dims.pr))
  tap.ok(by["sw@1"].srclayer[1] == "fc@1" and by["pr@0"].srclayer[1] == "pr@0/concate" and
         by["pr@0/concate"].dim == 1, "kSwish reads its own features of fc; kPReLU joins slabs of kSwish's parts")
  -- ... and the partitioned net computes the same gradients, the plugins' parts included.
  local net = { partition_dim = 1, layer = {
    { name = "data", type = "kCSVInput", path = csv, batchsize = 4 },
    { name = "fc", type = "kInnerProduct", srclayer = "data", num_output = 4 },
    { name = "sw", type = "kSwish", srclayer = "fc" },
    { name = "pr", type = "kPReLU", srclayer = "sw" },
    { name = "out", type = "kInnerProduct", srclayer = "pr", num_output = 2 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "out", "label" } } } }
  local whole = singa.gradcheck_net(net)
  local ok, parts = pcall(singa.gradcheck_net, net, 7, 2)
  tap.ok(ok and parts < 1e-2 and math.abs(parts - whole) < 1e-3,
         "gradient check of the net with plugin layers partitioned over 2 workers", tostring(parts))
end

if tap.failed == 0 then os.execute("rm -rf '" .. dir .. "'") end
tap.done()

-- RBMs: kRBMVis / kRBMHid trained by contrastive divergence (kCD), and checkpoint_path lists.
-- The CD update is checked against a computation in Lua: the hidden samples are the only random
-- part, so the test computes the update for every possible sample and requires the engine's to
-- be exactly one of them, then checks over many seeds that units fire as often as their
-- probabilities say.  Params are set by writing a checkpoint here and loading it through
-- checkpoint_path, and read back from the job's final checkpoint.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"
local read, write = td.read, td.write

local dir = td.tmpdir("2300-rbm")

-- ---- checkpoint files (format in docs/05-checkpoints.md) ----

local crc_table = {}
for i = 0, 255 do
  local c = i
  for _ = 1, 8 do c = (c & 1) ~= 0 and (0xEDB88320 ~ (c >> 1)) or (c >> 1) end
  crc_table[i] = c
end
local function crc32(s)
  local c = 0xFFFFFFFF
  for i = 1, #s do c = crc_table[(c ~ s:byte(i)) & 0xFF] ~ (c >> 8) end
  return c ~ 0xFFFFFFFF
end

-- params: list of { name, dims = {...}, values = {...} } (f32 entries "param/<name>")
local function write_ckpt(path, params, step)
  local body = { string.pack("<c8I4I4I8", "SINGACKP", 1, #params, step or 0) }
  for _, p in ipairs(params) do
    local name = "param/" .. p.name
    local payload = {}
    for i, v in ipairs(p.values) do payload[i] = string.pack("<f", v) end
    payload = table.concat(payload)
    local dims = {}
    for i, d in ipairs(p.dims) do dims[i] = string.pack("<I4", d) end
    body[#body + 1] = string.pack("<s2BB", name, 0, #p.dims) .. table.concat(dims) ..
                      string.pack("<I8I4", #payload, crc32(payload)) .. payload
  end
  body = table.concat(body)
  write(path, body .. "SINGAEND" .. string.pack("<I4", crc32(body)))
end

-- Returns { [name] = { values } } of the f32 entries.
local function read_ckpt(path) return assert(td.read_ckpt(path), "no checkpoint " .. path) end

local f32 = td.f32

-- ---- a tiny RBM: 3 visible units, 2 hidden, batch 2 ----

local V, H, B = 3, 2, 2
local pixels = { { 255, 0, 128 }, { 51, 204, 255 } }
local img = dir .. "/tiny-idx3-ubyte"
do
  local px = {}
  for _, row in ipairs(pixels) do for _, p in ipairs(row) do px[#px + 1] = string.char(p) end end
  write(img, string.pack(">I4I4I4I4", 0x803, B, 1, V) .. table.concat(px))
end
local v0 = {}
for b = 1, B do
  v0[b] = {}
  for i = 1, V do v0[b][i] = f32(pixels[b][i] / 255) end
end
local W0 = { { 0.5, -0.3, 0.8 }, { -0.6, 0.4, 0.2 } } -- H x V
local bv0, bh0 = { 0.1, -0.2, 0.05 }, { -0.1, 0.2 }
for j = 1, H do for i = 1, V do W0[j][i] = f32(W0[j][i]) end end
for i = 1, V do bv0[i] = f32(bv0[i]) end
for j = 1, H do bh0[j] = f32(bh0[j]) end

local init = dir .. "/init.ckpt"
local function flat(m)
  local t = {}
  for _, row in ipairs(m) do for _, x in ipairs(row) do t[#t + 1] = x end end
  return t
end
write_ckpt(init, { { name = "W", dims = { H, V }, values = flat(W0) }, { name = "bv", dims = { V }, values = bv0 },
                   { name = "bh", dims = { H }, values = bh0 } })

local function sigm(x) return 1 / (1 + math.exp(-x)) end
local function hid_probs(v, W, bh, gaussian)
  local h = {}
  for b = 1, B do
    h[b] = {}
    for j = 1, H do
      local a = bh[j]
      for i = 1, V do a = a + v[b][i] * W[j][i] end
      h[b][j] = gaussian and a or sigm(a)
    end
  end
  return h
end
local function vis_probs(h, W, bv)
  local v = {}
  for b = 1, B do
    v[b] = {}
    for i = 1, V do
      local a = bv[i]
      for j = 1, H do a = a + h[b][j] * W[j][i] end
      v[b][i] = sigm(a)
    end
  end
  return v
end
local function sqerr(a, c)
  local e = 0
  for b = 1, B do for i = 1, V do e = e + (a[b][i] - c[b][i]) ^ 2 end end
  return e / B
end

local h0 = hid_probs(v0, W0, bh0)

-- The params after one kSGD step (lr, no momentum) for given hidden samples, one B x H table of
-- 0/1 per negative phase; also the reconstruction error of the first negative phase.
local function cd_update(samples, lr)
  local v, h, err = v0, h0, nil
  for k = 1, #samples do
    v = vis_probs(samples[k], W0, bv0)
    if k == 1 then err = sqerr(v0, v) end
    h = hid_probs(v, W0, bh0)
  end
  local W, bv, bh = {}, {}, {}
  for j = 1, H do
    W[j] = {}
    for i = 1, V do
      local g = 0
      for b = 1, B do g = g + h[b][j] * v[b][i] - h0[b][j] * v0[b][i] end
      W[j][i] = W0[j][i] - lr * g / B
    end
  end
  for i = 1, V do
    local g = 0
    for b = 1, B do g = g + v[b][i] - v0[b][i] end
    bv[i] = bv0[i] - lr * g / B
  end
  for j = 1, H do
    local g = 0
    for b = 1, B do g = g + h[b][j] - h0[b][j] end
    bh[j] = bh0[j] - lr * g / B
  end
  return { W = flat(W), bv = bv, bh = bh }, err
end

-- Every assignment of 0/1 to the hidden units of k negative phases.
local function all_samples(k)
  local n, list = B * H * k, {}
  for code = 0, (1 << n) - 1 do
    local s, bit = {}, 0
    for p = 1, k do
      s[p] = {}
      for b = 1, B do
        s[p][b] = {}
        for j = 1, H do
          s[p][b][j] = (code >> bit) & 1
          bit = bit + 1
        end
      end
    end
    list[#list + 1] = s
  end
  return list
end

local function maxdiff(got, want)
  local d = 0
  for _, name in ipairs({ "W", "bv", "bh" }) do
    if not got[name] or #got[name] ~= #want[name] then return math.huge end
    for i = 1, #want[name] do d = math.max(d, math.abs(got[name][i] - want[name][i])) end
  end
  return d
end

local function rbm_job(o)
  return {
    name = "rbm", seed = o.seed or 1, train_steps = o.steps or 1,
    checkpoint_path = o.path or { dir .. "/run", init }, overwrite = true,
    test_steps = o.test_steps,
    train_one_batch = { alg = "kCD", cd_k = o.cd_k or 1 },
    updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = o.lr or 1 } },
    neuralnet = { layer = o.layers or {
      { name = "data", type = "kIDXData", batchsize = B, images = img },
      { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
      { name = "vis", type = "kRBMVis", srclayer = { "image", "hid" }, param = { { name = "W" }, { name = "bv" } } },
      { name = "hid", type = "kRBMHid", srclayer = "vis", hdim = o.hdim or H, gaussian = o.gaussian,
        param = { { name = "bh" } } },
    } },
  }
end

-- Runs one CD step; returns the new params (by name) and the run's result.
local function cd_step(o)
  local ok, r = pcall(singa.train, rbm_job(o))
  if not ok then return nil, r end
  local ck = read_ckpt(string.format("%s/run/step%09d.ckpt", dir, o.steps or 1))
  return { W = ck["param/W"], bv = ck["param/bv"], bh = ck["param/bh"] }, r
end

-- Which sample assignments reproduce the engine's update (and its loss).
local function matches(got, r, k, lr)
  local found = {}
  for _, s in ipairs(all_samples(k)) do
    local want, err = cd_update(s, lr)
    if maxdiff(got, want) < 2e-6 and math.abs((r.train.loss or -1) - err) < 1e-5 then found[#found + 1] = s end
  end
  return found
end

-- A sampling as text, the last phase's instances sorted: the gradient sums over instances, so
-- the update cannot tell the order of the last phase's samples (in CD-1 the loss still does).
local function canonical(s)
  local phases = {}
  for p = 1, #s do
    local rows = {}
    for b = 1, B do rows[b] = table.concat(s[p][b]) end
    if p == #s then table.sort(rows) end
    phases[p] = table.concat(rows, " ")
  end
  return table.concat(phases, " | ")
end

-- CD-1 and CD-2: the update is the hand-computed one for exactly one set of hidden samples.
for _, k in ipairs({ 1, 2 }) do
  local got, r = cd_step{ cd_k = k, seed = 5 }
  if not got then
    tap.ok(false, "CD-" .. k .. " step runs", r)
  else
    local found, keys = matches(got, r, k, 1), {}
    for _, s in ipairs(found) do keys[canonical(s)] = true end
    local n = 0
    for key in pairs(keys) do n = n + 1; tap.diag("samples: " .. key) end
    tap.ok(#found > 0 and n == 1, string.format("CD-%d: the update (and loss %.4f) equals the Lua computation for exactly one of the %d hidden samplings",
                                                k, r.train.loss or -1, 1 << (B * H * k)))
  end
end

-- The samples are Bernoulli(h0): over many seeds each unit fires as often as its probability.
do
  local runs, fired, unmatched = 150, {}, 0
  for b = 1, B do fired[b] = { 0, 0 } end
  for seed = 1, runs do
    local got, r = cd_step{ cd_k = 1, seed = seed }
    local found = got and matches(got, r, 1, 1) or {}
    if #found ~= 1 then
      unmatched = unmatched + 1
    else
      for b = 1, B do for j = 1, H do fired[b][j] = fired[b][j] + found[1][1][b][j] end end
    end
  end
  tap.is(unmatched, 0, string.format("CD-1 with %d seeds: every update is one of the 16 possible ones", runs))
  local worst, where = 0, ""
  for b = 1, B do
    for j = 1, H do
      local p = h0[b][j]
      local z = math.abs(fired[b][j] / runs - p) / math.sqrt(p * (1 - p) / runs)
      if z > worst then worst, where = z, string.format("instance %d unit %d: %d/%d vs p = %.3f", b, j, fired[b][j], runs, p) end
    end
  end
  tap.ok(worst < 4, string.format("hidden units fire with their probabilities (worst %.2f sigma, %s)", worst, where))
end

-- Test nets reconstruct from the hidden probabilities: a deterministic error, binary or Gaussian.
do
  local ok, r = pcall(singa.train, rbm_job{ lr = 0, test_steps = 1 })
  local want = sqerr(v0, vis_probs(h0, W0, bv0))
  tap.near(ok and r.test.loss or -1, want, 1e-5, string.format("test net: reconstruction error %.5f from p(h|v0)", want))
  ok, r = pcall(singa.train, rbm_job{ lr = 0, test_steps = 1, gaussian = true })
  local hg = hid_probs(v0, W0, bh0, true)
  want = sqerr(v0, vis_probs(hg, W0, bv0))
  tap.near(ok and r.test.loss or -1, want, 1e-5, string.format("gaussian hidden units: linear means, error %.5f", want))
  local got = cd_step{ lr = 0 }
  tap.ok(got and maxdiff(got, { W = flat(W0), bv = bv0, bh = bh0 }) == 0,
         "checkpoint_path list: W, bv and bh come from the given checkpoint, bit for bit")
end

-- ---- energy: training lowers the free energy of the data ----
-- 8x8 images of 4 classes (bright bands), 64 visible units, 16 hidden.
do
  local timg = td.idx(dir .. "/bands", 400, 4, 8, 8, 777)
  local layers = {
    { name = "data", type = "kIDXData", batchsize = 20, shuffle = true, images = timg },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "vis", type = "kRBMVis", srclayer = { "image", "hid" },
      param = { { name = "W", init = { type = "kGaussian", std = 0.05 } }, { name = "bv" } } },
    { name = "hid", type = "kRBMHid", srclayer = "vis", hdim = 16, param = { { name = "bh" } } },
  }
  local function run(steps, lr)
    return singa.train{
      name = "bands", seed = 2, train_steps = steps, test_steps = 20, checkpoint_path = dir .. "/bands-ckpt", overwrite = true,
      train_one_batch = { alg = "kCD" },
      updater = { type = "kSGD", momentum = 0.5, learning_rate = { type = "kFixed", base_lr = lr } },
      neuralnet = { layer = layers } }
  end
  local ok0, before = pcall(run, 1, 0)
  local ok, after = pcall(run, 300, 0.1)
  tap.ok(ok0 and ok and after.test.loss < 0.5 * before.test.loss,
         string.format("300 CD-1 steps: reconstruction error %.3f -> %.3f", ok0 and before.test.loss or -1,
                       ok and after.test.loss or -1), not ok and after or not ok0 and before or nil)
  -- Free energy F(v) = -bv.v - sum_j log(1 + exp(bh_j + W_j.v)), of data vs uniform noise.
  local ck = read_ckpt(dir .. "/bands-ckpt/step000000300.ckpt")
  local W, bv, bh = ck["param/W"], ck["param/bv"], ck["param/bh"]
  local function free_energy(v)
    local f = 0
    for i = 1, 64 do f = f - bv[i] * v[i] end
    for j = 1, 16 do
      local a = bh[j]
      for i = 1, 64 do a = a + W[(j - 1) * 64 + i] * v[i] end
      f = f - math.log(1 + math.exp(a))
    end
    return f
  end
  local s = read(timg)
  local fd, fn, seed = 0, 0, 99
  for n = 0, 99 do
    local v, u = {}, {}
    for i = 1, 64 do
      v[i] = s:byte(16 + n * 64 + i) / 255
      seed = (seed * 1103515245 + 12345) % 2147483648
      u[i] = seed / 2147483648
    end
    fd, fn = fd + free_energy(v) / 100, fn + free_energy(u) / 100
  end
  tap.ok(fd < fn - 5, string.format("the trained RBM gives data lower free energy than noise (%.2f vs %.2f)", fd, fn))
end

-- ---- nets: mutual srclayers for RBMs, cycles refused otherwise, misuse reported ----
local base = rbm_job{}
tap.ok(pcall(singa.train, base), "kRBMVis <-> kRBMHid: mutual srclayers are accepted")
local function with_layers(layers, o)
  o = o or {}
  o.layers = layers
  return rbm_job(o)
end
local data = { name = "data", type = "kIDXData", batchsize = B, images = img }
local image = { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 }
tap.raises("the layers form a cycle through srclayer", "a cycle of ordinary layers is still refused", singa.train,
           with_layers({ data, image,
             { name = "fc1", type = "kInnerProduct", srclayer = "fc2", num_output = 3 },
             { name = "fc2", type = "kInnerProduct", srclayer = "fc1", num_output = 3 },
             { name = "vis", type = "kRBMVis", srclayer = { "image", "hid" } },
             { name = "hid", type = "kRBMHid", srclayer = "vis", hdim = 2 } }))
tap.raises("'srclayer' must list its data source and its kRBMHid layer", "kRBMVis without its hid layer", singa.train,
           with_layers({ data, image,
             { name = "vis", type = "kRBMVis", srclayer = { "image", "data" } },
             { name = "hid", type = "kRBMHid", srclayer = "vis", hdim = 2 } }))
tap.raises("its srclayer 'image' is a kMnist; it must be the RBM's kRBMVis layer", "kRBMHid reading a non-RBM layer",
           singa.train, with_layers({ data, image,
             { name = "vis", type = "kRBMVis", srclayer = { "image", "hid" } },
             { name = "hid", type = "kRBMHid", srclayer = "image", hdim = 2 } }))
tap.raises("field 'hdim' (the number of hidden units) must be a positive integer", "kRBMHid needs hdim", singa.train,
           with_layers({ data, image,
             { name = "vis", type = "kRBMVis", srclayer = { "image", "hid" } },
             { name = "hid", type = "kRBMHid", srclayer = "vis" } }))
tap.raises("field 'hdim' is 5 but its kRBMHid layer 'hid' has hdim 2", "hdim on both layers must agree", singa.train,
           with_layers({ data, image,
             { name = "vis", type = "kRBMVis", srclayer = { "image", "hid" }, hdim = 5 },
             { name = "hid", type = "kRBMHid", srclayer = "vis", hdim = 2 } }))
tap.raises("it uses the weight of its kRBMVis layer 'vis'", "a SINGA-style weight copy on kRBMHid is explained",
           singa.train, with_layers({ data, image,
             { name = "vis", type = "kRBMVis", srclayer = { "image", "hid" }, param = { { name = "w1" }, { name = "b1" } } },
             { name = "hid", type = "kRBMHid", srclayer = "vis", hdim = 2,
               param = { { name = "w1_", share_from = "w1" }, { name = "b2" } } } }))
tap.raises("no RBM layers (kRBMVis, kRBMHid)", "kCD on a net without RBM layers", singa.train,
           with_layers({ data, image, { name = "fc", type = "kInnerProduct", srclayer = "image", num_output = 2 } }))
tap.raises("field 'cd_k' must be at least 1", "cd_k = 0 is refused", singa.train, rbm_job{ cd_k = 0 })
tap.raises("has no loss layer", "kBP on an RBM net is refused", singa.train,
           (function() local j = rbm_job{}; j.train_one_batch = { alg = "kBP" }; return j end)())

-- kCD trains only the RBM layers' params: the layer below (fixed features) stays as loaded.
do
  local below = dir .. "/below.ckpt"
  write_ckpt(below, { { name = "fw", dims = { 3, 3 }, values = { 1, 0, 0, 0, 1, 0, 0, 0, 1 } },
                      { name = "fb", dims = { 3 }, values = { 0, 0, 0 } } })
  local j = with_layers({ data, image,
    { name = "fc", type = "kInnerProduct", srclayer = "image", num_output = 3,
      param = { { name = "fw" }, { name = "fb" } } },
    { name = "vis", type = "kRBMVis", srclayer = { "fc", "hid" }, param = { { name = "W" }, { name = "bv" } } },
    { name = "hid", type = "kRBMHid", srclayer = "vis", hdim = H, param = { { name = "bh" } } } },
    { path = { dir .. "/run", init, below } })
  j.updater = { type = "kSGD", momentum = 0.9, weight_decay = 0.1, learning_rate = { type = "kFixed", base_lr = 1 } }
  local ok, e = pcall(singa.train, j)
  local ck = ok and read_ckpt(dir .. "/run/step000000001.ckpt") or {}
  local same = ok and ck["param/fw"] ~= nil
  for i, x in ipairs({ 1, 0, 0, 0, 1, 0, 0, 0, 1 }) do same = same and ck["param/fw"][i] == x end
  tap.ok(same and ck["param/W"][1] ~= W0[1][1],
         "the kInnerProduct below the RBM keeps its params (no update, no weight decay); the RBM's change", not ok and e or nil)
end

-- ---- checkpoint_path lists ----
-- A directory: its newest checkpoint that verifies; the log says what was loaded from where.
do
  local src = dir .. "/src"
  os.execute("mkdir -p '" .. src .. "'")
  local W1 = { 0.25, 0.5, 0.75, -0.25, -0.5, -0.75 }
  write_ckpt(src .. "/step000000010.ckpt", { { name = "W", dims = { H, V }, values = W1 } }, 10)
  write(src .. "/step000000020.ckpt", "SINGACKP corrupt")
  local JOB = dir .. "/child.lua"
  write(JOB, string.format([[
local singa = require "singa"
local j = dofile(%q)
singa.train(j)
]], dir .. "/job.lua"))
  local function child(path_list, extra)
    local j = rbm_job{ lr = 0, path = path_list }
    local function ser(v) -- Lua source for v (string keys, or a list)
      if type(v) ~= "table" then return type(v) == "string" and string.format("%q", v) or tostring(v) end
      local parts = {}
      for i = 1, #v do parts[i] = ser(v[i]) end
      for k, x in pairs(v) do
        if type(k) == "string" then parts[#parts + 1] = string.format("[%q] = %s", k, ser(x)) end
      end
      return "{" .. table.concat(parts, ", ") .. "}"
    end
    if extra then extra(j) end
    write(dir .. "/job.lua", "return " .. ser(j))
    local p = io.popen(string.format("'%s' -e '%s' 2>&1; echo \"exit=$?\"", os.getenv("SINGA_TUI"), JOB))
    local out = p:read("a")
    p:close()
    return out
  end
  local out = child({ dir .. "/run", src })
  tap.ok(out:find("refused checkpoint '" .. src .. "/step000000020.ckpt'", 1, true) and
         out:find("checkpoint_path: 1 param from " .. src .. "/step000000010.ckpt (step 10): W", 1, true) and
         out:find("checkpoint_path: params that keep their init (2): bv, bh", 1, true) and out:find("exit=0", 1, true),
         "a directory gives its newest verifying checkpoint; the log names the params loaded and those kept", out)
  local ck = read_ckpt(dir .. "/run/step000000001.ckpt")
  local w = {}
  for i = 1, 6 do w[i] = ck["param/W"][i] end
  tap.is(table.concat(w, ","), table.concat(W1, ","), "W is the directory's checkpoint's")
  -- later entries win
  out = child({ dir .. "/run", src, init })
  tap.ok(out:find("checkpoint_path: 3 params from " .. init .. " (step 0): W, bv, bh", 1, true) ~= nil,
         "each entry logs its params; a later entry overrides an earlier one", out)
  ck = read_ckpt(dir .. "/run/step000000001.ckpt")
  tap.ok(maxdiff({ W = ck["param/W"], bv = ck["param/bv"], bh = ck["param/bh"] }, { W = flat(W0), bv = bv0, bh = bh0 }) == 0,
         "the later entry's values are the ones used")
  -- resume = true with a checkpoint of its own ignores the other entries
  out = child({ dir .. "/run", src }, function(j) j.resume = true; j.train_steps = 2 end)
  tap.ok(out:find("resumed from", 1, true) and not out:find("checkpoint_path:", 1, true),
         "a resumed run takes its params from its own checkpoint, not the list", out)
end

local mismatch = dir .. "/mismatch.ckpt"
write_ckpt(mismatch, { { name = "W", dims = { H, 4 }, values = { 0, 0, 0, 0, 0, 0, 0, 0 } } })
tap.raises("checkpoint_path: param 'W' has shape 2x4 in '" .. mismatch .. "' but 2x3 in this job (layer 'vis')",
           "a shape mismatch names the param, both shapes, the file and the layer", singa.train,
           rbm_job{ path = { dir .. "/run", mismatch } })
tap.raises("checkpoint_path: cannot initialise params from '" .. dir .. "/nothing.ckpt': No such file or directory",
           "a missing checkpoint is an error", singa.train, rbm_job{ path = { dir .. "/run", dir .. "/nothing.ckpt" } })
os.execute("mkdir -p '" .. dir .. "/empty'")
tap.raises("directory '" .. dir .. "/empty' holds no checkpoint", "an empty directory is an error", singa.train,
           rbm_job{ path = { dir .. "/run", dir .. "/empty" } })
write(dir .. "/bad.ckpt", "SINGACKP")
tap.raises("checkpoint_path: checkpoint '" .. dir .. "/bad.ckpt': truncated header", "a corrupt file is an error",
           singa.train, rbm_job{ path = { dir .. "/run", dir .. "/bad.ckpt" } })
tap.raises("field 'checkpoint_path' must not be empty (entry 2)", "an empty entry is refused", singa.train,
           rbm_job{ path = { dir .. "/run", "" } })
tap.raises("field 'checkpoint_path' must be a string or a list of strings", "a number in the list is refused",
           singa.train, rbm_job{ path = { dir .. "/run", 3 } })
tap.raises("field 'checkpoint_path' is an empty list", "an empty list is refused", singa.train, rbm_job{ path = {} })

-- ---- the demo, scaled down: the reconstruction error falls in every stage ----
local fm = os.getenv("FMNIST_DIR") or "/usr/share/datasets/fashion-mnist/"
local f = io.open(fm .. "train-images-idx3-ubyte.gz", "rb")
if not f then
  tap.ok(true, "demos/rbm.lua # SKIP no Fashion-MNIST in " .. fm)
else
  f:close()
  local demo = os.getenv("top_srcdir") .. "/demos/rbm.lua"
  local p = io.popen(string.format("cd '%s' && timeout 300 '%s' -e '%s' 0.1 2>&1; echo \"exit=$?\"", dir,
                                   os.getenv("SINGA_TUI"), demo))
  local out = p:read("a")
  p:close()
  local stages, fell = 0, 0
  for name, a, b in out:gmatch("\n(%S+): reconstruction error ([%d.]+) %-> ([%d.]+)") do
    stages = stages + 1
    if tonumber(b) < tonumber(a) then fell = fell + 1 end
  end
  tap.ok(stages == 5 and fell == 5 and out:find("exit=0", 1, true),
         string.format("demos/rbm.lua at scale 0.1: the error falls in %d of %d stages (rbm1-4, autoencoder)", fell, stages),
         out)
end

if tap.failed == 0 then os.execute("rm -rf '" .. dir .. "'") end
tap.done()

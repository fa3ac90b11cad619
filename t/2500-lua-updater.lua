-- Updaters and learning-rate schedules written in Lua (type kLua), and the tensor objects they
-- work on: kLua reproduces kSGD bit for bit, its state is checkpointed and resumes exactly, and
-- Lua errors or misuse stop the job with a message instead of crashing it.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"
local read, ckpt = td.read, td.ckpt

local dir = td.tmpdir("2500-lua-updater")
local img, lab = td.idx(dir, 200, 4)

-- ---- tensors ----

local t = singa.tensor(2, 3)
tap.ok(t:numel() == 6 and #t == 6 and table.concat(t:shape(), "x") == "2x3", "singa.tensor(2, 3): 6 zeros of shape 2x3")
tap.ok(t[1] == 0 and t[6] == 0, "a new tensor is zero")
t[2] = 5
tap.is(t[2], 5.0, "t[i] = v sets element i (1-based)")
tap.raises("tensor index 7 out of range 1..6", "t[7] is out of range", function() return t[7] end)
tap.raises("tensor index 0 out of range", "t[0] is out of range", function() return t[0] end)
tap.raises("tensor index must be an integer", "t[1.5] is refused", function() return t[1.5] end)
tap.raises("out of range", "assigning t[7] is refused", function() t[7] = 1 end)

local a = singa.tensor{ 1, 2, 3, 4 }
local b = singa.tensor{ { 1, 2 }, { 3, 4 } }
tap.ok(table.concat(a:shape(), "x") == "4" and table.concat(b:shape(), "x") == "2x2" and b[3] == 3,
       "singa.tensor(list) is 1-D, singa.tensor(rows) is rows x cols, row-major")
tap.is(a:sum(), 10.0, "sum")
tap.is(a:norm(1), 10.0, "norm(1)")
tap.near(a:norm(), math.sqrt(30), 1e-12, "norm() is the L2 norm")
tap.near(a:norm(2), math.sqrt(30), 1e-12, "norm(2)")
tap.raises("the norm must be 1 or 2", "norm(3) is refused", a.norm, a, 3)
local c = a:clone()
c:scale(2)
tap.ok(c[4] == 8 and a[4] == 4, "clone copies; scale changes only the copy")
tap.is(c:add(1), c, "operations return the tensor, so they chain")
tap.is(table.concat(c:totable(), " "), "3.0 5.0 7.0 9.0", "add(number)")
c:sub(a)
tap.is(table.concat(c:totable(), " "), "2.0 3.0 4.0 5.0", "sub(tensor)")
c:mul(a):div(2)
tap.is(table.concat(c:totable(), " "), "1.0 3.0 6.0 10.0", "mul(tensor), div(number)")
c:div(a)
tap.is(table.concat(c:totable(), " "), "1.0 1.5 2.0 2.5", "div(tensor)")
c:fill(-4):abs():sqrt()
tap.is(table.concat(c:totable(), " "), "2.0 2.0 2.0 2.0", "fill, abs, sqrt")
c:axpy(0.5, a)
tap.is(table.concat(c:totable(), " "), "2.5 3.0 3.5 4.0", "axpy(a, x): t += a x")
c:copy(a):mul(2):sub(1)
tap.is(table.concat(c:totable(), " "), "1.0 3.0 5.0 7.0", "copy, mul(number), sub(number)")
local rows = b:totable()
tap.ok(#rows == 2 and rows[2][1] == 3 and rows[2][2] == 4, "totable() of a 2-D tensor gives rows")
tap.raises("tensor sizes differ", "element-wise operations need equal sizes", function() a:add(singa.tensor(3)) end)
tap.raises("tensor or number expected", "add needs a tensor or a number", function() a:add("x") end)
tap.raises("row 2 must be a list of 2 numbers", "singa.tensor refuses ragged rows", singa.tensor, { { 1, 2 }, { 3 } })
tap.raises("element 2 is a string", "singa.tensor refuses non-numbers", singa.tensor, { 1, "x" })
tap.ok(tostring(b):find("tensor 2x2", 1, true), "tostring names the shape")
do
  local closed
  do
    local tc <close> = singa.tensor(1000)
    closed = tc
  end
  tap.raises("tensor is closed", "a tensor used after <close> raises an error", function() return closed[1] end)
end

-- ---- kLua reproduces kSGD bit for bit ----

local function job(o)
  local layers = {
    { name = "data", type = "kIDXData", batchsize = 16, images = img, labels = lab, shuffle = true, exclude = "kTest" },
    { name = "data", type = "kIDXData", batchsize = 20, images = img, labels = lab, exclude = "kTrain" },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 16,
      param = { { name = "fc1_weight", lr_scale = 2, wd_scale = 0.5 } } },
    { name = "relu", type = "kReLU", srclayer = "fc1" },
    { name = "drop", type = "kDropout", srclayer = "relu", dropout_ratio = 0.2 },
    { name = "fc2", type = "kInnerProduct", srclayer = "drop", num_output = 4 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc2", "label" } },
  }
  if o.tied then -- a second branch whose first layer shares fc1's weight
    layers[#layers + 1] = { name = "fc1t", type = "kInnerProduct", srclayer = "image", num_output = 16,
                            param = { { name = "fc1t_weight", share_from = "fc1_weight" } } }
    layers[#layers + 1] = { name = "fc2t", type = "kInnerProduct", srclayer = "fc1t", num_output = 4 }
    layers[#layers + 1] = { name = "losst", type = "kSoftmaxLoss", srclayer = { "fc2t", "label" } }
  end
  return {
    name = "lua-updater", seed = 7, train_steps = o.steps or 40, disp_freq = 10, test_freq = 20, test_steps = 2,
    checkpoint_freq = o.freq or 20, checkpoint_path = o.path, resume = o.resume,
    updater = o.updater, neuralnet = { layer = layers },
  }
end

local function lua_sgd(m, extra)
  local u = { type = "kLua", state = { "history" }, learning_rate = { type = "kFixed", base_lr = 0.05 },
              update = function(step, w, g, state, lr)
                state.history:scale(m):axpy(-lr, g)
                w:add(state.history)
              end }
  for k, v in pairs(extra or {}) do u[k] = v end
  return u
end

-- kSGD with momentum and no clipping normally takes a fused path (the momentum update inside
-- the layer's GEMM), which rounds differently; a clip range no gradient reaches selects kSGD's
-- general per-element rule, which is what a Lua function can reproduce.
local WIDE = { clip_low = -1e30, clip_high = 1e30 }
local function same_run(name, u_lua, u_ref, o)
  o = o or {}
  local pa, pb = dir .. "/" .. name:gsub("%W", "_") .. "-lua", dir .. "/" .. name:gsub("%W", "_") .. "-ref"
  os.execute("rm -rf '" .. pa .. "' '" .. pb .. "'")
  local ok1, r1 = pcall(singa.train, job{ updater = u_lua, path = pa, tied = o.tied })
  local ok2, r2 = pcall(singa.train, job{ updater = u_ref, path = pb, tied = o.tied })
  if not (ok1 and ok2) then
    return tap.ok(false, name, tostring(ok1 and r2 or r1))
  end
  local same = read(ckpt(pa, 40)) and read(ckpt(pa, 40)) == read(ckpt(pb, 40)) and read(ckpt(pa, 20)) == read(ckpt(pb, 20))
  tap.ok(same and string.format("%.17g", r1.train.loss) == string.format("%.17g", r2.train.loss) and
         r1.test.loss == r2.test.loss, name,
         string.format("train loss %.17g vs %.17g", r1.train.loss, r2.train.loss))
end

local function with(t, extra)
  local u = {}
  for k, v in pairs(t) do u[k] = v end
  for k, v in pairs(extra) do u[k] = v end
  return u
end
local ksgd = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.05 } }

same_run("kLua SGD + momentum = kSGD + momentum: identical checkpoints (params, history) and losses",
         lua_sgd(0.9, WIDE), with(ksgd, WIDE))
same_run("... with weight decay, and lr_scale / wd_scale on a param",
         lua_sgd(0.9, with(WIDE, { weight_decay = 1e-3 })), with(ksgd, with(WIDE, { weight_decay = 1e-3 })))
same_run("... with clipping that bites (clip_low = -0.02, clip_high = 0.02)",
         lua_sgd(0.9, { clip_low = -0.02, clip_high = 0.02 }), with(ksgd, { clip_low = -0.02, clip_high = 0.02 }))
same_run("... with a param shared by two layers (gradients averaged)",
         lua_sgd(0.9, WIDE), with(ksgd, WIDE), { tied = true })
same_run("kLua plain SGD (no state) = kSGD without momentum",
         { type = "kLua", learning_rate = { base_lr = 0.2 }, update = function(_, w, g, _, lr) w:axpy(-lr, g) end },
         { type = "kSGD", learning_rate = { base_lr = 0.2 } })
same_run("a schedule given as a function = kStep",
         lua_sgd(0.9, with(WIDE, { learning_rate = function(step) return 0.05 * 0.5 ^ (step // 10) end })),
         with(ksgd, with(WIDE, { learning_rate = { type = "kStep", base_lr = 0.05, gamma = 0.5, change_freq = 10 } })))
same_run("a schedule given as { type = \"kLua\", schedule = f } = kStep",
         lua_sgd(0.9, with(WIDE, { learning_rate = { type = "kLua", schedule = function(step) return 0.05 * 0.5 ^ (step // 10) end } })),
         with(ksgd, with(WIDE, { learning_rate = { type = "kStep", base_lr = 0.05, gamma = 0.5, change_freq = 10 } })))

-- ---- what the update function is given ----

local seen = { steps = {}, names = {}, shapes_ok = true, lrs = {} }
local probe = lua_sgd(0.9, { learning_rate = function(step) return 0.01 * (step + 1) end })
probe.update = function(step, w, g, state, lr, name)
  if not seen.names[name] then seen.names[#seen.names + 1] = name end
  seen.names[name] = true
  seen.steps[step] = true
  seen.lrs[name .. "@" .. step] = lr
  seen.shapes_ok = seen.shapes_ok and table.concat(w:shape(), "x") == table.concat(g:shape(), "x") and
                   table.concat(state.history:shape(), "x") == table.concat(w:shape(), "x") and math.type(step) == "integer"
  if step % 7 == 3 then collectgarbage() end -- views must survive a full collection while in use
  state.history:scale(0.9):axpy(-lr, g)
  w:add(state.history)
end
local r = singa.train(job{ updater = probe, steps = 12, path = dir .. "/probe" })
table.sort(seen.names)
tap.is(table.concat(seen.names, " "), "fc1_bias fc1_weight fc2_bias fc2_weight", "update is called for every trained param, with its name")
local all = true
for s = 0, 11 do all = all and seen.steps[s] end
tap.ok(all and not seen.steps[12], "update is called at steps 0..train_steps - 1")
tap.ok(seen.shapes_ok, "param, grad and each state tensor have the param's shape; step is an integer")
tap.ok(math.abs(seen.lrs["fc1_weight@4"] - 0.05 * 2) < 1e-7 and math.abs(seen.lrs["fc2_weight@4"] - 0.05) < 1e-7,
       "lr is schedule(step) * the param's lr_scale")
tap.ok(r.train.loss and r.train.loss == r.train.loss, "the job completes")

-- ---- state slots: checkpointed, and resume is exact ----

-- Adam in Lua: two state slots and a temporary.
local function lua_adam()
  return {
    type = "kLua", state = { "m", "v" }, learning_rate = { base_lr = 0.01 },
    update = function(step, w, g, s, lr)
      local b1, b2, eps, t = 0.9, 0.999, 1e-8, step + 1
      s.m:scale(b1):axpy(1 - b1, g)
      local g2 = g:clone():mul(g)
      s.v:scale(b2):axpy(1 - b2, g2)
      local den = s.v:clone():div(1 - b2 ^ t):sqrt():add(eps)
      w:axpy(-lr / (1 - b1 ^ t), g2:copy(s.m):div(den))
    end,
  }
end
local whole, part = dir .. "/adam-whole", dir .. "/adam-part"
local full = singa.train(job{ updater = lua_adam(), path = whole, freq = 10 })
local ck = read(ckpt(whole, 40)) or ""
tap.ok(ck:find("updater/fc1_weight/m", 1, true) and ck:find("updater/fc2_bias/v", 1, true),
       "the state slots are checkpointed as updater/<param>/<slot>")
tap.ok(full.test.accuracy and full.test.accuracy > 0.9, string.format("Adam written in Lua trains (test accuracy %.3f)", full.test.accuracy or -1))
singa.train(job{ updater = lua_adam(), path = part, steps = 25, freq = 10 })
local resumed = singa.train(job{ updater = lua_adam(), path = part, resume = true, freq = 10 })
tap.ok(read(ckpt(part, 40)) == read(ckpt(whole, 40)) and resumed.train.loss == full.train.loss,
       "resumed from step 25 (state restored), the final checkpoint and loss equal the uninterrupted run's")
tap.raises("tensor 'updater/fc1_weight/v2' is missing", "a checkpoint without a declared slot is refused, naming it", singa.train,
           job{ updater = with(lua_adam(), { state = { "m", "v2" } }), path = part, resume = true, freq = 10 })
-- kLua with the slot kSGD uses reads kSGD's checkpoints, and goes on exactly as kSGD would.
local sgd_dir, mix_dir = dir .. "/sgd-whole", dir .. "/sgd-then-lua"
singa.train(job{ updater = with(ksgd, WIDE), path = sgd_dir })
singa.train(job{ updater = with(ksgd, WIDE), path = mix_dir, steps = 25 })
singa.train(job{ updater = lua_sgd(0.9, WIDE), path = mix_dir, resume = true })
tap.ok(read(ckpt(mix_dir, 40)) == read(ckpt(sgd_dir, 40)), "kSGD to step 25, then kLua with state { \"history\" }: the same final checkpoint")

-- ---- errors ----

local function refuses(want, name, updater)
  tap.raises(want, name, singa.train, job{ updater = updater, path = dir .. "/refused" })
end
refuses("field 'update' is required for kLua", "kLua without update", { type = "kLua", learning_rate = { base_lr = 0.1 } })
refuses("field 'update' does not apply to kSGD (it is for kLua)", "update given to kSGD",
        { type = "kSGD", update = function() end, learning_rate = { base_lr = 0.1 } })
refuses("field 'state' does not apply to kAdam (it is for kLua)", "state given to kAdam",
        { type = "kAdam", state = { "m" }, learning_rate = { base_lr = 0.1 } })
refuses("field 'update' must be a function, got number 5", "update = 5", lua_sgd(0.9, { update = 5 }))
refuses("field 'learning_rate' must be a table or a function", "learning_rate = 0.1", lua_sgd(0.9, { learning_rate = 0.1 }))
refuses("field 'schedule' is required for kLua", "schedule type kLua without a schedule", lua_sgd(0.9, { learning_rate = { type = "kLua" } }))
refuses("field 'schedule' does not apply to kFixed", "schedule given to kFixed",
        lua_sgd(0.9, { learning_rate = { base_lr = 0.1, schedule = function() return 1 end } }))
refuses("names slot 'h' twice", "a state slot named twice", lua_sgd(0.9, { state = { "h", "h" } }))
refuses("state slot name 'a/b' must be", "a state slot name with a slash", lua_sgd(0.9, { state = { "a/b" } }))
refuses("at most 8", "nine state slots", lua_sgd(0.9, { state = { "a", "b", "c", "d", "e", "f", "g", "h", "i" } }))
tap.raises("field 'num_output' must be an integer, got function", "a function where a layer wants a number", singa.train,
           (function() local j = job{ updater = ksgd, path = dir .. "/refused" } j.neuralnet.layer[5].num_output = function() end return j end)())

-- A Lua error inside the update stops the job with the error, its traceback and where it happened.
local kept
local boom = lua_sgd(0.9, WIDE)
boom.update = function(step, w, g, state, lr, name)
  kept = { w = w, h = state.history }
  if step == 3 and name == "fc2_bias" then
    local function deeper() error("boom in the updater") end
    deeper()
  end
  state.history:scale(0.9):axpy(-lr, g)
  w:add(state.history)
end
local ok, msg = pcall(singa.train, job{ updater = boom, path = dir .. "/boom" })
msg = tostring(msg)
tap.ok(not ok and msg:find("training step 3: updater kLua, param 'fc2_bias': ", 1, true) and msg:find("boom in the updater", 1, true),
       "a Lua error in update stops the job naming the step and the param", msg)
tap.ok(msg:find("stack traceback:", 1, true) and msg:find("in local 'deeper'", 1, true) and msg:find("2500%-lua%-updater.lua:%d+:"),
       "the message carries the Lua traceback with file:line", msg)
tap.ok(not msg:find("singa.core.train", 1, true), "the traceback stops at the update function (no engine frames)", msg)
tap.raises("tensor view expired", "a param tensor kept past its call raises an error", function() return kept.w[1] end)
tap.raises("tensor view expired", "a state tensor kept past its call raises an error", function() kept.h:fill(0) end)
tap.raises("tensor view expired", "methods of an expired view raise too", function() return kept.w:sum() end)
tap.ok(tostring(kept.w):find("expired", 1, true), "tostring of an expired view says so")

local sched_err = lua_sgd(0.9, { learning_rate = function(step) if step == 2 then error("bad rate") end return 0.1 end })
ok, msg = pcall(singa.train, job{ updater = sched_err, path = dir .. "/sched-err" })
tap.ok(not ok and tostring(msg):find("updater.learning_rate (kLua) at step 2: ", 1, true) and tostring(msg):find("bad rate", 1, true)
       and tostring(msg):find("stack traceback", 1, true), "a Lua error in the schedule stops the job with its traceback", tostring(msg))
refuses("at step 0: the function returned nothing; it must return a number", "a schedule returning nothing",
        lua_sgd(0.9, { learning_rate = function() end }))
refuses("the schedule returned -1; a rate must be a finite number >= 0", "a negative rate",
        lua_sgd(0.9, { learning_rate = function() return -1 end }))
refuses("returned string; it must return a number", "a schedule returning a string",
        lua_sgd(0.9, { learning_rate = function() return "0.1" end }))
refuses("tensor sizes differ", "a size mismatch inside update is a Lua error",
        lua_sgd(0.9, { update = function(_, w, g, s) w:add(singa.tensor(3)) end }))
refuses("tensor index 1000000 out of range", "an index out of range inside update is a Lua error",
        lua_sgd(0.9, { update = function(_, w) return w[1000000] end }))

-- Non-string errors, and the job after a failure: everything was cleaned up and runs again.
refuses("(error object is a table value)", "an error with a table value", lua_sgd(0.9, { update = function() error({}) end }))
same_run("after all those failures the same job still runs identically", lua_sgd(0.9, WIDE), with(ksgd, WIDE))

-- Scratch files go when everything passed; on a failure they stay for a look.
if tap.failed == 0 then os.execute("rm -rf '" .. dir .. "'") end
tap.done()

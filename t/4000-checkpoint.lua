-- Checkpoints: naming, pruning, resuming bit-for-bit, and refusing corrupt or foreign files.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"
local read, write, ckpt = td.read, td.write, td.ckpt

local dir = td.tmpdir("4000-checkpoint")
local img, lab = td.idx(dir, 200, 4)

local function ls(d)
  local names = {}
  local p = io.popen("ls -1 '" .. d .. "' 2>/dev/null")
  for line in p:lines() do names[#names + 1] = line end
  p:close()
  table.sort(names)
  return names
end

-- The job, in a file of its own so child processes (whose log lines we read) build the same one.
-- Shuffled data, dropout (the generator), momentum (updater state) and a test net (a second
-- data cursor) make every kind of checkpointed state matter.
local JOB = dir .. "/job.lua"
write(JOB, string.format([[
local img, lab = %q, %q
return function(o)
  local j = {
    name = "ckpt", seed = 7, train_steps = o.steps, disp_freq = 10, test_freq = 25, test_steps = o.test_steps or 2,
    validate_freq = 20, validate_steps = o.validate_steps or 0,
    checkpoint_freq = o.freq or 10, checkpoint_path = o.path, checkpoint_keep = o.keep or 3,
    resume = o.resume or false,
    updater = { type = o.updater or "kSGD", momentum = o.momentum or 0.9, weight_decay = 1e-4,
                learning_rate = { type = "kFixed", base_lr = 0.05 } },
    neuralnet = { layer = {
      { name = "data", type = "kIDXData", batchsize = 16, images = o.images or img, labels = o.labels or lab,
        shuffle = true, exclude = { "kTest", "kValidation" } },
      { name = "data", type = "kIDXData", batchsize = 20, images = o.test_images or img, labels = o.test_labels or lab,
        exclude = "kTrain" },
      { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
      { name = "label", type = "kLabel", srclayer = "data" },
      { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = o.hidden or 16 },
      { name = "relu", type = "kReLU", srclayer = "fc1" },
      { name = "drop", type = "kDropout", srclayer = "relu", dropout_ratio = 0.2 },
      { name = "fc2", type = "kInnerProduct", srclayer = "drop", num_output = 4 },
      { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc2", "label" } },
    } },
  }
  if o.tied then -- a second branch whose first layer shares fc1's weight
    local L = j.neuralnet.layer
    L[#L + 1] = { name = "fc1t", type = "kInnerProduct", srclayer = "image", num_output = o.hidden or 16,
                  param = { { name = "fc1t_weight", share_from = "fc1_weight" } } }
    L[#L + 1] = { name = "fc2t", type = "kInnerProduct", srclayer = "fc1t", num_output = 4 }
    L[#L + 1] = { name = "losst", type = "kSoftmaxLoss", srclayer = { "fc2t", "label" } }
  end
  return j
end
]], img, lab))
local job = dofile(JOB)

local function train(o) return singa.train(job(o)) end

-- Runs the job in a child singa-tui and returns its output (stdout and stderr) and success.
local CHILD = dir .. "/child.lua"
write(CHILD, [[
local singa = require "singa"
local job = dofile(arg[1])
local o = load("return " .. arg[2])()
local r = singa.train(job(o))
print(string.format("RESULT steps=%d loss=%.17g", r.steps, r.train.loss or -1))
]])
local function child(o)
  local parts = {}
  for k, v in pairs(o) do
    parts[#parts + 1] = string.format("%s = %s", k, type(v) == "string" and string.format("%q", v) or tostring(v))
  end
  local cmd = string.format("'%s' -e '%s' '%s' '{ %s }' 2>&1; echo \"exit=$?\"", os.getenv("SINGA_TUI"), CHILD, JOB,
                            table.concat(parts, ", "))
  local p = io.popen(cmd)
  local out = p:read("a")
  p:close()
  return out, out:find("exit=0\n", 1, true) ~= nil
end

local function has(s, ...)
  for _, w in ipairs({ ... }) do
    if not (s and s:find(w, 1, true)) then return false end
  end
  return true
end

-- Naming and pruning
local all = dir .. "/all"
local r = train{ steps = 60, path = all, keep = 100 }
tap.is(table.concat(ls(all), " "),
       "step000000010.ckpt step000000020.ckpt step000000030.ckpt step000000040.ckpt step000000050.ckpt step000000060.ckpt",
       "checkpoints every 10 steps and at the end, named stepNNNNNNNNN.ckpt")
tap.ok(has(read(ckpt(all, 60)), "SINGACKP", "param/fc1_weight", "updater/fc1_weight/history", "rng",
           "cursor/kTrain/data", "cursor/kTest/data", "SINGAEND"),
       "a checkpoint holds params, updater state, the generator and both data cursors")

local kept = dir .. "/kept"
train{ steps = 60, path = kept, keep = 2 }
tap.is(table.concat(ls(kept), " "), "step000000050.ckpt step000000060.ckpt", "checkpoint_keep = 2 keeps the last two")
tap.is(read(ckpt(kept, 60)), read(ckpt(all, 60)), "the same job writes the same checkpoint bytes")

-- Resuming reproduces the uninterrupted run exactly
local whole = dir .. "/whole"
local u = train{ steps = 100, path = whole, keep = 100 }
tap.ok(u.train.loss and u.test.loss, "the uninterrupted 100-step run reports train and test loss")

local part = dir .. "/part"
train{ steps = 55, path = part }
local out, ok = child{ steps = 100, path = part, resume = true }
tap.ok(ok and has(out, "resumed from " .. ckpt(part, 55) .. " (step 55)"), "resume = true continues from the newest checkpoint", out)
local rs = out:match("RESULT steps=(%d+) loss=(%S+)")
tap.is(out:match("RESULT steps=%d+ loss=(%S+)"), string.format("%.17g", u.train.loss),
       "resumed from step 55: the final train loss equals the uninterrupted run's to all digits")
tap.is(rs, "100", "the resumed run reports 100 steps")
tap.ok(read(ckpt(part, 100)) == read(ckpt(whole, 100)), "resumed from step 55: the final checkpoint is byte-identical")

local r2 = dir .. "/resume-in-process"
train{ steps = 55, path = r2 }
local v = train{ steps = 100, path = r2, resume = true }
tap.is(string.format("%.17g", v.train.loss), string.format("%.17g", u.train.loss),
       "resumed in-process: same final train loss")
tap.is(string.format("%.17g", v.test.loss), string.format("%.17g", u.test.loss), "resumed in-process: same final test loss")

-- A resume point inside the last display window: the window's average must still cover the
-- same steps as the uninterrupted run's.
local late = dir .. "/late"
train{ steps = 95, path = late }
local w = train{ steps = 100, path = late, resume = true }
tap.ok(read(ckpt(late, 100)) == read(ckpt(whole, 100)), "resumed from step 95: the final checkpoint is byte-identical")
tap.is(string.format("%.17g", w.train.loss), string.format("%.17g", u.train.loss),
       "resumed from step 95 (mid display window): the final train loss equals the uninterrupted run's")

-- Other updaters and shared params resume exactly too.
for _, v in ipairs{ { "kNesterov", { updater = "kNesterov" } }, { "plain kSGD", { momentum = 0 } },
                    { "kSGD + momentum with a shared param", { tied = true } },
                    { "kNesterov with a shared param", { updater = "kNesterov", tied = true } } } do
  local name, o = v[1], v[2]
  local a, b = dir .. "/variant-whole", dir .. "/variant-part"
  os.execute("rm -rf '" .. a .. "' '" .. b .. "'")
  o.steps, o.path = 40, a
  local full = train(o)
  o.steps, o.path = 25, b
  train(o)
  o.steps, o.resume = 40, true
  local resumed = train(o)
  tap.ok(read(ckpt(a, 40)) and read(ckpt(a, 40)) == read(ckpt(b, 40)) and full.train.loss == resumed.train.loss,
         name .. ": resumed from step 25, the final checkpoint and train loss are identical")
end

-- A resume with nothing left to do trains nothing.
local done = train{ steps = 55, path = part .. "-done", resume = true } -- no such directory: starts at 0
tap.is(done.steps, 55, "resume = true with no checkpoint directory starts from step 0")
local again, ok2 = child{ steps = 55, path = part .. "-done", resume = true }
tap.ok(ok2 and has(again, "resumed from " .. ckpt(part .. "-done", 55)), "resuming a finished run loads its final checkpoint", again)

-- Corrupt and truncated checkpoints are refused by name; resume falls back to an older one.
local function fresh(name, steps)
  local d = dir .. "/" .. name
  train{ steps = steps or 50, path = d } -- checkpoints 30, 40, 50
  return d
end
local function flip(path)
  local s = assert(read(path))
  local i = #s // 2
  write(path, s:sub(1, i - 1) .. string.char(s:byte(i) ~ 0x5a) .. s:sub(i + 1))
end

local bad = fresh("corrupt")
flip(ckpt(bad, 50))
out, ok = child{ steps = 60, path = bad, resume = true }
tap.ok(has(out, ckpt(bad, 50), "CRC"), "a flipped byte is reported naming the file and the CRC", out)
tap.ok(ok and has(out, "resumed from " .. ckpt(bad, 40) .. " (step 40)"), "resume falls back to the older good checkpoint", out)
tap.ok(read(ckpt(bad, 60)) == read(ckpt(whole, 60)), "the fallback run ends where the uninterrupted run was at step 60")

local cut = fresh("truncated")
local s = read(ckpt(cut, 50))
write(ckpt(cut, 50), s:sub(1, #s - 100))
out, ok = child{ steps = 60, path = cut, resume = true }
tap.ok(has(out, ckpt(cut, 50), "truncated"), "a truncated checkpoint is reported naming the file", out)
tap.ok(ok and has(out, "resumed from " .. ckpt(cut, 40) .. " (step 40)"), "resume falls back past the truncated one", out)

local empty = fresh("empty")
write(ckpt(empty, 50), "")
out, ok = child{ steps = 60, path = empty, resume = true }
tap.ok(ok and has(out, "resumed from " .. ckpt(empty, 40)), "an empty newest checkpoint is skipped", out)

local stale = fresh("stale-tmp")
write(ckpt(stale, 70) .. ".tmp", "half a checkpoint")
out, ok = child{ steps = 80, path = stale, resume = true }
tap.ok(ok and has(out, "resumed from " .. ckpt(stale, 50)), "a leftover .tmp file from a crash is not taken for a checkpoint", out)

local dead = fresh("all-corrupt")
for _, st in ipairs{ 30, 40, 50 } do flip(ckpt(dead, st)) end
tap.raises(ckpt(dead, 50), "all checkpoints corrupt: resume fails naming the newest", train, { steps = 60, path = dead, resume = true })
tap.raises("CRC", "all checkpoints corrupt: the reason is given", train, { steps = 60, path = dead, resume = true })
tap.is(table.concat(ls(dead), " "), "step000000030.ckpt step000000040.ckpt step000000050.ckpt",
       "a failed resume writes and prunes nothing")

-- Checkpoints of another net or updater are refused naming the tensor and the shapes.
local other = fresh("other-net")
tap.raises("'param/fc1_weight' has shape 16x64 in the file but 8x64 in the job",
           "a checkpoint of another net names the tensor and both shapes", train,
           { steps = 60, path = other, resume = true, hidden = 8 })
local nomo = dir .. "/no-momentum"
train{ steps = 50, path = nomo, momentum = 0 }
tap.raises("tensor 'updater/fc1_weight/history' is missing",
           "a job with momentum refuses a checkpoint without momentum history, naming the tensor", train,
           { steps = 60, path = nomo, resume = true })
local mom = fresh("momentum")
tap.raises(ckpt(mom, 50), "a job without momentum refuses a checkpoint holding momentum history", train,
           { steps = 60, path = mom, resume = true, momentum = 0 })
local small_img, small_lab = td.idx(dir .. "/small", 120, 4)
local moved = fresh("other-data")
tap.raises("layer 'data'", "a data set of another size is refused naming the layer", train,
           { steps = 60, path = moved, resume = true, images = small_img, labels = small_lab })

-- test_steps and validate_steps may change between runs: the kTest and kValidation nets are built
-- only when they are above 0, and their cursors come and go with them.
local function resumes(name, first, second)
  local d = dir .. "/" .. name
  first.steps, first.path = 30, d
  train(first)
  second.steps, second.path, second.resume = 40, d, true
  local ok, r = pcall(train, second)
  tap.ok(ok and r.steps == 40, name .. ": resumes from its own checkpoint", not ok and r or nil)
  return ok and r
end
resumes("no-test", { test_steps = 0 }, { test_steps = 0 })
local dropped = resumes("test-dropped", {}, { test_steps = 0 })
local plain = train{ steps = 40, path = dir .. "/test-dropped-whole" }
tap.is(dropped and string.format("%.17g", dropped.train.loss), string.format("%.17g", plain.train.loss),
       "test_steps 2 -> 0: training goes on exactly as the uninterrupted run's")
local added = resumes("test-added", { test_steps = 0 }, { test_steps = 2 })
tap.ok(added and added.test.loss, "test_steps 0 -> 2: the resumed run tests from the first test batch")
resumes("validation", { validate_steps = 2 }, { validate_steps = 2 })
resumes("validation-dropped", { validate_steps = 2 }, { validate_steps = 0 })
resumes("validation-added", { test_steps = 0 }, { validate_steps = 2 })
local test_small = fresh("other-test-data")
tap.raises("layer 'data'", "a kTest net kept from run to run still has its cursor checked", train,
           { steps = 60, path = test_small, resume = true, test_images = small_img, test_labels = small_lab })

tap.raises("checkpoint_keep", "checkpoint_keep = 0 is refused", train, { steps = 10, path = dir .. "/k0", keep = 0 })

-- Nothing half-written is left behind.
local p = io.popen("find '" .. dir .. "' -type f -name '*.tmp' ! -name 'step000000070.ckpt.tmp'")
local leftovers = p:read("a")
p:close()
tap.is(leftovers, "", "no *.tmp files are left behind")

-- Scratch files go when everything passed; on a failure they stay for a look.
if tap.failed == 0 then os.execute("rm -rf '" .. dir .. "'") end
tap.done()

-- Trained models: singa.test evaluates a job's newest checkpoint exactly as training's final test
-- did, singa.predict gives class probabilities that agree with it, and missing or foreign
-- checkpoints are refused clearly.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"
local read, write = td.read, td.write

local dir = td.tmpdir("4300-predict")
-- 10 classes on 8 rows: classes 8 and 9 have no bright row of their own, so they look alike and
-- the net cannot be perfect, which makes agreeing with its accuracy mean something.
local img, lab = td.idx(dir .. "/train", 400, 10, 8, 8, 12345)
local timg, tlab = td.idx(dir .. "/test", 200, 10, 8, 8, 999)

-- The test set as rows of raw pixels and its labels, read back from the IDX files.
local function idx_rows(images, labels)
  local s, l = assert(read(images)), assert(read(labels))
  local _, n, h, w = string.unpack(">I4I4I4I4", s)
  local rows, classes = {}, {}
  for i = 1, n do
    local row, off = {}, 16 + (i - 1) * h * w
    for k = 1, h * w do row[k] = s:byte(off + k) end
    rows[i] = row
    classes[i] = l:byte(8 + i)
  end
  return rows, classes
end

local function argmax(row)
  local best = 1
  for k = 2, #row do if row[k] > row[best] then best = k end end
  return best - 1
end

-- 200 test images in 4 batches of 50: every test covers the set once and ends where it began,
-- so training's final test sees the same batches as a fresh singa.test.
local function job(o)
  o = o or {}
  return {
    name = "predict", seed = 3, train_steps = 60, disp_freq = 20, test_freq = 30, test_steps = o.test_steps or 4,
    checkpoint_freq = 30, checkpoint_path = o.path or (dir .. "/ckpt"),
    updater = { type = "kSGD", momentum = 0.9, learning_rate = { base_lr = 0.05 } },
    neuralnet = { layer = {
      { name = "data", type = "kIDXData", batchsize = 32, shuffle = true, exclude = "kTest",
        images = o.train_images or img, labels = lab },
      { name = "data", type = "kIDXData", batchsize = 50, exclude = "kTrain", images = timg, labels = tlab },
      { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
      { name = "label", type = "kLabel", srclayer = "data" },
      { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = o.hidden or 16 },
      { name = "relu", type = "kReLU", srclayer = "fc1" },
      { name = "drop", type = "kDropout", srclayer = "relu", dropout_ratio = 0.3 },
      { name = "fc2", type = "kInnerProduct", srclayer = "drop", num_output = 10 },
      { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc2", "label" } },
    } },
  }
end

local trained = singa.train(job())
local acc, loss = trained.test.accuracy, trained.test.loss
tap.ok(acc and acc > 0.7 and acc < 1, string.format("the job trains (final test accuracy %.3f)", acc or -1))

-- singa.test
local t = singa.test(job())
tap.is(t.step, 60, "singa.test loads the newest checkpoint (step 60)")
tap.is(t.checkpoint, dir .. "/ckpt/step000000060.ckpt", "and names its file")
tap.is(string.format("%.17g", t.test.accuracy), string.format("%.17g", acc), "singa.test's accuracy equals training's final test, to all digits")
tap.is(string.format("%.17g", t.test.loss), string.format("%.17g", loss), "singa.test's loss equals training's final test, to all digits")
local again = singa.test(job())
tap.is(again.test.loss, t.test.loss, "a second singa.test gives the same result")
local missing_train = singa.test(job{ train_images = dir .. "/no-such-file" })
tap.is(missing_train.test.loss, t.test.loss, "singa.test builds only the kTest net: the training data need not exist")

-- singa.predict
local rows, classes = idx_rows(timg, tlab)
local probs = singa.predict(job(), rows)
tap.is(#probs, 200, "singa.predict gives one row per input row")
local sums_ok, correct = #probs[1] == 10, 0
for i, p in ipairs(probs) do
  local s = 0
  for k = 1, #p do s = s + p[k] end
  sums_ok = sums_ok and math.abs(s - 1) < 1e-5 and #p == 10
  if argmax(p) == classes[i] then correct = correct + 1 end
end
tap.ok(sums_ok, "each row holds 10 class probabilities summing to 1")
tap.near(correct / 200, acc, 1e-12, string.format("argmax of the probabilities: accuracy %.3f, as the test reported", correct / 200))

local tin = singa.tensor(rows)
local tout = singa.predict(job(), tin)
local same = tostring(tout):find("tensor 200x10", 1, true) ~= nil
for i = 1, 200 do for k = 1, 10 do same = same and tout[(i - 1) * 10 + k] == probs[i][k] end end
tap.ok(same, "a tensor input gives a 200x10 tensor with the same values")

local few = singa.predict(job(), { rows[1], rows[2], rows[3], rows[4], rows[5], rows[6], rows[7] })
local few_same = #few == 7
for i = 1, 7 do for k = 1, 10 do few_same = few_same and few[i][k] == probs[i][k] end end
tap.ok(few_same, "7 rows (a partial batch) give the same probabilities as in the full run")
local many = {}
for i = 1, 130 do many[i] = rows[(i - 1) % 200 + 1] end
local m = singa.predict(job(), many)
tap.ok(#m == 130 and m[130][2] == probs[130][2] and m[51][3] == probs[51][3], "130 rows run as 3 batches of 50")

local logits = singa.predict(job(), { rows[1] }, "fc2")[1]
local z = 0
for k = 1, 10 do z = z + math.exp(logits[k]) end
local soft_ok = #logits == 10
for k = 1, 10 do soft_ok = soft_ok and math.abs(math.exp(logits[k]) / z - probs[1][k]) < 1e-6 end
tap.ok(soft_ok, "predict(job, input, \"fc2\") gives that layer's output (logits whose softmax is the probabilities)")
local hidden = singa.predict(job(), { rows[1] }, "relu")[1]
tap.is(#hidden, 16, "any layer can be read (relu: 16 values)")

-- A named output layer, and a net whose output is a kSoftmax layer.
local soft_job = job{ path = dir .. "/ckpt" }
table.insert(soft_job.neuralnet.layer, { name = "prob", type = "kSoftmax", srclayer = "fc2", exclude = "kTrain" })
table.remove(soft_job.neuralnet.layer, 9) -- no loss layer: the kSoftmax is the output
soft_job.test_steps = 0
local sp = singa.predict(soft_job, { rows[1] })[1]
local sp_ok = #sp == 10
for k = 1, 10 do sp_ok = sp_ok and math.abs(sp[k] - probs[1][k]) < 1e-6 end
tap.ok(sp_ok, "without kSoftmaxLoss the last kSoftmax layer is the output")

-- A job with a Lua updater loads too (the updater is not built).
local lua_job = job()
lua_job.updater = { type = "kLua", update = function() error("not called") end, learning_rate = function() return 1 end }
tap.is(singa.test(lua_job).test.loss, t.test.loss, "a job with a kLua updater tests the same (the updater is not used)")

-- A checkpoint file as checkpoint_path; an older checkpoint.
local at30 = singa.test(job{ path = dir .. "/ckpt/step000000030.ckpt" })
tap.ok(at30.step == 30 and at30.test.loss ~= t.test.loss, "checkpoint_path naming a file loads that checkpoint (step 30)")
local list_job = job()
list_job.checkpoint_path = { dir .. "/ckpt", dir .. "/elsewhere" }
tap.is(singa.test(list_job).step, 60, "with a list checkpoint_path, the first entry is the job's checkpoints")

-- Errors
local refuses = tap.raises
refuses("checkpoint_path '" .. dir .. "/none': No such file or directory; train the job first",
        "no checkpoint directory: says so and to train first", singa.test, job{ path = dir .. "/none" })
os.execute("mkdir -p '" .. dir .. "/empty'")
refuses("holds no checkpoint (stepNNNNNNNNN.ckpt); train the job first", "an empty checkpoint directory", singa.predict,
        job{ path = dir .. "/empty" }, { rows[1] })
local nopath = job()
nopath.checkpoint_path, nopath.checkpoint_freq = nil, nil
refuses("field 'checkpoint_path' is required", "a job without checkpoint_path", singa.test, nopath)
refuses("param 'fc1_weight' has shape 16x64 in the file but 8x64 in the job (layer 'fc1')",
        "a checkpoint of another net names the param and both shapes", singa.test, job{ hidden = 8 })
refuses("test_steps is 0", "singa.test with test_steps = 0", singa.test, job{ test_steps = 0 })
refuses("takes 64 values per instance", "predict: rows of the wrong width", singa.predict, job(), { { 1, 2, 3 } })
refuses("row 2 must be a list of 64 numbers", "predict: ragged rows", singa.predict, job(), { rows[1], { 1 } })
refuses("list of rows or tensor expected", "predict: input must be rows or a tensor", singa.predict, job(), 5)
refuses("the kTest net has no layer 'nope'", "predict: an unknown output layer", singa.predict, job(), { rows[1] }, "nope")
refuses("unknown field 'test_step'", "a misspelt job field is caught", singa.test,
        (function() local j = job() j.test_step = 1 return j end)())
refuses("layer 'data' is the input layer", "predict: the input layer is not an output", singa.predict, job(), { rows[1] }, "data")
local by_name = singa.predict(job(), { rows[2] }, "loss")[1]
tap.ok(by_name[3] == probs[2][3] and by_name[10] == probs[2][10], "naming the kSoftmaxLoss layer gives the default output")

-- A corrupt newest checkpoint: the next older one is used, as resume does.
local cdir = dir .. "/corrupt"
os.execute("mkdir -p '" .. cdir .. "' && cp '" .. dir .. "/ckpt/'*.ckpt '" .. cdir .. "/'")
local s = read(cdir .. "/step000000060.ckpt")
write(cdir .. "/step000000060.ckpt", s:sub(1, 200) .. string.char(s:byte(201) ~ 0xff) .. s:sub(202))
tap.is(singa.test(job{ path = cdir }).step, 30, "a corrupt newest checkpoint is skipped for the older one")
write(cdir .. "/step000000030.ckpt", "SINGACKP")
refuses("no checkpoint in '" .. cdir .. "' fits this job's kTest net; newest: ", "when none verifies, the error says so",
        singa.test, job{ path = cdir })
refuses("CRC", "and gives the newest one's reason", singa.test, job{ path = cdir })

-- Scratch files go when everything passed; on a failure they stay for a look.
if tap.failed == 0 then os.execute("rm -rf '" .. dir .. "'") end
tap.done()

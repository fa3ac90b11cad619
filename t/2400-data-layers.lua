-- kBM (batch normalisation), the data layers kCSVInput, kCSVOutput and kRGBImage, and the
-- CIFAR-10 demo's net on a small generated CIFAR-format set.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"
local read, write, ckpt = td.read, td.write, td.ckpt

local dir = td.tmpdir("2400-data-layers")
local TOL = 2e-2

local f32 = td.f32

local csv_rows = td.csv_rows

-- A CIFAR-10 binary file of n records: label (i + offset) % 10; each pixel noise, brighter in the
-- label's own band of rows of channel label % 3, so a small net can learn it.
local function cifar(path, n, offset, seed)
  local rng = seed or 99
  local function rand()
    rng = (rng * 1103515245 + 12345) % 2147483648
    return rng // 8388608 -- 0..255
  end
  local recs = {}
  for i = 0, n - 1 do
    local label = (i + (offset or 0)) % 10
    local px = {}
    for c = 0, 2 do
      for y = 0, 31 do
        for x = 0, 31 do
          local v = rand() // 3
          if c == label % 3 and y // 3 == label then v = v + 150 end
          px[#px + 1] = string.char(v)
        end
      end
    end
    recs[#recs + 1] = string.char(label) .. table.concat(px)
  end
  write(path, table.concat(recs))
  return path
end

local refuses = tap.raises

---------------------------------------------------------------------------------------------
-- kBM: gradients in the training phase, per feature (2-d) and per channel (4-d).
for _, c in ipairs{
  { "kBM on N x F", {}, { 4, 6 } },
  { "kBM on N x C x H x W", {}, { 3, 2, 3, 3 } },
  { "kBM on N x C x 1 x 1", {}, { 5, 4, 1, 1 } },
  { "kBM momentum 1, eps 0.1", { momentum = 1, eps = 0.1 }, { 6, 3, 2, 1 } },
  { "kBM with a scale and bias of their own", { param = { { init = { type = "kGaussian" } }, { init = { type = "kUniform" } } } },
    { 4, 3, 2, 2 } },
} do
  local layer = { name = "bn", type = "kBM" }
  for k, v in pairs(c[2]) do layer[k] = v end
  local err, worst, checked = singa.gradcheck(layer, { { shape = c[3] } })
  tap.ok(err < TOL and checked > 0, string.format("%s: max relative error %.2e over %d elements", c[1], err, checked), worst)
end
do -- only inputs, scale and bias are checked: the running statistics get no gradient
  local _, _, checked = singa.gradcheck({ name = "bn", type = "kBM" }, { { shape = { 4, 6 } } })
  tap.is(checked, 24 + 6 + 6, "kBM gradcheck covers the input, scale and bias (not the running statistics)")
end

-- kBM forward in the training phase: batch statistics (biased variance), scale 1, bias 0.
do
  local r = singa.forward({ name = "bn", type = "kBM", eps = 1e-5 }, { { shape = { 4, 2 }, data = { 1, 10, 2, 20, 3, 30, 4, 40 } } })
  local want = {}
  for i, x in ipairs{ 1, 2, 3, 4 } do
    local v = (x - 2.5) / math.sqrt(1.25 + 1e-5)
    want[2 * i - 1] = v
    want[2 * i] = (10 * x - 25) / math.sqrt(125 + 1e-5)
  end
  local ok = #r[1] == 8
  for i = 1, 8 do ok = ok and math.abs(r[1][i] - want[i]) < 1e-5 end
  tap.ok(ok, "kBM in kTrain normalises each feature by the batch's mean and variance")
  -- Channel 0 holds 1, 3 and 5, 7 (mean 4, variance 5); channel 1 is constant and gives 0.
  r = singa.forward({ name = "bn", type = "kBM" }, { { shape = { 2, 2, 1, 2 }, data = { 1, 3, 10, 10, 5, 7, 10, 10 } } })
  ok = #r[1] == 8
  for i, x in ipairs{ 1, 3, 0, 0, 5, 7, 0, 0 } do
    local w = x == 0 and 0 or (x - 4) / math.sqrt(5 + 1e-5)
    ok = ok and math.abs(r[1][i] - w) < 1e-5
  end
  tap.ok(ok, "kBM on N x C x H x W normalises each channel over instances and pixels")
end

---------------------------------------------------------------------------------------------
-- kCSVInput and kCSVOutput.
local CSV = dir .. "/data.csv"
local csv_text = "0,0.5,-1.25,3\n1,1e-3,2,-0.1\n\n2,7,8,9\r\n1, 4.5 ,0,1\n0,-2,-3,-4.75\n2,0.1,0.2,0.3\n1,5,5,5\n0,6,-6,6\n"
write(CSV, csv_text)
local csv_in = {}
for line in csv_text:gmatch("[^\n]+") do
  local r = {}
  for v in line:gmatch("[^,]+") do r[#r + 1] = tonumber(v) end
  if #r > 0 then csv_in[#csv_in + 1] = r end
end

-- A job on the CSV file: a train net (fc + softmax loss) and a test net whose `out` layer
-- writes `out_src` (default: the data layer) to `out`.
local function csv_job(o)
  o = o or {}
  local layers = {
    { name = "data", type = "kCSVInput", path = o.path or CSV, batchsize = o.batch or 4, shuffle = o.shuffle,
      exclude = { "kTest", "kValidation" }, random_skip = o.skip, separator = o.separator },
    { name = "data", type = "kCSVInput", path = o.path or CSV, batchsize = o.test_batch or 8, exclude = "kTrain",
      separator = o.separator },
    { name = "label", type = "kLabel", srclayer = "data" },
  }
  for _, l in ipairs(o.extra or {}) do layers[#layers + 1] = l end
  layers[#layers + 1] = { name = "fc", type = "kInnerProduct", srclayer = o.fc_src or "data", num_output = 3 }
  layers[#layers + 1] = { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc", "label" } }
  if o.out then
    layers[#layers + 1] = { name = "out", type = "kCSVOutput", srclayer = o.out_src or "data", path = o.out, exclude = o.out_exclude }
  end
  return {
    name = "csv", seed = o.seed or 3, train_steps = o.steps or 2, test_steps = o.test_steps or 1,
    test_freq = o.test_freq, validate_steps = o.validate_steps, validate_freq = o.validate_freq,
    checkpoint_freq = o.ckpt_freq, checkpoint_path = o.ckpt, resume = o.resume,
    updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.05 } },
    neuralnet = { layer = layers },
  }
end

do
  local out = dir .. "/roundtrip.csv"
  local ok, msg = pcall(singa.train, csv_job{ out = out })
  tap.ok(ok, "kCSVInput -> kCSVOutput job runs", not ok and msg or nil)
  local rows = csv_rows(out)
  local same = #rows == #csv_in
  for i = 1, #csv_in do
    for k = 1, #csv_in[i] do same = same and rows[i] and f32(rows[i][k]) == f32(csv_in[i][k]) end
    same = same and #rows[i] == #csv_in[i]
  end
  tap.ok(same, "round trip: kCSVOutput writes back label and features as kCSVInput read them (blank lines, CR, spaces)",
         read(out))
  -- Another run truncates the file; the training net writes nothing.
  pcall(singa.train, csv_job{ out = out, test_steps = 0, steps = 3 })
  tap.is(read(out), "", "the file is truncated at job start, and the training phase writes nothing")
  -- Validation and test nets both append, batch by batch, in the order they run.
  local ok2, msg2 = pcall(singa.train, csv_job{ out = out, steps = 2, validate_steps = 1, validate_freq = 5, test_steps = 2 })
  tap.ok(ok2, "a job writing the file from validation and test runs", msg2)
  tap.is(#csv_rows(out), 8 * 1 + 8 * 2, "validation (at step 0) and the final test (2 batches) append their lines")
  -- Several sources: one line joins them; a non-input source writes its values only.
  local ok3, msg3 = pcall(singa.train, csv_job{ out = out, out_src = { "label", "argsort" }, out_exclude = "kTrain",
                              extra = { { name = "argsort", type = "kArgSort", srclayer = "fc", topk = 2, exclude = "kTrain" } } })
  local r = csv_rows(out)
  tap.ok(ok3 and #r == 8 and #r[1] == 3 and r[1][1] == 0 and r[3][1] == 2 and r[1][2] ~= r[1][3],
         "kCSVOutput of kLabel and kArgSort (topk 2): label, then the two indices", ok3 and read(out) or msg3)
end

-- Separator, has_label = false, shuffle.
do
  local semi = dir .. "/semi.csv"
  write(semi, "1;2\n3;4\n5;6\n")
  local out = dir .. "/semi-out.csv"
  local j = {
    name = "semi", train_steps = 1, test_steps = 1,
    updater = { type = "kSGD", learning_rate = { base_lr = 0.1 } },
    neuralnet = { layer = {
      { name = "data", type = "kCSVInput", path = semi, separator = ";", has_label = false, batchsize = 3 },
      { name = "fc", type = "kInnerProduct", srclayer = "data", num_output = 3 },
      { name = "t", type = "kCSVInput", path = CSV, batchsize = 3 },
      { name = "label", type = "kLabel", srclayer = "t" },
      { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc", "label" } },
      { name = "out", type = "kCSVOutput", srclayer = "data", path = out, separator = ";" },
    } },
  }
  local ok, msg = pcall(singa.train, j)
  tap.ok(ok and read(out) == "1;2\n3;4\n5;6\n", "separator ';' and has_label = false: features only, written back the same",
         ok and read(out) or msg)
end

-- Shuffled CSV input follows the seed: two runs agree, and differ from reading in order.
do
  local function loss(shuffle)
    return singa.train(csv_job{ shuffle = shuffle, steps = 7, seed = 1 }).train.loss
  end
  local a, b, c = loss(true), loss(true), loss(false)
  tap.ok(a == b and a ~= c, string.format("shuffled kCSVInput repeats with the seed (%.9g %.9g) and differs from in order (%.9g)", a, b, c))
end

-- Errors name the file, the line and the column.
do
  local function bad(text, want, name, o)
    local p = dir .. "/bad.csv"
    if text then write(p, text) end
    o = o or {}
    o.path = o.path or p
    refuses(want, name, singa.train, csv_job(o))
  end
  bad(nil, { "layer 'data' (kCSVInput)", dir .. "/missing.csv", "No such file" }, "kCSVInput: a missing file is named",
      { path = dir .. "/missing.csv" })
  bad("0,1,2\n1,2\n", { "bad.csv' line 2 has 2 columns but line 1 has 3" }, "kCSVInput: a row with too few columns")
  bad("\n0,1,2\n1,2,3,4\n", { "bad.csv' line 3 has 4 columns but line 2 has 3" }, "kCSVInput: a row with too many columns")
  bad("0,1,2\n1,x7,3\n", { "bad.csv' line 2, column 2: 'x7' is not a finite number" }, "kCSVInput: a non-number")
  bad("0,1,2\n1,2,3abc\n", { "line 2, column 3: '3abc'" }, "kCSVInput: trailing junk after a number")
  bad("0,1,nan\n", { "line 1, column 3: 'nan' is not a finite number" }, "kCSVInput: NaN is refused")
  bad("0,1,,2\n", { "line 1, column 3: empty field" }, "kCSVInput: an empty field")
  bad("", { "bad.csv' holds no records" }, "kCSVInput: an empty file")
  bad("\n  \n\n", { "holds no records" }, "kCSVInput: a blank file")
  bad("1\n2\n", { "has 1 column", "a label and at least one feature" }, "kCSVInput: a label without features")
  bad("0,1\n", { "field 'separator'", "\".\"" }, "kCSVInput: '.' as separator", { separator = "." })
  refuses({ "layer 'data'", "batchsize" }, "kCSVInput: batchsize is required", singa.train,
          (function() local j = csv_job() j.neuralnet.layer[1].batchsize = nil return j end)())
  refuses({ "layer 'out' (kCSVOutput)", "cannot write file", "/no/such/dir/x.csv" }, "kCSVOutput: an unwritable path",
          singa.train, csv_job{ out = "/no/such/dir/x.csv" })
  refuses({ "layer 'out'", "no layer may list it" }, "kCSVOutput has no output", singa.train,
          csv_job{ out = dir .. "/x.csv", fc_src = "out" })
end

---------------------------------------------------------------------------------------------
-- kBM in whole jobs: the test phase uses the running statistics.
do
  -- data (8 rows, batch 4, not shuffled) -> bn (momentum 0.5) -> fc -> loss; scale and bias
  -- frozen (lr_scale 0) so the test output is (x - running_mean) * running_invvar exactly.
  local out = dir .. "/bn-test.csv"
  local j = csv_job{
    steps = 3, out = out, out_src = "bn", fc_src = "bn", test_batch = 4,
    extra = { { name = "bn", type = "kBM", srclayer = "data", momentum = 0.5,
                param = { { lr_scale = 0 }, { lr_scale = 0 } } } },
  }
  local ok, msg = pcall(singa.train, j)
  tap.ok(ok, "a job with kBM trains and tests", msg)
  -- Training batches: rows 1-4, 5-8, 1-4.
  local rm, rinv = { 0, 0, 0 }, { 1, 1, 1 }
  for _, first in ipairs{ 1, 5, 1 } do
    for f = 1, 3 do
      local s, ss = 0, 0
      for i = first, first + 3 do s = s + f32(csv_in[i][f + 1]) end
      local mean = f32(s / 4)
      for i = first, first + 3 do ss = ss + (f32(csv_in[i][f + 1]) - mean) ^ 2 end
      local inv = 1 / math.sqrt(ss / 4 + 1e-5)
      rm[f] = 0.5 * rm[f] + 0.5 * mean
      rinv[f] = 0.5 * rinv[f] + 0.5 * inv
    end
  end
  local rows = ok and csv_rows(out) or {}
  local good = #rows == 4
  for i = 1, 4 do
    for f = 1, 3 do
      local want = (f32(csv_in[i][f + 1]) - rm[f]) * rinv[f]
      local got = rows[i] and rows[i][f]
      good = good and got and math.abs(got - want) <= 1e-5 * math.max(1, math.abs(want))
    end
  end
  -- The same rows normalised by their own batch statistics would differ.
  local s = 0
  for i = 1, 4 do s = s + (rows[i] and rows[i][1] or 0) end
  local batchstat = math.abs(s) < 1e-4
  tap.ok(good and not batchstat, "kBM in kTest uses the running mean and inverse variance (momentum 0.5, 3 steps)", read(out))
end

-- Errors of kBM.
do
  local function bn(fields, src)
    local l = { name = "bn", type = "kBM", srclayer = src or "data" }
    for k, v in pairs(fields) do l[k] = v end
    return csv_job{ extra = { l }, fc_src = "bn" }
  end
  tap.ok(pcall(singa.train, bn{}), "kBM on a N x F input in a job")
  refuses({ "layer 'bn'", "momentum", "[0, 1]" }, "kBM: momentum 2", singa.train, bn{ momentum = 2 })
  refuses({ "layer 'bn'", "eps", "positive" }, "kBM: eps 0", singa.train, bn{ eps = 0 })
  refuses({ "layer 'bn'", "share_from" }, "kBM: running statistics cannot share_from", singa.train,
          bn{ param = { {}, {}, { share_from = "fc_weight" } } })
  refuses({ "layer 'bn'", "param 3 ('w') is trained by layer 'fc0'" }, "kBM: running statistics named as a trained param",
          singa.train, csv_job{ extra = {
            { name = "fc0", type = "kInnerProduct", srclayer = "data", num_output = 3, exclude = "kTest", param = { {}, { name = "w" } } },
            { name = "bn", type = "kBM", srclayer = "data", exclude = "kTrain", param = { {}, {}, { name = "w" } } } } })
  local img, lab = td.idx(dir .. "/idx", 16, 4)
  refuses({ "layer 'bn'", "N x F or N x C x H x W", "'data'", "4x8x8" }, "kBM on a 3-d input", singa.train, {
    train_steps = 1, updater = { type = "kSGD", learning_rate = { base_lr = 0.1 } },
    neuralnet = { layer = {
      { name = "data", type = "kIDXData", images = img, labels = lab, batchsize = 4 },
      { name = "bn", type = "kBM", srclayer = "data" },
      { name = "label", type = "kLabel", srclayer = "data" },
      { name = "fc", type = "kInnerProduct", srclayer = "bn", num_output = 4 },
      { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc", "label" } } } } })
end

---------------------------------------------------------------------------------------------
-- kRGBImage
local train_bin = cifar(dir .. "/train.bin", 60, 0, 11)
local train_bin2 = cifar(dir .. "/train2.bin", 20, 3, 12)
local test_bin = cifar(dir .. "/test.bin", 30, 5, 13)
local function cifar_bytes(path)
  local s = read(path)
  local recs = {}
  for i = 0, #s // 3073 - 1 do recs[#recs + 1] = s:sub(i * 3073 + 1, (i + 1) * 3073) end
  return recs
end
local train_recs = cifar_bytes(train_bin)

-- Test phase through kCSVOutput: label, then (pixel - mean) * scale, centre-cropped.
local function rgb_job(data, o)
  o = o or {}
  local test = { name = "data", type = "kRGBImage", exclude = "kTrain", path = test_bin, batchsize = 5 }
  for k, v in pairs(data) do test[k] = v end
  return {
    name = "rgb", seed = o.seed or 4, train_steps = o.steps or 1, test_steps = o.test_steps or 1, disp_freq = o.disp,
    test_freq = o.test_freq, checkpoint_freq = o.ckpt_freq, checkpoint_path = o.ckpt, resume = o.resume,
    num_openblas_threads = o.threads,
    updater = { type = "kSGD", momentum = 0.9, weight_decay = 1e-4, learning_rate = { base_lr = o.lr or 0.05 } },
    neuralnet = { layer = {
      { name = "data", type = "kRGBImage", exclude = "kTest", path = { train_bin, train_bin2 }, batchsize = 8,
        shuffle = true, cropsize = data.cropsize, mirror = data.mirror, scale = data.scale, mean = data.mean },
      test,
      { name = "label", type = "kLabel", srclayer = "data" },
      { name = "conv", type = "kConvolution", srclayer = "data", num_filters = 4, kernel = 3, stride = 2 },
      { name = "bn", type = "kBM", srclayer = "conv" },
      { name = "relu", type = "kReLU", srclayer = "bn" },
      { name = "pool", type = "kPooling", srclayer = "relu", pool = "AVG", kernel = 3, stride = 2 },
      { name = "ip", type = "kInnerProduct", srclayer = "pool", num_output = 10 },
      { name = "loss", type = "kSoftmaxLoss", srclayer = { "ip", "label" } },
      o.out and { name = "out", type = "kCSVOutput", srclayer = "data", path = o.out, exclude = "kTrain" } or nil,
    } },
  }
end

do
  local test_recs = cifar_bytes(test_bin)
  local out = dir .. "/rgb.csv"
  local function check(data, name, meanpix)
    local ok, msg = pcall(singa.train, rgb_job(data, { out = out }))
    if not ok then return tap.ok(false, name, msg) end
    local rows = csv_rows(out)
    local S, m = data.cropsize or 32, math.floor((32 - (data.cropsize or 32)) / 2)
    local good = #rows == 5
    for i = 1, 5 do
      local rec, row = test_recs[i], rows[i] or {}
      good = good and row[1] == rec:byte(1) and #row == 1 + 3 * S * S
      for c = 0, 2 do
        for y = 0, S - 1 do
          for x = 0, S - 1 do
            local k = (c * 32 + y + m) * 32 + x + m
            local mean = meanpix and meanpix[k + 1] or (data.mean or 0)
            local want = f32((rec:byte(2 + k) - f32(mean)) * f32(data.scale or 1))
            local got = row[2 + (c * S + y) * S + x]
            good = good and got and math.abs(got - want) <= 1e-6 * math.max(1, math.abs(want))
          end
        end
      end
    end
    return tap.ok(good, name)
  end
  check({}, "kRGBImage in kTest: the label, then the 3x32x32 pixels as floats")
  check({ mean = 100, scale = 0.01 }, "kRGBImage: (pixel - mean) * scale")
  check({ cropsize = 24, mirror = true, mean = 120.5 }, "kRGBImage in kTest: centre crop, no mirroring")
  -- A per-pixel mean file, as bytes and as floats.
  local mb, mf, meanpix = {}, {}, {}
  for k = 0, 3071 do
    meanpix[k + 1] = (k * 7) % 256
    mb[#mb + 1] = string.char(meanpix[k + 1])
    mf[#mf + 1] = string.pack("f", meanpix[k + 1])
  end
  write(dir .. "/mean-u8.bin", table.concat(mb))
  write(dir .. "/mean-f32.bin", table.concat(mf))
  check({ meanfile = dir .. "/mean-u8.bin" }, "kRGBImage: a per-pixel meanfile of 3072 bytes", meanpix)
  check({ meanfile = dir .. "/mean-f32.bin", cropsize = 30 }, "kRGBImage: a per-pixel meanfile of 3072 floats, cropped", meanpix)
end

-- kTrain: random crops and mirroring, each image some window of its record, from the generator.
do
  local function probe()
    return singa.forward({ name = "data", type = "kRGBImage", path = train_bin, batchsize = 24, cropsize = 28, mirror = true }, {})[1]
  end
  local out = probe()
  local found, offsets, flips, all = 0, {}, {}, true
  for i = 1, 24 do
    local rec, hit = train_recs[i], nil
    for y0 = 0, 4 do
      for x0 = 0, 4 do
        for _, flip in ipairs{ false, true } do
          local same = true
          for c = 0, 2 do
            for y = 0, 27, 9 do
              for x = 0, 27 do
                local sx = flip and 27 - x or x
                same = same and out[(i - 1) * 3 * 784 + (c * 28 + y) * 28 + x + 1] == rec:byte(2 + (c * 32 + y0 + y) * 32 + x0 + sx)
                if not same then break end
              end
              if not same then break end
            end
          end
          if same then hit = { y0, x0, flip } end
        end
      end
    end
    if hit then
      found = found + 1
      offsets[hit[1] * 10 + hit[2]] = true
      flips[hit[3]] = true
    else
      all = false
    end
  end
  local noffsets = 0
  for _ in pairs(offsets) do noffsets = noffsets + 1 end
  tap.ok(all and noffsets > 3 and flips[true] and flips[false],
         string.format("kRGBImage in kTrain: every image is a 28x28 window of its record, some mirrored (%d of 24 matched, %d offsets)",
                       found, noffsets))
  local again = probe()
  local same = #again == #out
  for i = 1, #out do same = same and again[i] == out[i] end
  tap.ok(same, "kRGBImage's random crops and flips repeat with the seed")
end

-- kRGBImage errors.
do
  write(dir .. "/short.bin", string.rep("\0", 3073 * 2 + 5))
  refuses({ "layer 'data' (kRGBImage)", "short.bin", "6151 bytes", "3073" }, "kRGBImage: a file that is not whole records",
          singa.train, rgb_job({ path = dir .. "/short.bin" }))
  refuses({ "layer 'data'", dir .. "/nope.bin", "No such file" }, "kRGBImage: a missing file", singa.train,
          rgb_job({ path = dir .. "/nope.bin" }))
  refuses({ "layer 'data'", "cropsize", "0..32" }, "kRGBImage: cropsize 33", singa.train, rgb_job({ cropsize = 33 }))
  refuses({ "layer 'data'", "'mean' or 'meanfile'" }, "kRGBImage: mean and meanfile together", singa.train,
          rgb_job({ mean = 1, meanfile = dir .. "/mean-u8.bin" }))
  write(dir .. "/mean-bad.bin", "abc")
  refuses({ "layer 'data'", "mean-bad.bin", "3 bytes", "3072" }, "kRGBImage: a meanfile of the wrong size", singa.train,
          rgb_job({ meanfile = dir .. "/mean-bad.bin" }))
  refuses({ "layer 'data'", "scale" }, "kRGBImage: scale 0", singa.train, rgb_job({ scale = 0 }))
  write(dir .. "/empty.bin", "")
  refuses({ "empty.bin", "0 bytes" }, "kRGBImage: an empty file", singa.train, rgb_job({ path = dir .. "/empty.bin" }))
end

---------------------------------------------------------------------------------------------
-- Checkpoints: kBM's running statistics are in them, and a resumed run (random crops, mirroring,
-- shuffling, running statistics) ends exactly where the uninterrupted one does.
for _, v in ipairs{
  { "kRGBImage + kBM", function(o) return rgb_job({ cropsize = 28, mirror = true, mean = 128, scale = 1 / 64 }, o) end },
  { "kCSVInput + kBM", function(o)
      local j = csv_job{ shuffle = true, skip = 5, test_batch = 4,
                         extra = { { name = "bn", type = "kBM", srclayer = "data" } }, fc_src = "bn" }
      j.train_steps, j.checkpoint_freq, j.checkpoint_path, j.resume = o.steps, o.ckpt_freq, o.ckpt, o.resume
      j.test_steps, j.test_freq = o.test_steps, o.test_freq
      return j
    end },
} do
  local name, make = v[1], v[2]
  local whole, part = dir .. "/whole", dir .. "/part"
  os.execute("rm -rf '" .. whole .. "' '" .. part .. "'")
  local ok, u = pcall(singa.train, make{ steps = 24, ckpt_freq = 8, ckpt = whole, test_steps = 2, test_freq = 10 })
  if not ok then tap.diag(u) end
  local c = read(ckpt(whole, 24)) or ""
  tap.ok(c:find("param/bn_running_mean", 1, true) and c:find("param/bn_running_invvar", 1, true)
         and c:find("updater/bn_scale/history", 1, true) and not c:find("updater/bn_running_mean", 1, true),
         name .. ": checkpoints hold the running statistics, without updater state")
  pcall(singa.train, make{ steps = 13, ckpt_freq = 8, ckpt = part, test_steps = 2, test_freq = 10 })
  local ok2, r = pcall(singa.train, make{ steps = 24, ckpt_freq = 8, ckpt = part, resume = true, test_steps = 2, test_freq = 10 })
  if not ok2 then tap.diag(r) end
  tap.ok(ok and ok2 and read(ckpt(part, 24)) == read(ckpt(whole, 24)) and u.train.loss == r.train.loss,
         name .. ": resumed from step 13, the final checkpoint and train loss are identical")
  tap.is(ok2 and string.format("%.17g", r.test.loss), ok and string.format("%.17g", u.test.loss),
         name .. ": the test after resuming (running statistics from the checkpoint) gives the same loss")
end

-- kBM's threads split channels: the same numbers come out.
do
  local function run(n) return singa.train(rgb_job({ mean = 128, scale = 1 / 64 }, { steps = 5, threads = n, test_steps = 1 })) end
  local a, b = run(1), run(2)
  tap.ok(math.abs(a.train.loss - b.train.loss) <= 1e-5 * math.abs(a.train.loss),
         string.format("2 threads train as 1 does with kBM (loss %.9g vs %.9g)", b.train.loss, a.train.loss))
end

-- A conv + kBM net learns the generated CIFAR classes.
do
  local ok, r = pcall(singa.train, rgb_job({ mean = 128, scale = 1 / 64 }, { steps = 150, lr = 0.1, disp = 10 }))
  tap.ok(ok and r.train.accuracy > 0.8, "conv + kBM learns the generated classes (train accuracy "
         .. tostring(ok and r.train.accuracy) .. ")", not ok and r or nil)
end

---------------------------------------------------------------------------------------------
-- demos/cifar10_cnn.lua
do
  local demo = os.getenv("top_srcdir") .. "/demos/cifar10_cnn.lua"
  local cif = dir .. "/cifar"
  os.execute("mkdir -p '" .. cif .. "'")
  local cmd = string.format("cd '%s' && CIFAR10_DIR= '%s' -e '%s' '%s/none' 2>&1; echo \"exit=$?\"", dir, os.getenv("SINGA_TUI"),
                            demo, cif)
  local p = io.popen(cmd)
  local text = p:read("a")
  p:close()
  tap.ok(not text:find("exit=0", 1, true) and text:find("none/data_batch_1.bin", 1, true)
         and text:find("CIFAR10_DIR", 1, true) and text:find("cifar-10-binary.tar.gz", 1, true),
         "without the data the demo says where to get it and where to put it, and exits non-zero", text)

  for i = 1, 5 do cifar(cif .. "/data_batch_" .. i .. ".bin", 40, i, 20 + i) end
  cifar(cif .. "/test_batch.bin", 50, 0, 30)
  -- Load the demo with its arguments, keep the job it builds, run it with fewer test steps.
  local job
  package.loaded.singa = setmetatable({ train = function(j) job = j
    return { steps = 0, seconds = 0, train = { loss = 0 }, test = { accuracy = 0 } } end }, { __index = singa })
  arg = { cif, "3", "1" }
  local ok, msg = pcall(dofile, demo)
  package.loaded.singa = singa
  tap.ok(ok and job and job.train_steps == 3, "the demo builds its job from the arguments", msg)
  if job then
    local L = job.neuralnet.layer
    tap.is(#L, 16, "the demo's net has SINGA's 16 layers (two data layers)")
    tap.is(L[1].path[5], cif .. "/data_batch_5.bin", "it trains on data_batch_1..5.bin of the directory given")
    job.test_steps, job.checkpoint_path, job.checkpoint_freq = 2, dir .. "/demo-ckpt", nil
    local ok2, r = pcall(singa.train, job)
    tap.ok(ok2 and r.steps == 3 and r.train.loss > 0 and r.test.accuracy, "the demo's net runs 3 steps and a test on the generated files",
           not ok2 and r or nil)
  end
end

if tap.failed == 0 then os.execute("rm -rf '" .. dir .. "'") end
tap.done()

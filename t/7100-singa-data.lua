-- SINGA's data files: DataShard (v0.1) and KVFile (v0.2-v0.3) records read by kShardData,
-- kRecordInput and kStoreInput, parsed by kMnist, kLabel and kRGBImage as in SINGA (with CIFAR's
-- image_mean.bin of both versions); kImagePreprocess; broken files refused with the file, the
-- record's key and the byte offset; the cursor through a checkpoint.  The files are written by
-- t/shard.lua, and cross-checked against ../shared/tools/singa_shard.py when it is there.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"
local sh = require "shard"
local read, write = td.read, td.write
local refuses = tap.raises

local dir = td.tmpdir("7100-singa-data")

local f32 = td.f32

local csv_rows = td.csv_rows

-- Images and labels of an IDX pair: rows of pixel values, labels.
local function idx_rows(images, labels)
  local s, l = sh.read_idx(images), sh.read_idx(labels)
  local _, n, h, w = string.unpack(">I4I4I4I4", s)
  local rows, classes = {}, {}
  for i = 1, n do
    local row, off = {}, 16 + (i - 1) * h * w
    for k = 1, h * w do row[k] = s:byte(off + k) end
    rows[i], classes[i] = row, l:byte(8 + i)
  end
  return rows, classes
end

-- A job whose kTest net writes `data` (label, then values) to out; the kTrain net learns on the
-- same layer.  `input` is the data layer (its name "data"); `parse` optional layers after it,
-- the last named "x".
local function job(input, o)
  o = o or {}
  local layers = {}
  for _, ph in ipairs{ "kTrain", "kTest" } do
    local l = { name = "data", exclude = ph == "kTrain" and "kTest" or "kTrain" }
    for k, v in pairs(input) do l[k] = v end
    if ph == "kTest" and o.test_batch then l.batchsize = o.test_batch end
    layers[#layers + 1] = l
  end
  local last = "data"
  for _, p in ipairs(o.parse or { { name = "x", type = "kMnist", srclayer = "data", norm_a = 255 } }) do
    layers[#layers + 1] = p
    last = p.name
  end
  for _, l in ipairs{
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "ip", type = "kInnerProduct", srclayer = last, num_output = o.classes or 10 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "ip", "label" } },
    o.out and { name = "out", type = "kCSVOutput", srclayer = o.out_src or "data", path = o.out, exclude = "kTrain" } or nil,
  } do layers[#layers + 1] = l end
  return {
    name = "singa-data", seed = o.seed or 5, train_steps = o.steps or 1, test_steps = o.test_steps or 1,
    checkpoint_path = o.ckpt, checkpoint_freq = o.ckpt_freq, resume = o.resume,
    updater = { type = "kSGD", momentum = 0.9, learning_rate = { base_lr = 0.01 } },
    neuralnet = { layer = layers },
  }
end

---------------------------------------------------------------------------------------------
-- Round trips: IDX -> v0.1 DataShard / v0.3 KVFile -> kShardData / kRecordInput / kStoreInput.
local img, lab = td.idx(dir .. "/small", 40, 4, 8, 8, 777)
local rows, classes = idx_rows(img, lab)
local v01 = sh.from_idx("v01", img, lab, dir .. "/small_shard")
local v03 = sh.from_idx("v03", img, lab, dir .. "/small_data.bin")
local v03dir = sh.from_idx("v01", img, lab, dir .. "/small_kv") -- a KVFile in a folder: same layout
sh.from_idx("v03", img, lab, dir .. "/small_kv/shard.dat")

local function same_as_idx(out, first, n, name)
  local got, good = csv_rows(out), true
  local why
  for i = 1, n do
    local k = (first + i - 2) % #rows + 1
    local r = got[i] or {}
    good = good and #r == 65 and r[1] == classes[k]
    for j = 1, 64 do good = good and r[1 + j] == rows[k][j] end
    if not good then why = string.format("row %d (record %d): %s", i, k, table.concat(r, ",", 1, math.min(#r, 6))); break end
  end
  return tap.ok(good and #got == n, name, why or ("rows: " .. #got))
end

for _, c in ipairs{
  { "kShardData over a v0.1 DataShard folder", { type = "kShardData", path = v01, batchsize = 8 } },
  { "kRecordInput over a v0.3 KVFile", { type = "kRecordInput", backend = "kvfile", path = v03, batchsize = 8 } },
  { "kRecordInput over a KVFile folder (shard.dat)", { type = "kRecordInput", path = v03dir, batchsize = 8, shape = { 8, 8 } } },
  { "kStoreInput over a v0.3 KVFile (batchsize a list of one, as v0.3's repeated field)",
    { type = "kStoreInput", path = v03, batchsize = { 8 }, prefetching = true } },
} do
  local out = dir .. "/rt.csv"
  local ok, msg = pcall(singa.train, job(c[2], { out = out, test_batch = 40, classes = 4 }))
  if ok then same_as_idx(out, 1, 40, c[1] .. ": the IDX file's labels and pixels, in order") else tap.ok(false, c[1], msg) end
end

-- kRecordInput's shape: the batch is batchsize x shape.
do
  local r = singa.forward({ name = "d", type = "kRecordInput", path = v03, batchsize = 3, shape = { 64 } }, {})
  tap.ok(#r[1] == 3 * 64 and r[1].shape[1] == 3 and r[1].shape[2] == 64 and #r[1].shape == 2,
         "kRecordInput with shape = {64}: a 3 x 64 batch")
  local r2 = singa.forward({ name = "d", type = "kShardData", path = v01, batchsize = 3 }, {})
  tap.ok(r2[1].shape[2] == 8 and r2[1].shape[3] == 8, "kShardData: batchsize x the records' shape (3 x 8 x 8)")
end

-- Float data, packed and one value per field, a packed shape, a negative-free label, v0.1 wrapper.
do
  local vals = { 0.5, -1.25, 3e-3, 1e6, -0, 7 }
  local list = {
    { "a", sh.record{ shape = { 2, 3 }, label = 1, data = vals } },
    { "b", sh.v01(sh.record{ shape = { 2, 3 }, label = 2, data = vals, unpacked = true, packed_shape = true }) },
  }
  sh.write("v03", dir .. "/floats.bin", list)
  local r = singa.forward({ name = "d", type = "kRecordInput", path = dir .. "/floats.bin", batchsize = 2 }, {})[1]
  local good = #r == 12
  for i = 1, 12 do good = good and r[i] == f32(vals[(i - 1) % 6 + 1]) end
  tap.ok(good, "float data records: packed and unpacked `data`, a packed shape, with and without the v0.1 wrapper")
end

-- v0.3 normalisation: (x - mean) / std, from values and from KVFiles of one record.
do
  local mean, std = {}, {}
  for k = 1, 64 do mean[k], std[k] = k, 1 + k / 64 end
  sh.write("v03", dir .. "/mean.bin", { { "mean", sh.record{ shape = { 8, 8 }, data = mean } } })
  sh.write("v03", dir .. "/std.bin", { { "std", sh.record{ shape = { 8, 8 }, data = std } } })
  local function probe(extra)
    local l = { name = "d", type = "kRecordInput", path = v03, batchsize = 2 }
    for k, v in pairs(extra) do l[k] = v end
    return singa.forward(l, {})[1]
  end
  local a = probe{ mean_value = 100, std_value = 4 }
  local b = probe{ mean_file = dir .. "/mean.bin", std_file = dir .. "/std.bin" }
  local ga, gb = true, true
  for i = 1, 2 do
    for k = 1, 64 do
      local x = rows[i][k]
      ga = ga and a[(i - 1) * 64 + k] == f32(f32(x - 100) / 4)
      gb = gb and math.abs(b[(i - 1) * 64 + k] - (x - k) / f32(1 + k / 64)) < 1e-4
    end
  end
  tap.ok(ga, "kRecordInput: mean_value and std_value give (x - mean) / std")
  tap.ok(gb, "kRecordInput: mean_file and std_file (KVFiles of one record) per value")
  refuses({ "layer 'd' (kRecordInput)", "mean_file", "mean.bin", "64" }, "a mean_file of the wrong size is refused",
          singa.forward, { name = "d", type = "kRecordInput", path = dir .. "/floats.bin", batchsize = 1,
                           mean_file = dir .. "/mean.bin" }, {})
  refuses({ "std_value", "non-zero" }, "std_value 0 is refused", probe, { std_value = 0 })
  refuses({ "layer 'label' (kLabel)", "no labels" }, "has_label = false: no labels for kLabel", singa.train,
          job({ type = "kRecordInput", path = v03, batchsize = 8, has_label = false }, { classes = 4 }))
end

---------------------------------------------------------------------------------------------
-- store_conf's fields that select what is not here are refused by name.
for _, c in ipairs{
  { { backend = "lmdb" }, { "backend \"lmdb\"", "kvfile" }, "backend lmdb" },
  { { backend = "textfile" }, { "kCSVInput" }, "backend textfile points to kCSVInput" },
  { { encoded = true }, { "encoded", "raw `pixel`" }, "encoded records" },
  { { separator = ";" }, { "separator", "textfile" }, "a separator" },
  { { mean_file = "x", mean_value = 1 }, { "mean_file", "mean_value", "not both" }, "mean_file and mean_value" },
  { { shape = { 9, 9 } }, { "field 'shape' holds 81 values", "'00000000'", "hold 64" }, "a shape the records do not have" },
  { { batchsize = { 4, 2 } }, { "'batchsize' lists 2 sizes", "give one" }, "several batch sizes (SINGA's per worker)" },
  { { batchsize = 2.5 }, { "'batchsize' must be a positive integer" }, "a batch size of 2.5" },
} do
  local l = { name = "d", type = "kRecordInput", path = v03, batchsize = 4 }
  for k, v in pairs(c[1]) do l[k] = v end
  refuses(c[2], "kRecordInput: " .. c[3] .. " is refused", singa.forward, l, {})
end
refuses({ "unknown field 'shuffle'" }, "kShardData has SINGA's fields only (no shuffle)",
        singa.forward, { name = "d", type = "kShardData", path = v01, batchsize = 4, shuffle = true }, {})

refuses({ "layer 'x' (kMnist)", "'sigma'", "never applied" }, "kMnist refuses SINGA's unused elastic distortion fields",
        singa.train, job({ type = "kShardData", path = v01, batchsize = 4 }, { classes = 4, parse = {
          { name = "x", type = "kMnist", srclayer = "data", norm_a = 255, sigma = 6, kernel = 0 } } }))
tap.ok(pcall(singa.train, job({ type = "kShardData", path = v01, batchsize = 4 }, { classes = 4, parse = {
         { name = "x", type = "kMnist", srclayer = "data", norm_a = 255, kernel = 0, elastic_freq = 0 } } })),
       "kMnist accepts them at SINGA's default 0")

---------------------------------------------------------------------------------------------
-- Broken files: the file, the record's key, the byte offset.
do
  local good = read(v03)
  local rec_len = #good // 40 -- every record of the small set is as long
  local function bad(name, bytes, want, what)
    local p = dir .. "/" .. name
    write(p, bytes)
    refuses(want, what, singa.forward, { name = "d", type = "kRecordInput", path = p, batchsize = 4 }, {})
  end
  refuses({ "layer 'd' (kShardData)", "no_such_shard/shard.dat", "No such file" }, "a missing DataShard names its shard.dat",
          singa.forward, { name = "d", type = "kShardData", path = dir .. "/no_such_shard", batchsize = 4 }, {})
  os.execute("mkdir -p '" .. dir .. "/no_such_shard'")
  refuses({ "no_such_shard/shard.dat" }, "a DataShard folder without shard.dat names it", singa.forward,
          { name = "d", type = "kShardData", path = dir .. "/no_such_shard", batchsize = 4 }, {})
  bad("trunc.bin", good:sub(1, #good - 10), { "trunc.bin", "tuple 40", "key '00000039'", "byte offset " .. 39 * rec_len,
      "value runs past the end" }, "a truncated last record: file, key and offset")
  bad("trunc2.bin", good:sub(1, 39 * rec_len + 12), { "trunc2.bin", "tuple 40", "after key '00000038'", "key runs past" },
      "a tuple cut inside its key names the key before it")
  local broken = good:sub(1, 5 * rec_len) .. string.pack("<I8", 8) .. "00000005" .. string.pack("<I8", 4) .. "\x0a\x09\x00\x00"
  bad("garbage.bin", broken, { "garbage.bin", "record 6", "key '00000005'", "byte offset " .. 5 * rec_len, "does not parse",
      "length 9 runs past" }, "a record that does not parse: file, key and offsets")
  local other = sh.tuples{ { "00000007", sh.record{ shape = { 4, 16 }, label = 1, pixel = string.rep("\1", 64) } } }
  bad("shapes.bin", good:sub(1, 7 * rec_len) .. other, { "shapes.bin", "record 8", "key '00000007'", "4x16",
      "first record (key '00000000') has 8x8", "byte offset " .. 7 * rec_len }, "a record of another shape: file, key and offset")
  local both = sh.tuples{ { "k1", sh.record{ shape = { 2 }, pixel = "\1\2", data = { 1, 2 } } } }
  bad("both.bin", both, { "both.bin", "key 'k1'", "both pixel bytes and float data" }, "a record with pixel and data")
  local short = sh.tuples{ { "k2", sh.record{ shape = { 3, 3 }, pixel = "\1\2" } } }
  bad("short.bin", short, { "key 'k2'", "shape 3x3 holds 9 values but the record has 2 pixel bytes" },
      "a record whose shape does not hold its pixels")
  local wire = sh.tuples{ { "k3", "\x0b\x01" } }
  bad("wire.bin", wire, { "key 'k3'", "byte offset 18", "wire type 3" }, "a group (wire type 3) is refused with its offset")
  bad("empty.bin", "", { "empty.bin", "holds no records" }, "an empty KVFile")
  local neg = sh.tuples{ { "n", sh.record{ shape = { 1 }, label = -3, pixel = "\1" } } }
  write(dir .. "/neg.bin", neg)
  refuses({ "neg.bin", "record 1", "label -3 is not a class index" }, "a negative label (10-byte varint) is named",
          singa.train, job({ type = "kRecordInput", path = dir .. "/neg.bin", batchsize = 1 }, { classes = 4 }))
end

-- Every cut of a record and random corruptions: each file loads or is refused with the key and
-- an offset, never read past its end (the suite runs this under ASan too).
do
  local rec = sh.v01(sh.record{ shape = { 2, 3 }, label = 300, data = { 1, 2, 3, 4, 5, 6 } })
  local p, bad, cuts = dir .. "/fuzz.bin", {}, 0
  local function try(value, what)
    write(p, sh.tuples{ { "kk", value } })
    local ok, msg = pcall(singa.forward, { name = "d", type = "kRecordInput", path = p, batchsize = 1 }, {})
    if not ok and not (tostring(msg):find("key 'kk'", 1, true) and tostring(msg):find("byte offset", 1, true)) then
      bad[#bad + 1] = what .. ": " .. tostring(msg)
    end
    return ok
  end
  for n = 0, #rec - 1 do
    if not try(rec:sub(1, n), "cut at " .. n) then cuts = cuts + 1 end
  end
  local rng = 4242
  for i = 1, 300 do
    local b = { rec:byte(1, -1) }
    for _ = 1, 1 + i % 3 do
      rng = (rng * 1103515245 + 12345) % 2147483648
      b[rng % #b + 1] = (rng >> 8) % 256
    end
    try(string.char(table.unpack(b)), "corruption " .. i)
  end
  tap.ok(#bad == 0 and cuts >= #rec - 2, string.format("%d cuts of a %d-byte record (%d refused) and 300 corruptions: " ..
         "each loads or is refused naming the key and an offset", #rec, #rec, cuts), bad[1])
end

---------------------------------------------------------------------------------------------
-- CIFAR-format shards: kRGBImage as SINGA's parser, with image_mean.bin of v0.1 and v0.3.
local function cifar_list(n, seed, wrap)
  local rng, list, recs = seed, {}, {}
  for i = 0, n - 1 do
    local px = {}
    for k = 1, 3072 do
      rng = (rng * 1103515245 + 12345) % 2147483648
      px[k] = string.char(rng // 8388608)
    end
    local label = i % 10
    recs[i + 1] = { label = label, px = table.concat(px) }
    local r = sh.record{ shape = { 3, 32, 32 }, label = label, pixel = recs[i + 1].px }
    list[i + 1] = { string.format("%05d", i), wrap and sh.v01(r) or r }
  end
  return list, recs
end
do
  local list01, recs = cifar_list(12, 31, true)
  local list03 = cifar_list(12, 31, false)
  local c01 = sh.write("v01", dir .. "/cifar_shard", list01)
  local c03 = sh.write("v03", dir .. "/cifar_data.bin", list03)
  local mean = {}
  for k = 1, 3072 do mean[k] = (k * 37 % 251) + 0.25 end
  local mrec = sh.record{ shape = { 3, 32, 32 }, data = mean }
  write(dir .. "/image_mean_v01.bin", mrec)
  sh.write("v03", dir .. "/image_mean_v03.bin", { { "mean", mrec } })
  for _, c in ipairs{
    { "v0.1", { type = "kShardData", path = c01, batchsize = 4 }, dir .. "/image_mean_v01.bin" },
    { "v0.3", { type = "kRecordInput", path = c03, batchsize = 4 }, dir .. "/image_mean_v03.bin" },
  } do
    local out = dir .. "/rgb.csv"
    local S, m = 28, 2
    local ok, msg = pcall(singa.train, job(c[2], { out = out, out_src = "x", test_batch = 12, parse = {
      { name = "x", type = "kRGBImage", srclayer = "data", meanfile = c[3], cropsize = S, mirror = true, scale = 0.5 } } }))
    if not ok then
      tap.ok(false, "kRGBImage over a " .. c[1] .. " shard", msg)
    else
      local got, good = csv_rows(out), true
      for i = 1, 12 do
        local row = got[i] or {}
        good = good and #row == 3 * S * S
        for ch = 0, 2 do
          for y = 0, S - 1 do
            for x = 0, S - 1, 3 do
              local k = (ch * 32 + y + m) * 32 + x + m
              local want = f32(f32(recs[i].px:byte(k + 1) - f32(mean[k + 1])) * 0.5)
              good = good and row[(ch * S + y) * S + x + 1] == want
            end
          end
        end
      end
      tap.ok(good, "kRGBImage parses a " .. c[1] .. " CIFAR shard with a " .. c[1] ..
             " image_mean.bin: (pixel - mean) * scale, centre crop in kTest")
    end
  end
  -- kTrain: random windows, some mirrored, repeating with the seed; the parser has no cursor of
  -- its own and is not singa.predict's input.
  local function probe()
    local r = singa.train(job({ type = "kShardData", path = c01, batchsize = 4 }, { steps = 2, parse = {
      { name = "x", type = "kRGBImage", srclayer = "data", cropsize = 24, mirror = true } } }))
    return r.train.loss
  end
  local l1, l2 = probe(), probe()
  tap.ok(l1 == l2 and l1 == l1, string.format("kRGBImage over a shard trains and repeats with the seed (loss %s)", l1))
  do -- singa.predict feeds the shard layer: rows of 3072 pixels, which kRGBImage then parses
    local j = job({ type = "kShardData", path = c01, batchsize = 4 }, { steps = 2, ckpt = dir .. "/rgbpred", parse = {
      { name = "x", type = "kRGBImage", srclayer = "data", cropsize = 24, meanfile = dir .. "/image_mean_v01.bin" } } })
    os.execute("rm -rf '" .. dir .. "/rgbpred'")
    singa.train(j)
    local px = {}
    for k = 1, 3072 do px[k] = recs[1].px:byte(k) end
    local ok, probs = pcall(singa.predict, j, { px, px })
    local sum = 0
    for k = 1, 10 do sum = sum + (ok and probs[1][k] or 0) end
    tap.ok(ok and #probs == 2 and math.abs(sum - 1) < 1e-5 and probs[1][3] == probs[2][3],
           "singa.predict over kShardData + kRGBImage: rows of 3072 pixels give class probabilities", not ok and probs or nil)
  end
  refuses({ "layer 'x' (kRGBImage)", "'batchsize' belongs to the source layer 'data'" },
          "kRGBImage as a parser refuses the input fields", singa.train, job({ type = "kShardData", path = c01, batchsize = 4 },
          { parse = { { name = "x", type = "kRGBImage", srclayer = "data", batchsize = 4 } } }))
  local small = {}
  for k = 1, 768 do small[k] = k end
  sh.write("v03", dir .. "/mean16.bin", { { "mean", sh.record{ shape = { 3, 16, 16 }, data = small } } })
  refuses({ "layer 'x' (kRGBImage)", "mean16.bin", "holds 768 values; want 3072" }, "a meanfile of the wrong shape is refused",
          singa.train, job({ type = "kShardData", path = c01, batchsize = 4 }, { parse = {
            { name = "x", type = "kRGBImage", srclayer = "data", meanfile = dir .. "/mean16.bin" } } }))
  refuses({ "layer 'x' (kRGBImage)", "2-dimensional records", "C x H x W" }, "kRGBImage refuses to parse records that are no images",
          singa.train, job({ type = "kShardData", path = v01, batchsize = 4 }, { classes = 4, parse = {
            { name = "x", type = "kRGBImage", srclayer = "data" } } }))
end

---------------------------------------------------------------------------------------------
-- kImagePreprocess: any size, random windows and mirroring in kTrain, the centre in kTest.
do
  local data = {}
  for i = 1, 2 * 3 * 12 * 10 do data[i] = i end
  local r = singa.forward({ name = "p", type = "kImagePreprocess", cropsize = 8, scale = 2 }, { { shape = { 2, 3, 12, 10 }, data = data } })[1]
  tap.ok(#r.shape == 4 and r.shape[1] == 2 and r.shape[2] == 3 and r.shape[3] == 8 and r.shape[4] == 8,
         "kImagePreprocess: 2x3x12x10 cropped to 2x3x8x8")
  local found = 0
  for b = 0, 1 do
    for y0 = 0, 4 do
      for x0 = 0, 2 do
        local same = true
        for ch = 0, 2 do
          for y = 0, 7 do
            for x = 0, 7 do
              same = same and r[((b * 3 + ch) * 8 + y) * 8 + x + 1] == 2 * data[((b * 3 + ch) * 12 + y0 + y) * 10 + x0 + x + 1]
            end
          end
        end
        if same then found = found + 1 end
      end
    end
  end
  tap.is(found, 2, "kImagePreprocess in kTrain: each image a window of its source, times scale")
  local big = singa.forward({ name = "p", type = "kImagePreprocess", cropsize = 227, mirror = true },
                            { { shape = { 1, 3, 256, 256 } } })[1]
  tap.ok(big.shape[3] == 227 and big.shape[4] == 227, "kImagePreprocess: AlexNet's 227 x 227 crop of 256 x 256 images")
  -- Mirroring: with a crop the size of the image, every output is its input or its mirror image,
  -- and over 16 images both occur.
  local flat = {}
  for i = 1, 16 * 4 do flat[i] = i end
  local m = singa.forward({ name = "p", type = "kImagePreprocess", mirror = true }, { { shape = { 16, 1, 2, 2 }, data = flat } })[1]
  local plain, flipped = 0, 0
  for b = 0, 15 do
    local o = { m[4 * b + 1], m[4 * b + 2], m[4 * b + 3], m[4 * b + 4] }
    local i = { flat[4 * b + 1], flat[4 * b + 2], flat[4 * b + 3], flat[4 * b + 4] }
    if o[1] == i[1] and o[2] == i[2] and o[3] == i[3] and o[4] == i[4] then plain = plain + 1
    elseif o[1] == i[2] and o[2] == i[1] and o[3] == i[4] and o[4] == i[3] then flipped = flipped + 1 end
  end
  tap.ok(plain + flipped == 16 and plain > 0 and flipped > 0,
         string.format("kImagePreprocess mirror: %d unchanged, %d flipped left-right", plain, flipped))
  -- kTest: the centre window, never mirrored (through a job over the CIFAR shard).
  local list, recs = cifar_list(4, 7, false)
  local p = sh.write("v03", dir .. "/pre.bin", list)
  local out = dir .. "/pre.csv"
  local ok, msg = pcall(singa.train, job({ type = "kRecordInput", path = p, batchsize = 4 }, { out = out, out_src = "x", parse = {
    { name = "x", type = "kImagePreprocess", srclayer = "data", cropsize = 30, mirror = true, scale = 0.25 } } }))
  local good = ok
  local got = ok and csv_rows(out) or {}
  for i = 1, 4 do
    for ch = 0, 2 do
      for y = 0, 29 do
        for x = 0, 29 do
          local k = (ch * 32 + y + 1) * 32 + x + 1
          good = good and (got[i] or {})[(ch * 30 + y) * 30 + x + 1] == recs[i].px:byte(k + 1) * 0.25
        end
      end
    end
  end
  tap.ok(good, "kImagePreprocess in kTest: the centre 30x30 window, unmirrored, times scale", msg)
  tap.ok(ok, "kImagePreprocess in a trained net: no gradient is asked of it")
  refuses({ "layer 'p' (kImagePreprocess)", "12 x 10", "cropsize" }, "kImagePreprocess: a non-square image needs cropsize",
          singa.forward, { name = "p", type = "kImagePreprocess" }, { { shape = { 1, 1, 12, 10 } } })
  refuses({ "cropsize", "0..10" }, "kImagePreprocess: a crop larger than the image", singa.forward,
          { name = "p", type = "kImagePreprocess", cropsize = 11 }, { { shape = { 1, 1, 12, 10 } } })
  refuses({ "meanfile", "kRecordInput's mean_file" }, "kImagePreprocess refuses meanfile, saying where the mean goes",
          singa.forward, { name = "p", type = "kImagePreprocess", meanfile = "m" }, { { shape = { 1, 1, 4, 4 } } })
end

---------------------------------------------------------------------------------------------
-- The cursor: a resumed job continues the same sequence of records (random_skip included).
do
  local function run(steps, ckpt, resume)
    return singa.train(job({ type = "kShardData", path = v01, batchsize = 6, random_skip = 5 },
                           { classes = 4, steps = steps, ckpt = ckpt, ckpt_freq = 3, resume = resume, test_steps = 0 }))
  end
  os.execute("rm -rf '" .. dir .. "/ck1' '" .. dir .. "/ck2'")
  local whole = run(10, dir .. "/ck1")
  run(5, dir .. "/ck2")
  local resumed = run(10, dir .. "/ck2", true)
  local same = true
  for name, t in pairs(whole.params) do
    local a, b = t:totable(), resumed.params[name]:totable()
    local function eq(x, y)
      if type(x) == "table" then
        for i = 1, #x do if not eq(x[i], y[i]) then return false end end
        return #x == #y
      end
      return x == y
    end
    same = same and eq(a, b)
  end
  tap.ok(same, "a job over kShardData resumed from step 5 ends with the very params of one that ran through")
end

-- A group of 2 workers: each reads its half of every batch, as for kIDXData (the same losses).
do
  local function run(input)
    local layers = {
      input,
      { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
      { name = "label", type = "kLabel", srclayer = "data" },
      { name = "fc", type = "kInnerProduct", srclayer = "image", num_output = 4 },
      { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc", "label" } },
    }
    return singa.train{ name = "group", seed = 2, train_steps = 4, cluster = { nworkers_per_group = 2 },
      updater = { type = "kSGD", learning_rate = { base_lr = 0.05 } }, neuralnet = { partition_dim = 0, layer = layers } }
  end
  local a = run{ name = "data", type = "kIDXData", images = img, labels = lab, batchsize = 8, random_skip = 3 }
  local b = run{ name = "data", type = "kShardData", path = v01, batchsize = 8, random_skip = 3 }
  tap.ok(a.train.loss == b.train.loss, string.format("a group of 2 workers over kShardData: kIDXData's loss (%s, %s)",
                                                      a.train.loss, b.train.loss))
end

-- Labels beyond the classes: the loss layer names the shard and the record.
do
  local list = {}
  for i = 0, 5 do list[i + 1] = { string.format("%08d", i), sh.record{ shape = { 2, 2 }, label = i == 4 and 15 or 1, pixel = "\1\2\3\4" } } end
  sh.write("v03", dir .. "/labels.bin", list)
  refuses({ "label 15", "record 5 of file '" .. dir .. "/labels.bin'", "4 classes" },
          "a label beyond the classes names the shard's record", singa.train,
          job({ type = "kRecordInput", path = dir .. "/labels.bin", batchsize = 2 }, { classes = 4, parse = {} }))
end

---------------------------------------------------------------------------------------------
-- singa.predict over a net whose input layer is kShardData: one record per row, pixels.
do
  local j = job({ type = "kShardData", path = v01, batchsize = 8 }, { classes = 4, steps = 30, ckpt = dir .. "/pred" })
  os.execute("rm -rf '" .. dir .. "/pred'")
  singa.train(j)
  local probs = singa.predict(j, { rows[1], rows[2], rows[3] })
  local right = 0
  for i = 1, 3 do
    local best = 1
    for k = 2, 4 do if probs[i][k] > probs[i][best] then best = k end end
    if best - 1 == classes[i] then right = right + 1 end
  end
  tap.ok(#probs == 3 and #probs[1] == 4 and right >= 2, string.format("singa.predict on a kShardData net (%d of 3 right)", right))
end

---------------------------------------------------------------------------------------------
-- Fashion-MNIST: shards made from the IDX files read back to the same images and labels, and an
-- MLP on kShardData loses exactly what it loses on kIDXData, step by step.
local fm = os.getenv("FMNIST_DIR") or "/usr/share/datasets/fashion-mnist/"
local fimg, flab = fm .. "/t10k-images-idx3-ubyte.gz", fm .. "/t10k-labels-idx1-ubyte.gz"
if not read(fimg) or not read(flab) then
  tap.diag("Fashion-MNIST is not in " .. fm .. " (set FMNIST_DIR): its checks are skipped")
else
  local fv01 = sh.from_idx("v01", fimg, flab, dir .. "/fmnist_shard")
  local fv03 = sh.from_idx("v03", fimg, flab, dir .. "/fmnist_data.bin")
  local function mlp(input, steps)
    local layers = {
      input,
      { name = "image", type = "kMnist", srclayer = "data", norm_a = 127.5, norm_b = 1 },
      { name = "label", type = "kLabel", srclayer = "data" },
      { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 32 },
      { name = "act", type = "kSTanh", srclayer = "fc1" },
      { name = "fc2", type = "kInnerProduct", srclayer = "act", num_output = 10 },
      { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc2", "label" } },
    }
    return singa.train{ name = "fmnist", seed = 9, train_steps = steps,
      updater = { type = "kSGD", momentum = 0.9, learning_rate = { base_lr = 0.01 } }, neuralnet = { layer = layers } }
  end
  local inputs = {
    idx = { name = "data", type = "kIDXData", images = fimg, labels = flab, batchsize = 64 },
    v01 = { name = "data", type = "kShardData", path = fv01, batchsize = 64 },
    v03 = { name = "data", type = "kRecordInput", path = fv03, batchsize = 64, shape = { 28, 28 } },
  }
  local same, losses = true, {}
  for steps = 1, 3 do
    local want = mlp(inputs.idx, steps).train.loss
    losses[#losses + 1] = string.format("%.6f", want)
    for _, v in ipairs{ "v01", "v03" } do same = same and mlp(inputs[v], steps).train.loss == want end
  end
  tap.ok(same, "an MLP on Fashion-MNIST: kShardData and kRecordInput give the very losses of kIDXData (" ..
         table.concat(losses, ", ") .. ")")

  -- ../shared/tools/singa_shard.py: its shards are the ones t/shard.lua writes, byte for byte,
  -- and read back to the IDX files' images and labels.
  local shared = os.getenv("SINGA_SHARED") or (os.getenv("top_srcdir") or ".") .. "/../shared"
  local tool = shared .. "/tools/singa_shard.py"
  if not read(tool) then
    tap.diag("no " .. tool .. " (set SINGA_SHARED): the cross-check with SINGA's format description is skipped")
  else
    local frows, fclasses = idx_rows(fimg, flab)
    for _, c in ipairs{ { "v01", dir .. "/py_shard", fv01 .. "/shard.dat", "/shard.dat", "kShardData" },
                        { "v03", dir .. "/py_data.bin", fv03, "", "kRecordInput" } } do
      local rc = os.execute(string.format("/usr/bin/python3 '%s' create %s '%s' '%s' '%s' > /dev/null", tool, c[1], fimg,
                                          flab, c[2]))
      tap.ok(rc and read(c[2] .. c[4]) == read(c[3]), "singa_shard.py create " .. c[1] .. " writes the very bytes t/shard.lua does")
      local out = dir .. "/fm.csv"
      local ok, msg = pcall(singa.train, job({ type = c[5], path = c[2], batchsize = 64 },
                                             { out = out, test_batch = 500, classes = 10 }))
      local good, got = ok, ok and csv_rows(out) or {}
      for i = 1, 500 do
        local r = got[i] or {}
        good = good and r[1] == fclasses[i] and #r == 785
        for k = 1, 784, 7 do good = good and r[1 + k] == frows[i][k] end
      end
      tap.ok(good, "singa_shard.py's " .. c[1] .. " Fashion-MNIST shard read by " .. c[5] ..
             ": the IDX file's first 500 images and labels", msg)
    end
    local m = {}
    for k = 1, 3072 do m[k] = k / 8 end
    write(dir .. "/pymean.bin", sh.record{ shape = { 3, 32, 32 }, data = m })
    os.execute(string.format("/usr/bin/python3 '%s' mean v01 '%s' '%s' > /dev/null", tool, dir .. "/pymean.bin",
                             dir .. "/pymean.f32"))
    local f = read(dir .. "/pymean.f32") or ""
    local good = #f == 3072 * 4
    for k = 1, 3072, 97 do good = good and string.unpack("=f", f, 4 * k - 3) == m[k] end
    tap.ok(good, "singa_shard.py reads t/shard.lua's image_mean.bin back to its means")
  end
end

tap.done()

-- singa.read_idx and singa.read_csv: data files as tensors, read as the input layers read them,
-- so singa.predict can be fed from a file; bad files and options are refused naming the culprit.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"

local dir = td.tmpdir("4310-read-data")
local img, lab = td.idx(dir, 30, 3, 4, 5, 777)
local raw = td.read(img)

-- read_idx: the file's shape, the values as bytes, kMnist's normalisation.
local x = singa.read_idx(img)
tap.is(table.concat(x:shape(), "x"), "30x4x5", "read_idx: images keep their shape (N x H x W)")
local same = true
for i = 1, #x do same = same and x[i] == raw:byte(16 + i) end
tap.ok(same, "read_idx: every element is the file's byte")
local y = singa.read_idx(lab)
tap.is(table.concat(y:shape(), "x"), "30", "read_idx: labels are one value per record")
tap.ok(y[1] == 0 and y[2] == 1 and y[3] == 2 and y[30] == 2, "read_idx: the labels' values")
local z = singa.read_idx(img, { norm_a = 255, norm_b = 0.5 })
tap.near(z[7], raw:byte(16 + 7) / 255 - 0.5, 1e-6, "read_idx: norm_a and norm_b as kMnist applies them")
os.execute("gzip -kf '" .. img .. "'")
tap.is(singa.read_idx(img .. ".gz")[11], x[11], "read_idx: a gzip'd file reads the same")

tap.raises({ "singa.read_idx", dir .. "/none", "No such file" }, "read_idx: a missing file is named",
           singa.read_idx, dir .. "/none")
td.write(dir .. "/text", "hello, world\n")
tap.raises({ "singa.read_idx: file '" .. dir .. "/text': not an IDX file" }, "read_idx: a file that is no IDX file",
           singa.read_idx, dir .. "/text")
td.write(dir .. "/short", raw:sub(1, 100))
tap.raises({ "file '" .. dir .. "/short'", "expected 30 records of 20 bytes" }, "read_idx: a truncated file",
           singa.read_idx, dir .. "/short")
tap.raises("did you mean 'norm_a'", "read_idx: an unknown option", singa.read_idx, img, { norma = 255 })
tap.raises("option 'norm_a' must not be 0", "read_idx: norm_a = 0", singa.read_idx, img, { norm_a = 0 })

-- read_csv: features and labels, a header, the label's column, separators.
local csv = dir .. "/d.csv"
td.write(csv, "label,a,b\n1,0.5,2\n0,1.5,-3\n\n2,7,8e1\n")
tap.raises({ "file '" .. csv .. "' line 1, column 1: 'label' is not a finite number" },
           "read_csv: a header is refused unless header = true", singa.read_csv, csv)
local f, l = singa.read_csv(csv, { header = true })
tap.is(table.concat(f:shape(), "x") .. " " .. table.concat(l:shape(), "x"), "3x2 3",
       "read_csv: features rows x columns and one label per row (label in column 1 by default)")
tap.ok(f[1] == 0.5 and f[2] == 2 and f[5] == 7 and f[6] == 80 and l[1] == 1 and l[2] == 0 and l[3] == 2,
       "read_csv: the values, blank lines skipped")
f, l = singa.read_csv(csv, { header = true, label = -1 })
tap.ok(f[1] == 1 and f[2] == 0.5 and l[1] == 2 and l[3] == 80, "read_csv: label = -1 is the last column")
local only, none = singa.read_csv(csv, { header = true, label = false })
tap.ok(#only == 9 and none == nil, "read_csv: label = false returns features only")
td.write(dir .. "/t.tsv", "1\t2\n3\t4\n")
f, l = singa.read_csv(dir .. "/t.tsv", { separator = "\t", label = 2 })
tap.ok(f[1] == 1 and f[2] == 3 and l[2] == 4, "read_csv: another separator and label column")

td.write(dir .. "/bad.csv", "1,2,3\n4,5\n")
tap.raises("file '" .. dir .. "/bad.csv' line 2 has 2 columns but line 1 has 3", "read_csv: a ragged row is named",
           singa.read_csv, dir .. "/bad.csv")
tap.raises("no column 4 for the label", "read_csv: a label column beyond the file",
           singa.read_csv, csv, { header = true, label = 4 })
tap.raises("did you mean 'header'", "read_csv: an unknown option", singa.read_csv, csv, { headers = true })
tap.raises("option 'separator' must be one character", "read_csv: a bad separator",
           singa.read_csv, csv, { separator = "--" })
tap.raises({ "singa.read_csv", dir .. "/none.csv" }, "read_csv: a missing file is named", singa.read_csv, dir .. "/none.csv")

-- singa.predict fed straight from the files gives what it gives for rows read by hand.
local job = {
  name = "read", seed = 3, train_steps = 20, checkpoint_path = dir .. "/ckpt",
  updater = { type = "kSGD", learning_rate = { base_lr = 0.05 } },
  neuralnet = { layer = {
    { name = "data", type = "kIDXData", batchsize = 10, images = img, labels = lab },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "fc", type = "kInnerProduct", srclayer = "image", num_output = 3 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc", "label" } },
  } },
}
singa.train(job)
local p = singa.predict(job, singa.read_idx(img))
local rows = {}
for i = 1, 30 do
  rows[i] = {}
  for k = 1, 20 do rows[i][k] = raw:byte(16 + (i - 1) * 20 + k) end
end
local q = singa.predict(job, rows)
local agree = #p == 90
for i = 1, 30 do for c = 1, 3 do agree = agree and p[(i - 1) * 3 + c] == q[i][c] end end
tap.ok(agree, "singa.predict(job, singa.read_idx(images)) equals predicting the rows read by hand")

tap.done()

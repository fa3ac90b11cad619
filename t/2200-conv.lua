-- Convolution and pooling: gradient checks over strides, padding and rectangular kernels, and
-- forward values against a direct computation.
local singa = require "singa"
local tap = require "tap"

local TOL = 2e-2
local function check(name, layer, shape)
  layer.name = "l"
  local err, worst, checked = singa.gradcheck(layer, { { shape = shape } })
  tap.ok(err < TOL and checked > 0, string.format("%s: max relative error %.2e over %d elements", name, err, checked), worst)
end

check("conv 3x3", { type = "kConvolution", num_filters = 3, kernel = 3 }, { 2, 2, 5, 5 })
check("conv stride 2, pad 1", { type = "kConvolution", num_filters = 2, kernel = 3, stride = 2, pad = 1 }, { 2, 3, 6, 7 })
check("conv rectangular kernel, no bias", { type = "kConvolution", num_filters = 4, kernel_x = 3, kernel_y = 2,
                                            stride_x = 1, stride_y = 2, bias_term = false }, { 1, 2, 5, 6 })
check("conv 1x1", { type = "kConvolution", num_filters = 3, kernel = 1 }, { 3, 4, 2, 2 })
check("max pool 2/2", { type = "kPooling", pool = "MAX", kernel = 2, stride = 2 }, { 2, 3, 4, 4 })
check("max pool 3/2 with pad 1", { type = "kPooling", pool = "MAX", kernel = 3, stride = 2, pad = 1 }, { 2, 2, 5, 5 })
check("avg pool 2/2", { type = "kPooling", pool = "AVG", kernel = 2, stride = 2 }, { 2, 3, 4, 4 })
check("avg pool 3/1 with pad 1", { type = "kPooling", pool = "AVG", kernel = 3, stride = 1, pad = 1 }, { 1, 2, 4, 5 })

-- Shapes through LeNet, and the errors of windowed layers.
local td = require "testdata"
local dir = td.tmpdir("2200-conv")
local images, labels = td.idx(dir, 64, 4, 12, 12)
local function job(layers, steps)
  local all = {
    { name = "data", type = "kIDXData", batchsize = 8, images = images, labels = labels },
    { name = "img", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
  }
  for _, l in ipairs(layers) do all[#all + 1] = l end
  return { train_steps = steps or 1, neuralnet = { layer = all },
           updater = { type = "kSGD", momentum = 0.9, learning_rate = { base_lr = 0.05 } } }
end
local lenet = {
  { name = "c1", type = "kConvolution", srclayer = "img", num_filters = 4, kernel = 5 },   -- 8x4x8x8
  { name = "p1", type = "kPooling", srclayer = "c1", kernel = 2, stride = 2 },              -- 8x4x4x4
  { name = "c2", type = "kConvolution", srclayer = "p1", num_filters = 6, kernel = 3, pad = 1 }, -- 8x6x4x4
  { name = "p2", type = "kPooling", srclayer = "c2", pool = "AVG", kernel = 2, stride = 2 },    -- 8x6x2x2
  { name = "ip", type = "kInnerProduct", srclayer = "p2", num_output = 4 },
  { name = "loss", type = "kSoftmaxLoss", srclayer = { "ip", "label" } },
}
local ok, r = pcall(singa.train, job(lenet, 300))
tap.ok(ok and r.train.accuracy > 0.9, "a small conv net learns the synthetic classes (train accuracy "
       .. tostring(ok and r.train.accuracy) .. ")", not ok and r or nil)

-- The job's threads split conv and pooling loops by image and plane: the same numbers come out.
local function threaded(n)
  local j = job(lenet, 40)
  j.num_openblas_threads = n
  j.seed = 3
  return singa.train(j).train.loss
end
local one, two = threaded(1), threaded(2)
tap.ok(math.abs(one - two) <= 1e-5 * math.abs(one), string.format("2 threads train as 1 does (loss %.9g vs %.9g)", two, one))

tap.raises("needs a N x C x H x W input", "convolution on a 2-d blob is refused", singa.train,
           job({ { name = "ip", type = "kInnerProduct", srclayer = "img", num_output = 4 },
                 { name = "c", type = "kConvolution", srclayer = "ip", num_filters = 2, kernel = 2 } }))
tap.raises("does not fit the 12x12 input", "a kernel larger than the input is refused", singa.train,
           job({ { name = "c", type = "kConvolution", srclayer = "img", num_filters = 2, kernel = 13 } }))
tap.raises("field 'num_filters' must be a positive integer", "num_filters is required", singa.train,
           job({ { name = "c", type = "kConvolution", srclayer = "img", kernel = 3 } }))
tap.raises("unknown pooling method 'MAXX' (did you mean 'MAX'?)", "unknown pooling method", singa.train,
           job({ { name = "p", type = "kPooling", srclayer = "img", pool = "MAXX", kernel = 2 } }))
tap.raises("field 'stride' (or stride_x/stride_y) must be positive", "stride 0 is refused", singa.train,
           job({ { name = "p", type = "kPooling", srclayer = "img", kernel = 2, stride = 0 } }))
tap.raises("field 'pad' must be in 0..kernel-1", "padding as large as the kernel is refused", singa.train,
           job({ { name = "p", type = "kPooling", srclayer = "img", kernel = 2, pad = 2 } }))
os.execute("rm -rf '" .. dir .. "'")
tap.done()

-- Training works: short jobs on synthetic data reach high accuracy with each updater, the test
-- net sees the trained params, dropout acts in training only, and a small MLP learns the real
-- Fashion-MNIST.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"

local dir = td.tmpdir("5000-train")
-- 10 classes of 16x16 images; the test set has its own noise.
local img, lab = td.idx(dir .. "/train", 600, 10, 16, 16, 12345)
local timg, tlab = td.idx(dir .. "/test", 200, 10, 16, 16, 999)

local function job(o)
  local layers = {
    { name = "data", type = "kIDXData", batchsize = 32, shuffle = true, images = img, labels = lab,
      exclude = { "kTest", "kValidation" } },
    { name = "data", type = "kIDXData", batchsize = 50, images = timg, labels = tlab, exclude = "kTrain" },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 32 },
    { name = "act1", type = o.act or "kReLU", srclayer = "fc1" },
    { name = "fc2", type = "kInnerProduct", srclayer = o.dropout and "drop" or "act1", num_output = 10 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc2", "label" } },
  }
  if o.dropout then
    table.insert(layers, 7, { name = "drop", type = "kDropout", srclayer = "act1", dropout_ratio = o.dropout })
  end
  return {
    name = "train", seed = o.seed or 3, train_steps = o.steps or 200, disp_freq = 50,
    test_freq = o.test_freq or 100, test_steps = 4, validate_freq = o.validate_freq, validate_steps = o.validate_steps,
    updater = { type = o.updater or "kSGD", momentum = o.momentum or 0.9, weight_decay = o.wd,
                learning_rate = { type = "kFixed", base_lr = o.lr or 0.05 } },
    neuralnet = { layer = layers },
  }
end

local function train(o)
  local ok, r = pcall(singa.train, job(o))
  if not ok then tap.diag(r) return { train = {}, test = {} } end
  return r
end

-- Updaters
local sgd = train{ updater = "kSGD" }
tap.ok(sgd.test.accuracy and sgd.test.accuracy > 0.9, string.format("kSGD + momentum: test accuracy %.3f > 0.9", sgd.test.accuracy or -1))
tap.ok(sgd.train.loss and sgd.train.loss < 0.5, string.format("kSGD + momentum: train loss %.3f < 0.5", sgd.train.loss or -1))
tap.is(sgd.steps, 200, "kSGD: 200 steps")
-- The last display window's speed: its 50 steps' time only (no tests), about the whole run's.
local whole = sgd.steps * 32 / sgd.seconds
tap.ok(sgd.images_per_sec and sgd.images_per_sec > 0.5 * whole,
       string.format("r.images_per_sec %.0f, the whole run %.0f", sgd.images_per_sec or -1, whole))
local j = job{ steps = 3 }
j.disp_freq = 0
tap.ok(singa.train(j).images_per_sec == nil, "no display window, no r.images_per_sec")
local plain = train{ updater = "kSGD", momentum = 0, lr = 0.2 }
tap.ok(plain.test.accuracy and plain.test.accuracy > 0.9, string.format("plain kSGD: test accuracy %.3f > 0.9", plain.test.accuracy or -1))
local nag = train{ updater = "kNesterov" }
tap.ok(nag.test.accuracy and nag.test.accuracy > 0.9, string.format("kNesterov: test accuracy %.3f > 0.9", nag.test.accuracy or -1))
tap.ok(nag.train.loss ~= sgd.train.loss, "kNesterov and kSGD take different paths")
local wd = train{ updater = "kSGD", wd = 5e-4 }
tap.ok(wd.test.accuracy and wd.test.accuracy > 0.9, string.format("kSGD + weight decay: test accuracy %.3f > 0.9", wd.test.accuracy or -1))
local tanh = train{ act = "kTanh" }
tap.ok(tanh.test.accuracy and tanh.test.accuracy > 0.9, string.format("kTanh hidden layer: test accuracy %.3f > 0.9", tanh.test.accuracy or -1))

-- The test net shares the train net's params: with learning rate 0 the params stay at their
-- initial values (what the step-0 test sees), and the trained test is far better.
local untrained = train{ lr = 0 }
tap.ok(untrained.test.accuracy and untrained.test.accuracy < 0.5,
       string.format("untrained (lr 0): test accuracy %.3f near chance", untrained.test.accuracy or -1))
tap.ok(sgd.test.loss and untrained.test.loss and sgd.test.loss < 0.5 * untrained.test.loss,
       string.format("training lowers the test loss from %.3f to %.3f", untrained.test.loss or -1, sgd.test.loss or -1))

-- Same seed, same job: the same numbers.
local again = train{ updater = "kSGD" }
tap.is(string.format("%.17g", again.train.loss or -1), string.format("%.17g", sgd.train.loss or -2),
       "a rerun with the same seed gives the same train loss to all digits")
local other = train{ updater = "kSGD", seed = 4 }
tap.ok(other.train.loss ~= sgd.train.loss, "another seed gives another run")

-- Dropout only in training: with lr 0 the params never move, so a net with dropout 0.9 must
-- test exactly like the same net without it, while its training loss differs.
local nodrop = train{ lr = 0 }
local drop = train{ lr = 0, dropout = 0.9 }
tap.is(string.format("%.17g", drop.test.loss or -1), string.format("%.17g", nodrop.test.loss or -2),
       "kDropout passes features through unchanged in the test net")
tap.ok(drop.train.loss and nodrop.train.loss and drop.train.loss ~= nodrop.train.loss,
       string.format("kDropout changes the training loss (%.4f vs %.4f)", drop.train.loss or -1, nodrop.train.loss or -1))
local dropped = train{ dropout = 0.3 }
tap.ok(dropped.test.accuracy and dropped.test.accuracy > 0.9,
       string.format("with dropout 0.3: test accuracy %.3f > 0.9", dropped.test.accuracy or -1))

-- Validation runs on its own net and reports too.
local val = train{ validate_freq = 100, validate_steps = 2 }
tap.ok(val.validation and val.validation.accuracy and val.validation.accuracy > 0.9,
       string.format("validation phase: accuracy %.3f > 0.9", val.validation and val.validation.accuracy or -1))
tap.is(string.format("%.17g", val.train.loss or -1), string.format("%.17g", sgd.train.loss or -2),
       "validating does not change the training")

-- Fashion-MNIST: a 784-128-10 MLP, 600 steps of 64, tested on 2000 images.
local fm = os.getenv("FMNIST_DIR") or "/usr/share/datasets/fashion-mnist/"
local f = io.open(fm .. "train-images-idx3-ubyte.gz", "rb")
if not f then
  tap.ok(true, "Fashion-MNIST # SKIP no data in " .. fm)
else
  f:close()
  local ok, r = pcall(singa.train, {
    name = "fmnist", seed = 1, train_steps = 600, disp_freq = 200, test_steps = 20,
    updater = { type = "kSGD", momentum = 0.9,
                learning_rate = { type = "kStep", base_lr = 0.05, gamma = 0.2, change_freq = 400 } },
    neuralnet = { layer = {
      { name = "data", type = "kIDXData", exclude = "kTest", batchsize = 64, shuffle = true,
        images = fm .. "train-images-idx3-ubyte.gz", labels = fm .. "train-labels-idx1-ubyte.gz" },
      { name = "data", type = "kIDXData", exclude = "kTrain", batchsize = 100,
        images = fm .. "t10k-images-idx3-ubyte.gz", labels = fm .. "t10k-labels-idx1-ubyte.gz" },
      { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
      { name = "label", type = "kLabel", srclayer = "data" },
      { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 128 },
      { name = "relu1", type = "kReLU", srclayer = "fc1" },
      { name = "fc2", type = "kInnerProduct", srclayer = "relu1", num_output = 10 },
      { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc2", "label" } },
    } },
  })
  local acc = ok and r.test and r.test.accuracy or -1
  tap.ok(acc > 0.80, string.format("Fashion-MNIST MLP: test accuracy %.4f > 0.80 on 2000 images", acc), not ok and r or nil)
end

-- Scratch files go when everything passed; on a failure they stay for a look.
if tap.failed == 0 then os.execute("rm -rf '" .. dir .. "'") end
tap.done()

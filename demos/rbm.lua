-- SINGA's examples/rbm on Fashion-MNIST: four RBMs (784-1000-500-250-30) trained one after the
-- other by contrastive divergence (CD-1), each on the hidden features of those below it, whose
-- params it loads through checkpoint_path; then the 784-1000-500-250-30-250-500-1000-784
-- autoencoder, initialised from all four (the decoder uses the transposed weights), fine-tuned by
-- back-propagation with kEuclideanLoss against its input (Hinton and Salakhutdinov, Science 2006).
-- The last RBM has Gaussian hidden units, so the 30-unit code is linear.
--
-- Run: ./singa-tui -e demos/rbm.lua [scale]   (scale multiplies every stage's steps; default 1)
-- Each stage prints its reconstruction error on 2000 test images before and after training: for
-- the RBMs the squared error per image of the RBM's own input (pixels for rbm1, the features of
-- the RBMs below for the others); for the autoencoder the squared error per image in pixels.
-- Checkpoints go to ckpt/rbm/<stage>.
local singa = require "singa"
local fm = os.getenv("FMNIST_DIR") or "/usr/share/datasets/fashion-mnist/"
local scale = tonumber(arg and arg[1]) or 1
local function steps(n) return math.max(1, math.floor(n * scale + 0.5)) end

local dims = { 784, 1000, 500, 250, 30 }
local test_steps = 20 -- x 100 images

local function data_layers()
  return {
    { name = "data", type = "kIDXData", exclude = "kTest", batchsize = 100, shuffle = true,
      images = fm .. "train-images-idx3-ubyte.gz" },
    { name = "data", type = "kIDXData", exclude = "kTrain", batchsize = 100,
      images = fm .. "t10k-images-idx3-ubyte.gz" },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255, norm_b = 0 },
  }
end

-- The encoder layers of RBMs 1..n: kInnerProduct with RBM i's weight w<i> and hidden bias b<i>2,
-- then a sigmoid (except after the Gaussian RBM 4).  Returns the last layer's name.
local function encoder(layers, n)
  local src = "image"
  for i = 1, n do
    layers[#layers + 1] = { name = "fc" .. i, type = "kInnerProduct", srclayer = src, num_output = dims[i + 1],
                            param = { { name = "w" .. i }, { name = "b" .. i .. "2" } } }
    src = "fc" .. i
    if i < 4 then
      layers[#layers + 1] = { name = "sigmoid" .. i, type = "kSigmoid", srclayer = src }
      src = "sigmoid" .. i
    end
  end
  return src
end

local function dirs(first, n)
  local list = { first }
  for i = 1, n do list[#list + 1] = "ckpt/rbm/rbm" .. i end
  return list
end

-- SINGA's rbm<k>.conf: CD-1, kSGD with momentum 0.8 and weight decay 2e-4; the Gaussian RBM
-- gets a smaller learning rate.
local function rbm_job(k, nsteps, lr)
  local layers = data_layers()
  local src = encoder(layers, k - 1)
  layers[#layers + 1] = { name = "vis", type = "kRBMVis", srclayer = { src, "hid" },
                          param = { { name = "w" .. k, init = { type = "kGaussian", std = 0.1 } },
                                    { name = "b" .. k .. "1", wd_scale = 0 } } }
  layers[#layers + 1] = { name = "hid", type = "kRBMHid", srclayer = "vis", hdim = dims[k + 1], gaussian = k == 4,
                          param = { { name = "b" .. k .. "2", wd_scale = 0 } } }
  return {
    name = "rbm" .. k, seed = k, train_steps = nsteps, disp_freq = math.max(1, nsteps // 4),
    test_steps = test_steps, num_openblas_threads = 2,
    checkpoint_path = dirs("ckpt/rbm/rbm" .. k, k - 1), overwrite = true, -- a rerun starts over
    train_one_batch = { alg = "kCD", cd_k = 1 },
    updater = { type = "kSGD", momentum = 0.8, weight_decay = 2e-4,
                learning_rate = { type = "kFixed", base_lr = lr or (k == 4 and 0.01 or 0.1) } },
    neuralnet = { layer = layers },
  }
end

-- SINGA's autoencoder.conf: the decoder layer fc<9-i> uses RBM i's weight transposed (shared with
-- the encoder's) and its visible bias b<i>1.
local function autoencoder_job(nsteps, lr)
  local layers = data_layers()
  local src = encoder(layers, 4)
  for i = 4, 1, -1 do
    local name = "fc" .. (9 - i)
    layers[#layers + 1] = { name = name, type = "kInnerProduct", srclayer = src, num_output = dims[i], transpose = true,
                            param = { { name = "w" .. (9 - i), share_from = "w" .. i }, { name = "b" .. i .. "1" } } }
    layers[#layers + 1] = { name = "sigmoid" .. (9 - i), type = "kSigmoid", srclayer = name }
    src = "sigmoid" .. (9 - i)
  end
  layers[#layers + 1] = { name = "loss", type = "kEuclideanLoss", srclayer = { src, "image" } }
  return {
    name = "autoencoder", seed = 5, train_steps = nsteps, disp_freq = math.max(1, nsteps // 4),
    test_steps = test_steps, num_openblas_threads = 2,
    checkpoint_path = dirs("ckpt/rbm/autoencoder", 4), overwrite = true,
    updater = { type = "kAdaGrad", learning_rate = { type = "kFixed", base_lr = lr or 0.01 } },
    neuralnet = { layer = layers },
  }
end

-- The test error of a job's net as it starts: one step at learning rate 0 (into a scratch
-- directory), which changes nothing, then the test.
local function error_before(job)
  os.execute("rm -rf ckpt/rbm/before")
  job.train_steps, job.disp_freq = 1, 0
  job.checkpoint_path[1] = "ckpt/rbm/before"
  job.updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0 } }
  return singa.train(job).test.loss
end

local stages = {}
for k = 1, 4 do
  stages[#stages + 1] = { name = "rbm" .. k, make = function() return rbm_job(k, steps(1000)) end, factor = 1 }
end
-- kEuclideanLoss is half the squared error.
stages[#stages + 1] = { name = "autoencoder", make = function() return autoencoder_job(steps(2000)) end, factor = 2 }

local all_fell, t0, job, r = true, os.time()
for _, st in ipairs(stages) do
  local before = error_before(st.make()) * st.factor
  job = st.make()
  r = singa.train(job)
  local after = r.test.loss * st.factor
  all_fell = all_fell and after < before
  print(string.format("%s: reconstruction error %.4f -> %.4f per image after %d steps in %.1f s", st.name, before,
                      after, r.steps, r.seconds))
end
os.execute("rm -rf ckpt/rbm/before")
print(string.format("%s (%d s in all)", all_fell and "the reconstruction error fell in every stage"
                                                 or "the reconstruction error did NOT fall in every stage",
                    os.time() - t0))
-- `singa-tui --test` would test this script's first job, a scratch one.
require("singa.demo").model(job, r, "singa.predict(job, images, \"sigmoid8\"), job being autoencoder_job(...) of "
                            .. "this script: per image (784 pixel values, 0-255) its reconstruction (\"fc4\": its "
                            .. "30-number code)", false)
if not all_fell then os.exit(1) end

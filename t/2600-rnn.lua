-- Recurrent nets: unrolling (copies, connections, shared params), kGRU through time by a
-- whole-net gradient check, kCharRNN and kRNNLabel positions, and unrolling errors.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"

local dir = td.tmpdir("2600-rnn")
local images, labels = td.idx(dir, 24, 3, 4, 6)

local function gru_net(extra)
  local net = { layer = {
    { name = "data", type = "kIDXData", batchsize = 3, images = images, labels = labels },
    { name = "img", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "rows", type = "kSlice", srclayer = "img", slice_dim = 1, num_slices = 4 },
    { name = "gru", type = "kGRU", srclayer = "rows", dim_hidden = 5, unroll_len = 4 },
    { name = "ip", type = "kInnerProduct", srclayer = "gru", num_output = 3 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "ip", "label" } },
  } }
  for k, v in pairs(extra or {}) do net[k] = v end
  return net
end

-- BPTT: the gradient of every GRU param, summed over the 4 copies, against finite differences.
local err, worst, checked = singa.gradcheck_net(gru_net())
tap.ok(err < 2e-2 and checked > 150, string.format("GRU unrolled 4 steps, classifier on the last state: max relative error %.2e over %d elements", err, checked), worst)

-- Per-step losses: every copy of the classifier and loss is unrolled too (one-to-one connections).
local per_step = gru_net()
per_step.layer[6].unroll_len = 4
per_step.layer[7].unroll_len = 4
err, worst, checked = singa.gradcheck_net(per_step)
tap.ok(err < 2e-2 and checked > 150, string.format("GRU with a loss at every step: max relative error %.2e", err), worst)

-- Two stacked GRUs: copy i of the upper one reads copy i of the lower one.
local stacked = gru_net()
table.insert(stacked.layer, 6, { name = "gru2", type = "kGRU", srclayer = "gru", dim_hidden = 4, unroll_len = 4 })
stacked.layer[7].srclayer = "gru2"
err, worst = singa.gradcheck_net(stacked)
tap.ok(err < 2e-2, string.format("two stacked GRUs: max relative error %.2e", err), worst)

-- A character model on a small text: kCharRNN rows, kRNNLabel the next character.
local text = dir .. "/text.txt"
local f = assert(io.open(text, "wb"))
f:write(string.rep("abcabd", 40))
f:close()
local function char_job(steps, T)
  return { train_steps = steps, seed = 2, disp_freq = 0,
    updater = { type = "kAdam", learning_rate = { base_lr = 0.01 } },
    neuralnet = { unroll_len = T, layer = {
      { name = "data", type = "kCharRNN", path = text, batchsize = 4, unroll_len = T },
      { name = "steps", type = "kSlice", srclayer = "data", slice_dim = 1, num_slices = T + 1, unroll_len = 1 },
      { name = "onehot", type = "kOneHot", srclayer = "steps", vocab_size = 4 },
      { name = "label", type = "kRNNLabel", srclayer = "data" },
      { name = "gru", type = "kGRU", srclayer = "onehot", dim_hidden = 16 },
      { name = "ip", type = "kInnerProduct", srclayer = "gru", num_output = 4 },
      { name = "loss", type = "kSoftmaxLoss", srclayer = { "ip", "label" } },
    } } }
end
local r1 = singa.train(char_job(1, 6))
local r2 = singa.train(char_job(300, 6))
tap.ok(r1.train.loss > 1.2 and r2.train.loss < 0.5,
       string.format("char model on 'abcabd...': per-character loss falls from %.3f to %.3f", r1.train.loss, r2.train.loss))
-- After 'a' always comes 'b'; after 'b' comes 'c' or 'd' (each half the time): accuracy near 5/6.
tap.ok(r2.train.accuracy > 0.75, string.format("it predicts the next character (accuracy %.3f)", r2.train.accuracy))

-- kCharRNNOutput draws each row's next character from softmax(scores / temperature).
do
  local sure = singa.forward({ name = "s", type = "kCharRNNOutput" },
                             { { shape = { 2, 3 }, data = { 30, 0, 0, 0, 0, 30 } } })[1]
  tap.ok(sure[1] == 0 and sure[2] == 2, "a dominant score is always drawn")
  local rows, data = 400, {}
  for i = 1, rows do data[2 * i - 1], data[2 * i] = 0, math.log(3) end -- p = 1/4, 3/4
  local draws = singa.forward({ name = "s", type = "kCharRNNOutput" }, { { shape = { rows, 2 }, data = data } })[1]
  local ones = 0
  for i = 1, rows do ones = ones + draws[i] end
  tap.ok(ones / rows > 0.68 and ones / rows < 0.82, string.format("draws follow the softmax (%.3f of 0.75)", ones / rows))
  local cold = singa.forward({ name = "s", type = "kCharRNNOutput", temperature = 0.1 }, { { shape = { rows, 2 }, data = data } })[1]
  local cold_ones = 0
  for i = 1, rows do cold_ones = cold_ones + cold[i] end
  tap.ok(cold_ones / rows > 0.99, string.format("a low temperature sharpens them (%.3f)", cold_ones / rows))
  tap.raises("field 'temperature' must be positive", "temperature 0 is refused", singa.forward,
             { name = "s", type = "kCharRNNOutput", temperature = 0 }, { { shape = { 1, 2 } } })
end

-- Errors.
local bad = gru_net()
bad.layer[6] = { name = "ip", type = "kInnerProduct", srclayer = "gru", num_output = 3, unroll_len = 3 }
tap.raises("is unrolled 3 times but its srclayer 'gru' 4 times", "mismatched unroll lengths", singa.gradcheck_net, bad)
bad = gru_net()
bad.layer[5].unroll_len = 0
tap.raises("field 'unroll_len' must be at least 1", "unroll_len 0", singa.gradcheck_net, bad)
bad = gru_net()
bad.layer[5].dim_hidden = nil
tap.raises("field 'dim_hidden' must be a positive integer", "GRU without dim_hidden", singa.gradcheck_net, bad)
local lj = char_job(1, 6)
lj.neuralnet.layer[1].path = dir .. "/missing.txt"
tap.raises("missing.txt", "kCharRNN names a missing text file", singa.train, lj)
lj = char_job(1, 6)
lj.neuralnet.layer[4].srclayer = "onehot"
tap.raises("needs position", "kRNNLabel on something that is not a sequence", singa.train, lj)

os.execute("rm -rf '" .. dir .. "'")
tap.done()

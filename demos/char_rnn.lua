-- A GRU character language model trained by back-propagation through time (SINGA's char-rnn
-- example) on a plain-text corpus from Debian's `fortunes` package.  Every copy of the unrolled
-- net reads one character and predicts the next.
-- Run: ./singa-tui -e demos/char_rnn.lua [train_steps] [text_file]
local singa = require "singa"
local text = arg and arg[2] or os.getenv("CHAR_RNN_TEXT") or "/usr/share/games/fortunes/cookie"

local f = io.open(text, "rb")
if not f then
  error(string.format("no text at '%s': install the Debian package 'fortunes' or give a text file", text), 0)
end
local seen, vocab = {}, 0
for c in f:read("a"):gmatch(".") do
  if not seen[c] then seen[c], vocab = true, vocab + 1 end
end
f:close()

local T = 50 -- characters per sequence: the net is unrolled 50 times
local r = singa.train{
  name = "char-rnn", seed = 1,
  train_steps = tonumber(arg and arg[1]) or 2000, disp_freq = 100,
  checkpoint_freq = 1000, checkpoint_path = "ckpt/char-rnn",
  train_one_batch = { alg = "kBPTT" },
  updater = { type = "kAdam", clip_low = -5, clip_high = 5,
              learning_rate = { type = "kStep", base_lr = 0.003, gamma = 0.5, change_freq = 1000 } },
  neuralnet = { unroll_len = T, layer = {
    { name = "data", type = "kCharRNN", path = text, batchsize = 32, unroll_len = T },
    -- position t of every sequence goes to copy t of the one-hot layer
    { name = "steps", type = "kSlice", srclayer = "data", slice_dim = 1, num_slices = T + 1, unroll_len = 1 },
    { name = "onehot", type = "kOneHot", srclayer = "steps", vocab_size = vocab },
    { name = "label", type = "kRNNLabel", srclayer = "data" },
    { name = "gru1", type = "kGRU", srclayer = "onehot", dim_hidden = 256 },
    { name = "ip", type = "kInnerProduct", srclayer = "gru1", num_output = vocab },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "ip", "label" } },
  } },
}
print(string.format("per-character loss %.3f nats (%.1f%% of next characters right) after %d steps in %.1f s",
                    r.train.loss, 100 * r.train.accuracy, r.steps, r.seconds))

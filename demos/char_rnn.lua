-- A GRU character language model trained by back-propagation through time (SINGA's char-rnn
-- example) on a plain-text corpus from Debian's `fortunes` package, then sampled: every copy of
-- the unrolled net reads one character and predicts the next.
-- Run: ./singa-tui -e demos/char_rnn.lua [train_steps] [text_file] [sample_length]
local singa = require "singa"
local text = arg and arg[2] or os.getenv("CHAR_RNN_TEXT") or "/usr/share/games/fortunes/cookie"

local f = io.open(text, "rb")
if not f then
  error(string.format("no text at '%s': install the Debian package 'fortunes' or give a text file", text), 0)
end
-- kCharRNN numbers the text's bytes in byte order; the sampler below needs the same numbering.
local seen = {}
for c in f:read("a"):gmatch(".") do seen[c] = true end
f:close()
local chars, index = {}, {}
for b = 0, 255 do
  local c = string.char(b)
  if seen[c] then chars[#chars + 1] = c; index[c] = #chars - 1 end
end
local vocab = #chars

local T = 50 -- characters per sequence: the net is unrolled 50 times
local job = {
  name = "char-rnn", seed = 1,
  train_steps = tonumber(arg and arg[1]) or 2000, disp_freq = 100,
  checkpoint_freq = 1000, checkpoint_path = "ckpt/char-rnn",
  overwrite = true, -- each run starts over: its first checkpoint replaces the last run's
  train_one_batch = { alg = "kBPTT" },
  updater = { type = "kAdam", clip_low = -5, clip_high = 5,
              learning_rate = { type = "kStep", base_lr = 0.003, gamma = 0.5, change_freq = 1000 } },
  neuralnet = { unroll_len = T, layer = {
    { name = "data", type = "kCharRNN", exclude = "kTest", path = text, batchsize = 32, unroll_len = T },
    { name = "data", type = "kCharRNN", exclude = "kTrain", path = text, batchsize = 1, unroll_len = T },
    -- position t of every sequence goes to copy t of the one-hot layer
    { name = "steps", type = "kSlice", srclayer = "data", slice_dim = 1, num_slices = T + 1, unroll_len = 1 },
    { name = "onehot", type = "kOneHot", srclayer = "steps", vocab_size = vocab },
    { name = "label", type = "kRNNLabel", srclayer = "data" },
    { name = "gru1", type = "kGRU", srclayer = "onehot", dim_hidden = 256 },
    { name = "ip", type = "kInnerProduct", srclayer = "gru1", num_output = vocab },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "ip", "label" } },
    -- for sampling: the next character after the last position, drawn from softmax(scores / 0.7)
    { name = "sample", type = "kCharRNNOutput", srclayer = "ip", exclude = "kTrain", unroll_len = 1, temperature = 0.7 },
  } },
}
local r = singa.train(job)
print(string.format("per-character loss %.3f nats (%.1f%% of next characters right) after %d steps in %.1f s",
                    r.train.loss, 100 * r.train.accuracy, r.steps, r.seconds))

-- Generate: feed the last T characters, draw the next one, shift it in.  Each draw uses its own
-- seed, so the text is reproducible.
local context, out = {}, { "The " }
local pad = index[" "] or 0
for i = 1, T do context[i] = pad end
for c in out[1]:gmatch(".") do table.remove(context, 1); context[T] = index[c] or pad end
for n = 1, tonumber(arg and arg[3]) or 240 do
  job.seed = n
  local row = { table.unpack(context) }
  row[T + 1] = 0 -- the label slot, unused here
  local pick = math.tointeger(singa.predict(job, { row }, "sample")[1][1])
  table.remove(context, 1)
  context[T] = pick
  out[#out + 1] = chars[pick + 1]
end
print("sample: " .. table.concat(out))
-- No `singa-tui --test`: the job has no test_steps (its kTest net is for sampling).
require("singa.demo").model(job, r, "singa.predict(job, { row }, \"sample\"), job being this script's table: the index "
                            .. "of the character after a row of 50 (+ 1 unused), drawn as above", false)

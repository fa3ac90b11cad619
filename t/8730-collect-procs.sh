# SINGA's Collect per layer over 2 AllReduce processes: the forward pass waits for each layer's
# values, also for params whose value is shared by copies (a GRU unrolled over 12 time steps,
# trained by kBPTT, whose gradient is sent after the pass): the job ends with the params of the
# same job without a cluster (the two workers' halves of the batch averaged are the whole's), as
# does the job with both workers in one process, where the second trains on the first's values
# (its copies' views follow).  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8730-collect-procs.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
tmp=$(cd "$tmp" && pwd)
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

cat >"$tmp/job.lua" <<'EOF2'
-- job.lua PROCS OUT: a GRU over the 12 rows of 12x12 images, 12 steps, with no cluster (PROCS
-- 0) or AllReduce over 2 workers in PROCS processes; rank 0 writes its params to OUT.
local singa = require "singa"
local td = require "testdata"
local procs, out = tonumber(arg[1]), arg[2]
local dir = out:match("^(.*)/")
local r = singa.train{
  name = "collect", seed = 5, train_steps = 12, disp_freq = 1,
  train_one_batch = { alg = "kBPTT" },
  cluster = procs > 0 and singa.cluster.allreduce{ workers = 2, procs = procs } or nil,
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.1 } },
  neuralnet = { layer = {
    { name = "data", type = "kIDXData", batchsize = 24, shuffle = true,
      images = dir .. "/data/images-idx3-ubyte", labels = dir .. "/data/labels-idx1-ubyte" },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "rows", type = "kSlice", srclayer = "image", slice_dim = 1, num_slices = 12 },
    { name = "gru", type = "kGRU", srclayer = "rows", dim_hidden = 16, unroll_len = 12 },
    { name = "fc", type = "kInnerProduct", srclayer = "gru", num_output = 10 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc", "label" } },
  } },
}
if singa.rank() == 0 then
  local f = assert(io.open(out, "w"))
  td.write_params(f, r.params)
  f:close()
end
EOF2

gen_data
timeout 120 "$SINGA_TUI" -e "$tmp/job.lua" 0 "$tmp/one.txt" >"$tmp/one.out" 2>&1
report $? "a GRU (kBPTT) with no cluster: 12 steps" "$tmp/one.out"
timeout 120 "$SINGA_TUI" -e "$tmp/job.lua" 1 "$tmp/shared.txt" >"$tmp/shared.out" 2>&1 &&
    params_close "$tmp/shared.txt" "$tmp/one.txt"
report $? "AllReduce, both workers in one process (one copy of the values): the same params (1e-5)" "$tmp/shared.out"
timeout 120 "$SINGA_TUI" --procs 2 -e "$tmp/job.lua" 2 "$tmp/two.txt" >"$tmp/two.out" 2>&1 &&
    params_close "$tmp/two.txt" "$tmp/one.txt"
report $? "AllReduce over 2 processes, each layer waiting for its values: the same params (1e-5)" "$tmp/two.out"

done_testing

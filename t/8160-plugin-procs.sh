# Plugin layers in multi-process jobs: an MLP with kSwish and kPReLU (plugins/, which every
# process loads) trained by AllReduce in 2 processes (--procs 2), and feature-partitioned
# (partition_dim = 1: kSwish cut on the features, kPReLU on the batch) with its parts in 2
# processes, ends with the params of one worker in one process.  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8160-plugin-procs.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

cat >"$tmp/job.lua" <<'EOF'
-- job.lua MODE OUT: plain (one worker), allreduce (2 processes) or feature (2 processes, the net
-- cut on the features); rank 0 writes every param value to OUT.
local singa = require "singa"
local td = require "testdata"
local mode, out = arg[1], arg[2]
local dir = out:match("^(.*)/")
local net = td.mlp(dir .. "/data/images-idx3-ubyte", dir .. "/data/labels-idx1-ubyte")
net.layer[5] = { name = "act", type = "kSwish", srclayer = "fc1", beta = 1.5 }
table.insert(net.layer, 6, { name = "prelu", type = "kPReLU", srclayer = "act" })
net.layer[7].srclayer = "prelu"
if mode == "feature" then net.partition_dim = 1 end
local r = singa.train{
  name = "plugin-procs", seed = 7, train_steps = 30, disp_freq = 10, test_steps = 4,
  cluster = mode ~= "plain" and singa.cluster.allreduce{ workers = 2, procs = 2 } or nil,
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = net,
}
local rank, size = singa.rank()
if rank == 0 then
  local f = assert(io.open(out, "w"))
  td.write_params(f, r.params)
  f:close()
end
local names = {}
for i, p in ipairs(singa.plugins()) do names[i] = p.name end
print(string.format("rank %d of %d: %d steps, plugins %s", rank, size, r.steps, table.concat(names, " ")))
EOF

gen_data

timeout 60 "$SINGA_TUI" -e "$tmp/job.lua" plain "$tmp/plain.txt" >"$tmp/plain.out" 2>&1 &&
    grep -q "^rank 0 of 1: 30 steps, plugins prelu swish" "$tmp/plain.out" && grep -q "^prelu_slope " "$tmp/plain.txt"
report $? "the MLP with kSwish and kPReLU trains in one process (the reference)" "$tmp/plain.out"

for mode in allreduce feature; do
    timeout 120 "$SINGA_TUI" --procs 2 -e "$tmp/job.lua" $mode "$tmp/$mode.txt" >"$tmp/$mode.out" 2>&1 &&
        grep -q "^rank 1 of 2: 30 steps, plugins prelu swish" "$tmp/$mode.out" &&
        { [ $mode = allreduce ] || grep -q "^placement: the parts of" "$tmp/$mode.out"; } &&
        params_close "$tmp/$mode.txt" "$tmp/plain.txt" >>"$tmp/$mode.out"
    report $? "--procs 2, $mode: the plugin layers train across the processes, to the params of one worker" "$tmp/$mode.out"
done

[ "$failed" -eq 0 ] && rm -rf "$tmp"
done_testing

# cluster.compress over 2 AllReduce processes: off, a job's params are those of the same job in
# one process, where nothing is compressed even when asked (bit for bit), and so are those of top-k
# of every value; fp16, bf16 and top-k with
# error feedback train (the loss falls) with fewer bytes per step on the link between the
# processes (the traffic rows of singa.stats); top-k's values back as int8 changes take a third of
# the bytes and train as with float32 values back; a top-k + error feedback checkpoint resumes
# with its residuals to the params of the run that went on.  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8701-compress-procs.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
tmp=$(cd "$tmp" && pwd)
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

cat >"$tmp/job.lua" <<'EOF'
-- job.lua PROCS COMPRESS OUT STEPS [CKDIR FREQ fresh|resume]: AllReduce over 2 workers in PROCS
-- processes with cluster.compress COMPRESS (none, fp16, bf16, topk: 1% + error feedback, topk8
-- and topk32: the same with the values back as int8 changes or float32, all: top-k of every
-- value, whose frames are twice the values'); rank
-- 0 writes the params to OUT and to OUT.bytes "bytes_update"/"bytes_reply" lines: what one step
-- sends to the other process's server and receives from it.
local singa = require "singa"
local td = require "testdata"
local procs, mode, out, steps = tonumber(arg[1]), arg[2], arg[3], tonumber(arg[4])
local dir = out:match("^(.*)/")
local compress = ({ none = nil, fp16 = "fp16", bf16 = "bf16",
                    topk = { topk = 0.01, error_feedback = true }, all = { topk = 1 },
                    topk8 = { topk = 0.01, error_feedback = true, values = "int8" },
                    topk32 = { topk = 0.01, error_feedback = true, values = "fp32" } })[mode]
local r = singa.train{
  name = "compress", seed = 7, train_steps = steps, disp_freq = 1,
  checkpoint_path = arg[5], checkpoint_freq = tonumber(arg[6]), resume = arg[7] == "resume",
  cluster = singa.cluster.allreduce{ workers = 2, procs = procs, compress = compress },
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = td.mlp(dir .. "/data/images-idx3-ubyte", dir .. "/data/labels-idx1-ubyte"),
}
if singa.rank() == 0 and r.params then
  local f = assert(io.open(out, "w"))
  td.write_params(f, r.params)
  f:close()
  f = assert(io.open(out .. ".bytes", "w"))
  local up, reply = 0, 0
  for _, row in ipairs(r.stats.traffic) do
    if row.peer:match("%(rank 1%)") and row.type == "update" then up = up + row.bytes_sent end
    if row.peer:match("%(rank 1%)") and row.type == "update-reply" then reply = reply + row.bytes_received end
  end
  f:write(string.format("bytes_update %d\nbytes_reply %d\n", up // steps, reply // steps))
  f:close()
end
EOF

. "$top_srcdir/t/compress-runs.sh"
# losses_close NAME REF TOL: every step's train loss within TOL (relative) of REF's.
losses_close() {
    awk -F, -v tol="$3" 'FNR == 1 { f++ } $2 == "train" { if (f == 1) a[$1] = $4; else if ($1 in a) { n++
        d = ($4 - a[$1]) / a[$1]; d = d < 0 ? -d : d; if (d > worst) worst = d } }
        END { printf "# %d steps, worst relative difference %.3g\n", n, worst; exit !(n >= 9 && worst <= tol) }' \
        "$tmp/$1.csv" "$tmp/$2.csv"
}
gen_data

run one 1 none 10
report $? "one process, uncompressed: 10 steps" "$tmp/one.out"
run one_fp16 1 fp16 10 && cmp -s "$tmp/one.txt" "$tmp/one_fp16.txt"
report $? "one process with compress = fp16: the same params bit for bit (nothing leaves the process)" "$tmp/one_fp16.out"
run off 2 none 10 && params_close "$tmp/off.txt" "$tmp/one.txt"
report $? "2 processes, uncompressed: the params of the one-process run" "$tmp/off.out"

run all 2 all 10 && params_close "$tmp/all.txt" "$tmp/off.txt"
report $? "2 processes, top-k of every value (frames larger than the values'): the uncompressed params" "$tmp/all.out"
run fp16 2 fp16 10 && falls fp16 && fewer fp16 bytes_update 0.55
report $? "2 processes, fp16: trains with half the update bytes" "$tmp/fp16.out"
fewer fp16 bytes_reply 0.55
report $? "fp16: the values sent back take half the bytes too"
run bf16 2 bf16 10 && falls bf16 && fewer bf16 bytes_update 0.55
report $? "2 processes, bf16: trains with half the update bytes" "$tmp/bf16.out"
run topk 2 topk 10 && falls topk && fewer topk bytes_update 0.1
report $? "2 processes, top-k 1% + error feedback: trains with a tenth of the update bytes" "$tmp/topk.out"

run topk32 2 topk32 10
report $? "top-k with float32 values back" "$tmp/topk32.out"
run topk8 2 topk8 10 && falls topk8 && losses_close topk8 topk32 0.001
report $? "top-k with the values back as int8 changes: the losses of float32 values (0.1%)" "$tmp/topk8.out"
fewer topk8 bytes_reply 0.27
report $? "int8 changes: the values back take about a quarter of the bytes"

# A checkpoint of step 5 resumed to step 10, against the run that went on.
run tk_a 2 topk 5 "$tmp/ck" 5 fresh && ls "$tmp/ck" | grep -q . &&
    run tk_b 2 topk 10 "$tmp/ck" 5 resume && grep -q "error-feedback residual.* resumed" "$tmp/tk_b.out" "$tmp"/ws*/* 2>/dev/null
report $? "top-k + error feedback: a checkpoint of step 5 resumes with its residuals" "$tmp/tk_b.out"
# The run that went on checkpointed at step 5 too: the answers that start a checkpointed step
# carry exact values, compressed or not.
run tk_c 2 topk 10 "$tmp/ck_c" 5 fresh
d=$(timeout 30 "$SINGA_TUI" -e "$top_srcdir/t/paramdiff.lua" "$tmp/tk_b.txt" "$tmp/tk_c.txt" 2>&1)
echo "# relative difference $d"
awk -v d="$d" 'BEGIN { exit !(d + 0 == d && d < 1e-6) }'
report $? "resumed, the params of the run that went on (1e-6)"

done_testing

# A diverging job (lr 1e30), alone and across processes (--procs 3), stops with the error naming
# the step and the param, exit status non-zero; and in the workbench the error shows in the log.
# Prints TAP.
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
tmp=t/3510-nonfinite-procs.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"

cat >"$tmp/job.lua" <<'LUA'
-- job.lua [procs]: lr 1e30 on the test's data; with "procs", Sandblaster in 3 processes.
local singa = require "singa"
local dir = arg[0]:match("^(.*)/") or "."
local cluster = arg[1] == "procs" and singa.cluster.sandblaster{ workers = 2, servers = 1, procs = 3,
  heartbeat_timeout = 2, workspace = dir .. "/ws" } or nil
singa.train{
  name = "diverge", seed = 1, train_steps = 1000, disp_freq = 100, cluster = cluster,
  updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 1e30 } },
  neuralnet = { layer = {
    { name = "data", type = "kIDXData", batchsize = 16, images = dir .. "/data/images-idx3-ubyte",
      labels = dir .. "/data/labels-idx1-ubyte" },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 16 },
    { name = "relu", type = "kReLU", srclayer = "fc1" },
    { name = "fc2", type = "kInnerProduct", srclayer = "relu", num_output = 10 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc2", "label" } },
  } },
}
print("after training")
LUA

gen_data

timeout 60 "$SINGA_TUI" -e "$tmp/job.lua" >"$tmp/plain.out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "training step 1: the loss is NaN; param 'fc1_weight' (layer 'fc1')" "$tmp/plain.out" &&
    ! grep -q 'after training' "$tmp/plain.out"
report $? "singa-tui -e: a diverging job exits 1 with the step and the param (status $rc)" "$tmp/plain.out"

timeout 60 "$SINGA_TUI" --procs 3 -e "$tmp/job.lua" procs >"$tmp/procs.out" 2>&1
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "training step 1: the loss is NaN; param '" "$tmp/procs.out" &&
    ! grep -q 'after training' "$tmp/procs.out"
report $? "--procs 3: a diverging job stops with the error (status $rc)" "$tmp/procs.out"

# The workbench: the error shows in the log, and the script ends as failed.
. "$top_srcdir/t/tmux.sh"
start_tui -- --run job.lua
wait_for 'training step 1: the loss is NaN' 30 && grep -q 'failed' "$tmp/screen.txt"
report $? "the workbench shows the error in its log" "$tmp/screen.txt"
keys q
restored 1
report $? "q then exits 1" "$tmp/screen.txt"
tui_done

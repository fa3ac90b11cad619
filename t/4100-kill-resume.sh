# Crash safety: a training run killed with SIGKILL in the middle and then resumed from its
# checkpoints ends exactly where an uninterrupted run ends (same printed loss to all digits,
# byte-identical final checkpoint).  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/4100-kill-resume.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
STEPS=3001 # displays at 0, 100, ..., 3000, so the last display window is whole in both runs

. "$top_srcdir/t/tap.sh"
pids=
cleanup() {
    for p in $pids; do kill -9 "$p" 2>/dev/null; done
}
trap cleanup EXIT

# Synthetic data, made once so the concurrent runs below only read it.
cat >"$tmp/gen.lua" <<'EOF'
local td = require "testdata"
td.idx(arg[1], 1000, 10, 28, 28, 4242)
EOF
timeout 60 "$SINGA_TUI" -e "$tmp/gen.lua" "$tmp/data" >"$tmp/gen.out" 2>&1
report $? "synthetic data written" "$tmp/gen.out"

# A 784-256-10 MLP with shuffling, dropout, momentum, weight decay, a step schedule and a test
# net: all the state a checkpoint has to carry.
cat >"$tmp/job.lua" <<'EOF'
local singa = require "singa"
local data, ckdir, resume, steps = arg[1], arg[2], arg[3] == "resume", tonumber(arg[4])
local r = singa.train{
  name = "kill-resume", seed = 11, train_steps = steps, disp_freq = 100,
  test_freq = 500, test_steps = 2, checkpoint_freq = 100, checkpoint_path = ckdir, resume = resume,
  updater = { type = "kSGD", momentum = 0.9, weight_decay = 1e-4,
              learning_rate = { type = "kStep", base_lr = 0.02, gamma = 0.5, change_freq = 1500 } },
  neuralnet = { layer = {
    { name = "data", type = "kIDXData", batchsize = 64, shuffle = true,
      images = data .. "/images-idx3-ubyte", labels = data .. "/labels-idx1-ubyte" },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 256 },
    { name = "relu1", type = "kReLU", srclayer = "fc1" },
    { name = "drop", type = "kDropout", srclayer = "relu1", dropout_ratio = 0.3 },
    { name = "fc2", type = "kInnerProduct", srclayer = "drop", num_output = 10 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc2", "label" } },
  } },
}
print(string.format("FINAL steps=%d train_loss=%.17g test_loss=%.17g", r.steps, r.train.loss, r.test.loss))
EOF

# The uninterrupted run and the run to be killed, side by side (two cores).
timeout 60 "$SINGA_TUI" -e "$tmp/job.lua" "$tmp/data" "$tmp/whole" fresh $STEPS >"$tmp/whole.out" 2>&1 &
whole_pid=$!
pids="$whole_pid"
timeout 60 sh -c 'echo $$ >"$1"; shift; exec "$SINGA_TUI" "$@"' sh "$tmp/victim.pid" \
    -e "$tmp/job.lua" "$tmp/data" "$tmp/killed" fresh $STEPS >"$tmp/victim.out" 2>&1 &
victim_timeout=$!
pids="$pids $victim_timeout"

# Wait for ten checkpoints (step 1000 of 3001), then SIGKILL the trainer itself.
i=0
while [ $i -lt 600 ]; do
    [ "$(grep -c 'checkpoint written' "$tmp/victim.out" 2>/dev/null)" -ge 10 ] && break
    kill -0 "$victim_timeout" 2>/dev/null || break
    sleep 0.1
    i=$((i + 1))
done
sleep 0.05 # land between checkpoints, so the steps since the last one are lost
victim=$(cat "$tmp/victim.pid" 2>/dev/null)
pids="$pids $victim"
alive=1
[ -n "$victim" ] && kill -0 "$victim" 2>/dev/null && alive=0
report $alive "the run is still going after its tenth checkpoint" "$tmp/victim.out"
[ -n "$victim" ] && kill -9 "$victim" 2>/dev/null
wait "$victim_timeout"
vrc=$?
[ $vrc -ne 0 ] && ! grep -q '^FINAL' "$tmp/victim.out"
report $? "the run died of SIGKILL before finishing (status $vrc)" "$tmp/victim.out"
ls "$tmp/killed" >"$tmp/killed.ls" 2>&1
grep -q '^step[0-9]\{9\}\.ckpt$' "$tmp/killed.ls"
report $? "the killed run left complete checkpoints" "$tmp/killed.ls"

# Resume to the end.
timeout 60 "$SINGA_TUI" -e "$tmp/job.lua" "$tmp/data" "$tmp/killed" resume $STEPS >"$tmp/resumed.out" 2>&1
report $? "the resumed run finishes" "$tmp/resumed.out"
from=$(sed -n 's/^resumed from .* (step \([0-9]*\))$/\1/p' "$tmp/resumed.out")
[ -n "$from" ] && [ "$from" -ge 1000 ] && [ "$from" -lt $STEPS ]
report $? "it resumed from a checkpoint at or after step 1000 (step ${from:-none})" "$tmp/resumed.out"

wait "$whole_pid"
report $? "the uninterrupted run finishes" "$tmp/whole.out"
pids=

grep '^FINAL' "$tmp/whole.out" >"$tmp/whole.final"
grep '^FINAL' "$tmp/resumed.out" >"$tmp/resumed.final"
[ -s "$tmp/whole.final" ] && cmp -s "$tmp/whole.final" "$tmp/resumed.final"
report $? "killed + resumed prints the same final losses as the uninterrupted run: $(cat "$tmp/whole.final")" "$tmp/resumed.final"

last=$(printf 'step%09d.ckpt' $STEPS)
[ -f "$tmp/whole/$last" ] && cmp "$tmp/whole/$last" "$tmp/killed/$last" >"$tmp/cmp.out" 2>&1
report $? "the final checkpoints (params, updater state, generator, cursors) are byte-identical" "$tmp/cmp.out"

[ $failed -eq 0 ] && rm -rf "$tmp"
done_testing

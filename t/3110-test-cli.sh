# singa-tui --test: the script's singa.train evaluates the job's newest checkpoint instead of
# training, prints the test metrics and ends the script.
# Run by `make check` with SINGA_TUI (the program) and top_srcdir set; prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
tmp=t/3110-test-cli.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1

. "$top_srcdir/t/tap.sh"
# run ARGS...: runs singa-tui with a hard timeout; stdout in $tmp/out, stderr in $tmp/err, status in $rc.
run() {
    timeout 60 "$SINGA_TUI" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

run --help
grep -q -- '--test' "$tmp/out"
report $? "--help describes --test" "$tmp/out"

# 30 steps with checkpoints at 15 and 30; the test set (64 images, batches of 16, 4 steps) is
# covered once per test, so every test sees the same batches.
cat >"$tmp/job.lua" <<'EOF'
local singa = require "singa"
local td = require "testdata"
local dir = assert(arg[1])
local img, lab = td.idx(dir .. "/data", 64, 4)
local r = singa.train{ name = "cli", seed = 1, train_steps = 30, disp_freq = 10, test_freq = 15, test_steps = 4,
  checkpoint_freq = 15, checkpoint_path = dir .. "/ckpt",
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { base_lr = 0.05 } },
  neuralnet = { layer = {
    { name = "data", type = "kIDXData", batchsize = 16, images = img, labels = lab },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 4 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc1", "label" } },
  } } }
print(string.format("after singa.train: train loss %.4f", r.train.loss))
EOF

run --test -e "$tmp/job.lua" "$tmp/none"
[ $rc -ne 0 ] && grep -q "job.lua:5:.*train the job first" "$tmp/err"
report $? "--test before any training: non-zero exit, the script line and 'train the job first'" "$tmp/err"

run -e "$tmp/job.lua" "$tmp"
report $rc "the job trains and writes checkpoints" "$tmp/err"
final=$(sed -n 's/^step 30 *test *\(loss .*\)$/\1/p' "$tmp/out")
[ -n "$final" ]
report $? "training's final test is at step 30 (${final:-none})" "$tmp/out"
cp "$tmp/ckpt/step000000030.ckpt" "$tmp/before.ckpt"

run --test -e "$tmp/job.lua" "$tmp"
report $rc "--test exits 0" "$tmp/err"
grep -q "^loaded $tmp/ckpt/step000000030.ckpt (step 30)" "$tmp/out"
report $? "--test loads the newest checkpoint" "$tmp/out"
got=$(sed -n 's/^step 30 *test *\(loss .*\)$/\1/p' "$tmp/out")
[ -n "$got" ] && [ "$got" = "$final" ]
report $? "--test prints the same test loss and accuracy as training's final test ($got)" "$tmp/out"
! grep -q "after singa.train\|checkpoint written\|train *loss" "$tmp/out"
report $? "--test trains nothing, writes nothing, and ends the script after the test" "$tmp/out"
cmp -s "$tmp/before.ckpt" "$tmp/ckpt/step000000030.ckpt" && [ ! -e "$tmp/ckpt/step000000045.ckpt" ]
report $? "the checkpoints are untouched"

run --metrics "$tmp/m.csv" --test -e "$tmp/job.lua" "$tmp"
[ $rc -eq 0 ] && [ "$(wc -l <"$tmp/m.csv")" -eq 2 ] && grep -q '^30,test,0,' "$tmp/m.csv"
report $? "--test with --metrics records the one test result" "$tmp/m.csv"

run -e "$tmp/job.lua" "$tmp/other" --test
[ $rc -eq 0 ] && grep -q "checkpoint written" "$tmp/out" && grep -q "after singa.train" "$tmp/out"
report $? "--test after -e FILE belongs to the script (which trains), as other options do" "$tmp/out"

# A script that calls singa.test and singa.predict itself.
cat >"$tmp/use.lua" <<'EOF'
local singa = require "singa"
local dir = assert(arg[1])
local job = { train_steps = 1, test_steps = 4, checkpoint_path = dir .. "/ckpt", updater = {},
  neuralnet = { layer = {
    { name = "data", type = "kIDXData", batchsize = 16, images = dir .. "/data/images-idx3-ubyte",
      labels = dir .. "/data/labels-idx1-ubyte" },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 4 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc1", "label" } },
  } } }
local r = singa.test(job)
local row = {}
for i = 1, 64 do row[i] = 200 end
local p = singa.predict(job, { row })[1]
print(string.format("test step %d accuracy %.4f; %d probabilities", r.step, r.test.accuracy, #p))
EOF
run -e "$tmp/use.lua" "$tmp"
[ $rc -eq 0 ] && grep -q "^test step 30 accuracy [0-9.]*; 4 probabilities" "$tmp/out"
report $? "a script can call singa.test and singa.predict" "$tmp/err"

[ $failed -eq 0 ] && rm -rf "$tmp"
done_testing

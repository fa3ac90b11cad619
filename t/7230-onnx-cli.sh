# singa-tui --export-onnx OUT -e job.lua: the script's first singa.train(job) exports the job's
# model instead of training, prints what it wrote and ends the script; refusals exit 1 naming
# the layer, and --export-onnx without -e is a usage error.
# Run by `make check` with SINGA_TUI (the program) and top_srcdir set; prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
tmp=t/7230-onnx-cli.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1

. "$top_srcdir/t/tap.sh"
run() {
    timeout 60 "$SINGA_TUI" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

run --help
grep -q -- '--export-onnx OUT' "$tmp/out"
report $? "--help describes --export-onnx" "$tmp/out"

# The script's second argument is the hidden layer's type: kReLU exports, kArgSort (all 8 indices) does not.
cat >"$tmp/job.lua" <<'EOF'
local singa = require "singa"
local td = require "testdata"
local dir = assert(arg[1])
local img, lab = td.idx(dir .. "/data", 48, 4)
local r = singa.train{ name = "cli", seed = 1, train_steps = 4, checkpoint_path = dir .. "/ckpt",
  updater = { type = "kSGD", learning_rate = { base_lr = 0.05 } },
  neuralnet = { layer = {
    { name = "data", type = "kIDXData", batchsize = 16, images = img, labels = lab },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 8 },
    { name = "act", type = arg[2] or "kReLU", srclayer = "fc1", topk = arg[2] and 8 or nil },
    { name = "fc2", type = "kInnerProduct", srclayer = "act", num_output = 4 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc2", "label" } },
  } } }
print("after singa.train")
EOF

run -e "$tmp/job.lua" "$tmp"
[ $rc -eq 0 ] && [ -f "$tmp/ckpt/step000000004.ckpt" ]
report $? "the job trains and leaves its checkpoint" "$tmp/err"

run --export-onnx "$tmp/model.onnx" -e "$tmp/job.lua" "$tmp"
[ $rc -eq 0 ] && grep -q "^wrote $tmp/model.onnx: [0-9]* ONNX nodes (opset 13), [0-9]* bytes; input 'data', output 'loss'; params of $tmp/ckpt/step000000004.ckpt (step 4)\$" "$tmp/out"
report $? "--export-onnx writes the model and says what it wrote" "$tmp/out"
! grep -q "after singa.train" "$tmp/out" && ! grep -q "^step" "$tmp/out"
report $? "it does not train, and the rest of the script does not run" "$tmp/out"
[ -s "$tmp/model.onnx" ] && [ "$(ls "$tmp" | grep -c 'model.onnx')" -eq 1 ]
report $? "the file is there, and no temporary file beside it" "$tmp/err"
PY=${SINGA_ONNX_PYTHON:-/usr/bin/python3}
if "$PY" -c 'import onnx' 2>/dev/null; then
    "$PY" "$top_srcdir/t/onnx-check.py" "$tmp/model.onnx" >"$tmp/check" 2>&1
    report $? "onnx.checker accepts it" "$tmp/check"
else
    skip "onnx.checker accepts it" "python3-onnx is not installed (scripts/install-deps.sh installs it)"
fi

run --export-onnx "$tmp/argsort.onnx" -e "$tmp/job.lua" "$tmp" kArgSort
[ $rc -eq 1 ] && grep -q "layer 'act' (kArgSort) has no ONNX form" "$tmp/err" && [ ! -e "$tmp/argsort.onnx" ] &&
    [ -z "$(ls "$tmp" | grep 'argsort.onnx')" ]
report $? "a layer without an ONNX form: exit 1 naming it, no file" "$tmp/err"

run --export-onnx "$tmp/model.onnx"
[ $rc -eq 2 ] && grep -q -- "--export-onnx needs the job's script" "$tmp/err"
report $? "--export-onnx without -e is a usage error" "$tmp/err"

[ $failed -eq 0 ] && rm -rf "$tmp"
done_testing

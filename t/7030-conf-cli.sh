# singa-tui -e job.conf, --summary, --test, --procs and --convert on a SINGA v0.2 conf written here
# (kCSVInput over store_conf, include, kLabel, kInnerProduct, kSoftmaxLoss): the conf trains and
# checkpoints into SINGA's WORKSPACE/checkpoint, a conf under another name is recognised by its
# content, --convert writes the same bytes each time and a script with the same summary and
# training, and a bad conf fails naming file:line:column with nothing on stdout.
# Run by `make check` with SINGA_TUI (the program) and top_srcdir set; prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
tmp=t/7030-conf-cli.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1

. "$top_srcdir/t/tap.sh"
run() {
    timeout 60 "$SINGA_TUI" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

# 3 classes, 4 features: class c has feature c large.
awk 'BEGIN { srand(7); for (i = 0; i < 240; i++) { c = i % 3; printf "%d", c;
       for (f = 0; f < 4; f++) printf ",%.3f", (f == c ? 2 : 0) + rand() - 0.5; printf "\n" } }' >"$tmp/data.csv"
cat >"$tmp/job.conf" <<EOF
# A SINGA v0.2 job (include, store_conf)
name: "csv-mlp"
train_steps: 60
disp_freq: 20
test_steps: 4 test_freq: 30
checkpoint_freq: 30
train_one_batch { alg: kBP }
updater {
  type: kSGD momentum: 0.9
  learning_rate { type: kStep base_lr: 0.1 step_conf { gamma: 0.5 change_freq: 40 } }
}
neuralnet {
  layer { name: "data" type: kCSVInput include: kTrain store_conf { path: "$tmp/data.csv" batchsize: 16 random_skip: 3 } }
  layer { name: "data" type: kCSVInput include: kTest store_conf { path: "$tmp/data.csv" batchsize: 30 } }
  layer { name: "label" type: kLabel srclayers: "data" }
  layer { name: "fc" type: kInnerProduct srclayers: "data" innerproduct_conf { num_output: 3 }
          param { name: "w" init { type: kGaussian std: 0.1 } } param { name: "b" init { type: kConstant value: 0 } } }
  layer { name: "loss" type: kSoftmaxLoss srclayers: "fc" srclayers: "label" }
}
cluster { workspace: "$tmp/ws" }
EOF

run -e "$tmp/job.conf"
[ "$rc" -eq 0 ] && grep -q 'accuracy' "$tmp/out"
report $? "-e job.conf trains the job (status $rc)" "$tmp/err"
[ -f "$tmp/ws/checkpoint/step000000060.ckpt" ] && [ -f "$tmp/ws/checkpoint/step000000030.ckpt" ]
report $? "its checkpoints go to SINGA's WORKSPACE/checkpoint, named as singa-tui names them" "$tmp/err"
sed -n 's/  *[0-9]* images\/s//; /^step/p' "$tmp/out" >"$tmp/first.txt"

run --test -e "$tmp/job.conf"
[ "$rc" -eq 0 ] && grep -q 'step000000060.ckpt' "$tmp/out"
report $? "--test -e job.conf evaluates its newest checkpoint" "$tmp/out"

run --summary "$tmp/job.conf"
cp "$tmp/out" "$tmp/summary.conf.txt"
[ "$rc" -eq 0 ] && grep -q 'fc *kInnerProduct *16x3 *15' "$tmp/out"
report $? "--summary job.conf prints the net" "$tmp/out"

cp "$tmp/job.conf" "$tmp/job.txt"
run --summary "$tmp/job.txt"
[ "$rc" -eq 0 ] && cmp -s "$tmp/out" "$tmp/summary.conf.txt"
report $? "a conf under another name is recognised by its content" "$tmp/err"

run --convert "$tmp/job.conf"
cp "$tmp/out" "$tmp/job.lua"
run --convert "$tmp/job.conf"
[ "$rc" -eq 0 ] && [ -s "$tmp/job.lua" ] && cmp -s "$tmp/out" "$tmp/job.lua"
report $? "--convert writes the same bytes twice" "$tmp/err"
grep -q '^  name = "csv-mlp",$' "$tmp/job.lua" && grep -q 'exclude = { "kValidation", "kTest" },  -- SINGA: include kTrain' "$tmp/job.lua" &&
    grep -q '^local singa = require "singa"$' "$tmp/job.lua"
report $? "the converted script is readable Lua with comments where SINGA differs" "$tmp/job.lua"

run --summary "$tmp/job.lua"
[ "$rc" -eq 0 ] && cmp -s "$tmp/out" "$tmp/summary.conf.txt"
report $? "the converted script has the conf's summary" "$tmp/out"

rm -rf "$tmp/ws"
run -e "$tmp/job.lua"
sed -n 's/  *[0-9]* images\/s//; /^step/p' "$tmp/out" >"$tmp/second.txt"
[ "$rc" -eq 0 ] && [ -s "$tmp/first.txt" ] && cmp -s "$tmp/first.txt" "$tmp/second.txt"
report $? "the converted script trains as the conf does (the same losses at every display and test)" "$tmp/second.txt"

sed 's|cluster { workspace: "\(.*\)" }|cluster { workspace: "\1p" nworker_groups: 2 nworkers_per_procs: 1 }|' \
    "$tmp/job.conf" >"$tmp/procs.conf"
run --procs 2 -e "$tmp/procs.conf"
[ "$rc" -eq 0 ] && grep -q 'train g1' "$tmp/out" && ls "$tmp/wsp/checkpoint/" | grep -q 'step000000060'
report $? "--procs 2 -e job.conf runs the conf's two worker groups in two processes" "$tmp/err"

printf 'name: "x"\ntrain_steps: 10\nneuralnet {\n  layer { name: "a" \n' >"$tmp/bad.conf"
run -e "$tmp/bad.conf"
[ "$rc" -eq 1 ] && grep -q "bad.conf:5:1: expected a field name or '}' closing the message, got the end of the file" "$tmp/err"
report $? "-e of a conf that is not valid text format fails with file:line:column (status $rc)" "$tmp/err"
run --convert "$tmp/bad.conf"
[ "$rc" -eq 1 ] && [ ! -s "$tmp/out" ] && grep -q 'bad.conf:5:1' "$tmp/err"
report $? "--convert of it fails with nothing on stdout" "$tmp/err"
printf 'name: "x"\ngpu: 0\n' >"$tmp/gpu.conf"
run -e "$tmp/gpu.conf"
[ "$rc" -eq 1 ] && grep -q "gpu.conf:2:1: job: field 'gpu' is not supported (SINGA: the GPUs to train on: no GPUs here; remove it)" "$tmp/err"
report $? "a refused field stops -e with file:line:column and SINGA's meaning" "$tmp/err"
printf 'local x = = 1\n' >"$tmp/broken.lua"
run -e "$tmp/broken.lua"
[ "$rc" -eq 1 ] && grep -q "broken.lua:1: unexpected symbol" "$tmp/err"
report $? "a Lua script with a syntax error still gets Lua's message" "$tmp/err"

done_testing

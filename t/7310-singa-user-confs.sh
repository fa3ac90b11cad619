# SINGA v0.2/v0.3 jobs as users wrote them run unchanged: an MLP and a LeNet on KVFiles of
# kRecordInput, and a kCSVInput with SINGA's store_conf { backend: "textfile" shape: ... }, whose
# loss (and kAccuracy) name the data layer as their label source; each trains a few steps by
# -e job.conf and by its --convert script, and a hand-written Lua job does the same.  The engine's
# errors for a conf (a missing data file, a field the layer does not take) name the conf's
# file:line:column without a traceback, in the converted script the script's line; a runtime
# failure (the coordinator's port in use) is its message alone; all exit non-zero.
# Run by `make check` with SINGA_TUI (the program) and top_srcdir set; prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
tmp=t/7310-singa-user-confs.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1

. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
run() {
    timeout 60 "$SINGA_TUI" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

# KVFiles of 28x28 records (v0.3's create_data.cc: shape [28, 28], label, pixel bytes), written by
# t/shard.lua: class c brightens row band c, so a few steps learn something.
cat >"$tmp/data.lua" <<'LUA'
local sh = require "shard"
local function make(path, n)
  local list, seed = {}, 3
  for i = 1, n do
    local c, px = (i - 1) % 10, {}
    for k = 1, 784 do
      seed = (seed * 1103515245 + 12345) % 2147483648
      px[k] = string.char((seed >> 16) % 64 + (((k - 1) // 28) // 2 == c and 150 or 0))
    end
    list[i] = { string.format("%08d", i - 1), sh.record { shape = { 28, 28 }, label = c, pixel = table.concat(px) } }
  end
  sh.write("v03", path, list)
end
make(arg[1] .. "/train.bin", 160)
make(arg[1] .. "/test.bin", 40)
LUA
run -e "$tmp/data.lua" "$tmp"
[ "$rc" -eq 0 ] && [ -s "$tmp/train.bin" ]
report $? "KVFiles of 28x28 records written" "$tmp/err"

# SINGA v0.2's MLP example as users adapted it (kSTanh, kStep).
cat >"$tmp/mlp.conf" <<EOF
name: "mlp"
train_steps: 12
test_steps: 1
test_freq: 6
disp_freq: 3
train_one_batch { alg: kBP }
updater {
  type: kSGD
  learning_rate { type: kStep base_lr: 0.01 step_conf { change_freq: 60 gamma: 0.997 } }
}
neuralnet {
  layer { name: "data" type: kRecordInput
          store_conf { backend: "kvfile" path: "$tmp/train.bin" batchsize: 32 shape: 784 std_value: 127.5 mean_value: 127.5 }
          include: kTrain }
  layer { name: "data" type: kRecordInput
          store_conf { backend: "kvfile" path: "$tmp/test.bin" batchsize: 40 shape: 784 std_value: 127.5 mean_value: 127.5 }
          include: kTest }
  layer { name: "fc1" type: kInnerProduct srclayers: "data" innerproduct_conf { num_output: 64 }
          param { name: "w1" init { type: kUniform low: -0.05 high: 0.05 } }
          param { name: "b1" init { type: kUniform low: -0.05 high: 0.05 } } }
  layer { name: "tanh1" type: kSTanh srclayers: "fc1" }
  layer { name: "fc2" type: kInnerProduct srclayers: "tanh1" innerproduct_conf { num_output: 10 }
          param { name: "w2" init { type: kUniform low: -0.05 high: 0.05 } }
          param { name: "b2" init { type: kUniform low: -0.05 high: 0.05 } } }
  layer { name: "loss" type: kSoftmaxLoss softmaxloss_conf { topk: 1 } srclayers: "fc2" srclayers: "data" }
}
cluster { nworker_groups: 1 nserver_groups: 1 workspace: "$tmp/ws-mlp" }
EOF

# SINGA v0.3's LeNet (kCConvolution, kCPooling, kActivation, kAccuracy), records shaped 1x28x28.
cat >"$tmp/lenet.conf" <<EOF
name: "lenet"
train_steps: 10
test_steps: 1
test_freq: 9
disp_freq: 3
train_one_batch { alg: kBP }
updater { type: kSGD momentum: 0.9 weight_decay: 0.0005
          learning_rate { type: kInverse base_lr: 0.1 inverse_conf { gamma: 0.0001 pow: 0.75 } } }
neuralnet {
  layer { name: "data" type: kRecordInput include: kTrain
          store_conf { backend: "kvfile" path: "$tmp/train.bin" batchsize: 16 std_value: 255 shape: 1 shape: 28 shape: 28 } }
  layer { name: "data" type: kRecordInput include: kTest
          store_conf { backend: "kvfile" path: "$tmp/test.bin" batchsize: 40 std_value: 255 shape: 1 shape: 28 shape: 28 } }
  layer { name: "conv1" type: kCConvolution srclayers: "data"
          convolution_conf { num_filters: 4 kernel: 5 stride: 1 }
          param { name: "w1" init { type: kUniform low: -0.1 high: 0.1 } }
          param { name: "b1" lr_scale: 2.0 init { type: kConstant value: 0 } } }
  layer { name: "pool1" type: kCPooling srclayers: "conv1" pooling_conf { pool: MAX kernel: 2 stride: 2 } }
  layer { name: "conv2" type: kCConvolution srclayers: "pool1"
          convolution_conf { num_filters: 8 kernel: 5 stride: 1 }
          param { name: "w2" init { type: kUniform low: -0.1 high: 0.1 } }
          param { name: "b2" lr_scale: 2.0 init { type: kConstant value: 0 } } }
  layer { name: "pool2" type: kCPooling srclayers: "conv2" pooling_conf { pool: MAX kernel: 2 stride: 2 } }
  layer { name: "ip1" type: kInnerProduct srclayers: "pool2" innerproduct_conf { num_output: 32 }
          param { name: "w3" init { type: kUniform low: -0.1 high: 0.1 } }
          param { name: "b3" lr_scale: 2.0 init { type: kConstant value: 0 } } }
  layer { name: "relu1" type: kActivation activation_conf { type: RELU } srclayers: "ip1" }
  layer { name: "ip2" type: kInnerProduct srclayers: "relu1" innerproduct_conf { num_output: 10 }
          param { name: "w4" init { type: kUniform low: -0.1 high: 0.1 } }
          param { name: "b4" lr_scale: 2.0 init { type: kConstant value: 0 } } }
  layer { name: "loss" type: kSoftmaxLoss softmaxloss_conf { topk: 1 } srclayers: "ip2" srclayers: "data" }
  layer { name: "acc" type: kAccuracy srclayers: "ip2" srclayers: "data" include: kTest }
}
cluster { workspace: "$tmp/ws-lenet" }
EOF

# kCSVInput as SINGA wrote it: store_conf { backend: "textfile" path batchsize shape }.
awk 'BEGIN { srand(7); for (i = 0; i < 160; i++) { c = i % 4; printf "%d", c;
       for (f = 0; f < 8; f++) printf ",%.3f", (f == c ? 2 : 0) + rand() - 0.5; printf "\n" } }' >"$tmp/data.csv"
cat >"$tmp/csv.conf" <<EOF
name: "csv"
train_steps: 11
disp_freq: 5
train_one_batch { alg: kBP }
updater { type: kSGD learning_rate { type: kFixed base_lr: 0.1 } }
neuralnet {
  layer { name: "data" type: kCSVInput
          store_conf { backend: "textfile" path: "$tmp/data.csv" batchsize: 32 shape: 8 } }
  layer { name: "fc" type: kInnerProduct srclayers: "data" innerproduct_conf { num_output: 4 }
          param { name: "w" init { type: kGaussian std: 0.1 } } param { name: "b" init { type: kConstant value: 0 } } }
  layer { name: "loss" type: kSoftmaxLoss srclayers: "fc" srclayers: "data" }
}
EOF

# NAME STEP: -e NAME.conf and its --convert script each train, displaying step STEP (their last),
# the loss falling.
trains() {
    run --metrics "$tmp/$1.jsonl" -e "$tmp/$1.conf"
    cp "$tmp/err" "$tmp/$1.err"
    loss=$(sed -n 's/.*"phase": "train".*"loss": \([-0-9.e+]*\).*/\1/p' "$tmp/$1.jsonl")
    first=$(echo "$loss" | head -n 1) last=$(echo "$loss" | tail -n 1)
    [ "$rc" -eq 0 ] && grep -q "\"step\": $2," "$tmp/$1.jsonl" && awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a) }'
    report $? "$1.conf ($3) trains to step $2 by -e, its loss falling (${first:-none} -> ${last:-none}; status $rc)" "$tmp/$1.err"
    run --convert "$tmp/$1.conf"
    cp "$tmp/out" "$tmp/$1.lua"
    rm -rf "$tmp/ws-$1"
    run --metrics "$tmp/$1-lua.jsonl" -e "$tmp/$1.lua"
    [ "$rc" -eq 0 ] && grep -q "\"step\": $2," "$tmp/$1-lua.jsonl"
    report $? "$1.conf's --convert script trains to step $2 (status $rc)" "$tmp/err"
}
trains mlp 12 "SINGA v0.2, kRecordInput: 'data' as the loss's label source"
grep -q '^-- .*mlp.conf (SINGA v0.2 JobProto)' "$tmp/mlp.lua"
report $? "mlp.conf reads as SINGA v0.2" "$tmp/mlp.lua"
trains lenet 9 "SINGA v0.3 LeNet: kSoftmaxLoss and kAccuracy reading 'data'"
grep -q '^-- .*lenet.conf (SINGA v0.3 JobProto)' "$tmp/lenet.lua"
report $? "lenet.conf reads as SINGA v0.3" "$tmp/lenet.lua"
grep -q '"test".*"accuracy"' "$tmp/lenet.jsonl"
report $? "lenet.conf's kAccuracy reports the test accuracy from 'data''s labels" "$tmp/lenet.jsonl"
trains csv 10 "kCSVInput with store_conf backend \"textfile\" and shape"

# The same in a hand-written Lua job: the data layer named as the loss's source.
cat >"$tmp/hand.lua" <<EOF
local singa = require "singa"
local r = singa.train { name = "hand", train_steps = 4,
  updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.1 } },
  neuralnet = { layer = {
    { name = "data", type = "kCSVInput", path = "$tmp/data.csv", batchsize = 32 },
    { name = "fc", type = "kInnerProduct", srclayer = "data", num_output = 4 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc", "data" } },
  } } }
print("trained " .. r.steps)
EOF
run -e "$tmp/hand.lua"
[ "$rc" -eq 0 ] && grep -q '^trained 4$' "$tmp/out"
report $? "a Lua job naming the data layer as the loss's source trains" "$tmp/err"

# The engine's errors for a conf: file:line:column of the layer or field, no traceback.
# no_trace NAME PATTERN: failed, stderr has PATTERN and no traceback.
no_trace() {
    [ "$rc" -ne 0 ] && grep -q "$2" "$tmp/err" && ! grep -q 'stack traceback' "$tmp/err"
    report $? "$1 (status $rc)" "$tmp/err"
}
sed 's|test.bin" batchsize: 40|missing.bin" batchsize: 40|' "$tmp/mlp.conf" >"$tmp/missing.conf"
run -e "$tmp/missing.conf"
no_trace "a conf's missing data file: the conf's file:line of its path, no traceback" \
    "missing.conf:16:[0-9]*: layer 'data' (kRecordInput): file '$tmp/missing.bin'"
sed 's|shape: 8 }|shape: 8 shuffle: true }|' "$tmp/csv.conf" >"$tmp/unknown.conf"
run -e "$tmp/unknown.conf"
no_trace "a field SINGA's StoreProto lacks: file:line:column, no traceback" \
    "unknown.conf:8:[0-9]*: job.neuralnet.layer.store_conf: unknown field 'shuffle'"
sed 's|shape: 8 }|shape: 9 }|' "$tmp/csv.conf" >"$tmp/shape.conf"
run -e "$tmp/shape.conf"
no_trace "a field the engine refuses: the conf's line of that field, no traceback" \
    "shape.conf:8:[0-9]*: layer 'data' (kCSVInput): field 'shape' holds 9 values but the lines of"
sed 's|backend: "textfile"|backend: "kvfile"|' "$tmp/csv.conf" >"$tmp/backend.conf"
run -e "$tmp/backend.conf"
no_trace "kCSVInput with backend \"kvfile\": what to use instead, at the layer's line" \
    "backend.conf:7:3: layer 'data' (kCSVInput): backend \"kvfile\": kCSVInput reads text"
run --convert "$tmp/missing.conf"
cp "$tmp/out" "$tmp/missing.lua"
run -e "$tmp/missing.lua"
no_trace "the converted script's missing data file: the script's line, no traceback" \
    "missing.lua:[0-9]*: layer 'data' (kRecordInput): file '$tmp/missing.bin'"

# A job a Lua script gives that the engine refuses: the script's line of the call, no traceback;
# an error of the script's own code keeps its traceback.
sed 's|path = "|path = "nowhere/|' "$tmp/hand.lua" >"$tmp/refused.lua"
run -e "$tmp/refused.lua"
no_trace "a Lua job the engine refuses: the script's line, no traceback" \
    "refused.lua:2: layer 'data' (kCSVInput): .*nowhere/"
printf 'local singa = require "singa"\nlocal function f(t) return t.x end\nf(nil)\n' >"$tmp/own.lua"
run -e "$tmp/own.lua"
[ "$rc" -ne 0 ] && grep -q "own.lua:2: attempt to index a nil value" "$tmp/err" && grep -q 'stack traceback' "$tmp/err"
report $? "an error in the script's own code keeps its traceback (status $rc)" "$tmp/err"

# A runtime failure: rank 0 cannot listen on the coordinator's port.
python3 -c 'import socket,time; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(60)' >"$tmp/port" &
holder=$!
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
busy=$(cat "$tmp/port")
sed 's|nworker_groups: 1 nserver_groups: 1|nworker_groups: 2 nworkers_per_procs: 1|; s|ws-mlp|ws-busy|' "$tmp/mlp.conf" >"$tmp/busy.conf"
SINGA_RANK=0 SINGA_SIZE=2 SINGA_COORDINATOR=tcp://127.0.0.1:$busy timeout 60 "$SINGA_TUI" -e "$tmp/busy.conf" \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
no_trace "the coordinator's port in use: the message alone" \
    "^singa-tui: .*busy.conf: cannot listen on tcp://127.0.0.1:$busy (the coordinator's address): Address already in use"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
kill_ours

done_testing

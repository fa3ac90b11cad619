# SINGA v0.1.0's own example jobs (../shared/singa-examples-v0.1/) run through the importer
# unchanged, from a folder that holds the data where their paths say: the MNIST shards made from
# Fashion-MNIST by SINGA's shard tool (../shared/tools/singa_shard.py), CIFAR-10-format shards and
# image_mean.bin generated here.  Each runs a few steps (singa.import_conf, then train_steps
# shortened: the full runs take hours) and its training loss falls; the RBM chain and the
# autoencoder initialise from the checkpoints the jobs before them wrote, as in SINGA.  LeNet and
# the CIFAR-10 net, exported to ONNX (the parsers kMnist and kRGBImage, with and without a crop,
# and kImagePreprocess, as ops), compute in onnxruntime-node what singa.predict computes.
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
. "$top_srcdir/t/tap.sh"
shared=${SINGA_SHARED:-$top_srcdir/../shared}
fm=${FMNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -d "$shared/singa-examples-v0.1" ] || [ ! -r "$fm/train-images-idx3-ubyte.gz" ] ||
    ! command -v python3 >/dev/null 2>&1; then
    skip "SINGA's example jobs" "needs $shared/singa-examples-v0.1 (or SINGA_SHARED), Fashion-MNIST and python3"
    done_testing
    exit
fi
ex=$(cd "$shared/singa-examples-v0.1" && pwd)
tool=$(cd "$shared/tools" && pwd)/singa_shard.py
tmp=t/7300-singa-examples.tmp
rm -rf "$tmp" && mkdir -p "$tmp/examples/mnist" "$tmp/examples/cifar10" || exit 1
cd "$tmp" || exit 1

python3 "$tool" create v01 "$fm/train-images-idx3-ubyte.gz" "$fm/train-labels-idx1-ubyte.gz" \
    examples/mnist/mnist_train_shard >data.log 2>&1 &&
    python3 "$tool" create v01 "$fm/t10k-images-idx3-ubyte.gz" "$fm/t10k-labels-idx1-ubyte.gz" \
        examples/mnist/mnist_test_shard >>data.log 2>&1
report $? "SINGA's shard tool writes the MNIST shards from Fashion-MNIST" data.log

# CIFAR-10 format: records [3, 32, 32] of pixel bytes in v0.1 DataShards, and the training set's
# per-pixel mean as SINGA v0.1 wrote image_mean.bin.  Class c brightens channel c % 3 in rows
# 3c..3c+2, so the net has something to learn.
cat >cifar.py <<'PY'
import os, random, sys
sys.path.insert(0, os.path.dirname(sys.argv[1]))
import singa_shard as s
rnd = random.Random(7)
def shard(path, n):
    recs, total = [], [0.0] * 3072
    for k in range(n):
        c = k % 10
        px = bytearray(rnd.randrange(0, 96) for _ in range(3072))
        for r in range(3 * c, 3 * c + 3):
            for col in range(32):
                px[(c % 3) * 1024 + r * 32 + col] += 150
        for i, v in enumerate(px):
            total[i] += v
        img = s.encode_image([3, 32, 32], c, pixel=bytes(px))
        recs.append((b"%05d" % k, s.varint(5 << 3 | 2) + s.varint(len(img)) + img))
    os.makedirs(path, exist_ok=True)
    s.write_tuples(os.path.join(path, "shard.dat"), recs)
    return [t / n for t in total]
mean = shard("examples/cifar10/cifar10_train_shard", 640)
shard("examples/cifar10/cifar10_test_shard", 200)
open("examples/cifar10/image_mean.bin", "wb").write(s.encode_image([3, 32, 32], None, data=mean))
PY
python3 cifar.py "$tool" >>data.log 2>&1
report $? "CIFAR-10-format shards and image_mean.bin generated" data.log

cat >run.lua <<'LUA'
-- run.lua CONF STEPS DISP: the conf as singa-tui -e runs it, for STEPS steps.
local singa = require "singa"
local job = singa.import_conf(arg[1])
job.train_steps, job.disp_freq = tonumber(arg[2]), tonumber(arg[3])
job.test_freq, job.test_steps = 0, math.min(job.test_steps or 0, 2)
job.overwrite = true -- mnist's job.conf and conv.conf share a workspace
local r = singa.train(job)
print(string.format("done %d steps", r.steps))
LUA

# conf STEPS DISP: runs it; checks it ends well and its training loss falls.
run_conf() {
    name=$(echo "$1" | tr / -)
    rm -f "$name.jsonl"
    timeout 300 "$SINGA_TUI" --metrics "$name.jsonl" -e run.lua "$ex/$1" "$2" "$3" >"$name.out" 2>&1 &&
        grep -q "^done $2 steps" "$name.out"
    report $? "$1 runs $2 steps" "$name.out"
    sed -n 's/.*"phase": "train".*"loss": \([-0-9.e+]*\).*/\1/p' "$name.jsonl" >"$name.loss"
    first=$(head -n 1 "$name.loss") last=$(tail -n 1 "$name.loss")
    [ "$(wc -l <"$name.loss")" -ge 3 ] && awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a) }'
    report $? "$1: its training loss falls (${first:-none} -> ${last:-none})" "$name.jsonl"
}
run_conf mnist/job.conf 8 2
run_conf mnist/conv.conf 20 5
run_conf cifar10/job.conf 30 5
grep -q "^checkpoint written: examples/cifar10/checkpoint/step000000030.ckpt" cifar10-job.conf.out
report $? "cifar10/job.conf checkpoints into its workspace, examples/cifar10/checkpoint" cifar10-job.conf.out

# Each RBM starts from the one before it, named as SINGA named the file (step6000-worker0): the
# shortened runs' last checkpoints stand in for step 6000.
prev=
for k in 1 2 3 4; do
    run_conf rbm/rbm$k.conf 10 2
    if [ -n "$prev" ]; then
        grep -q "^checkpoint_path: [0-9]* params from examples/rbm/$prev/checkpoint/step000006000.ckpt" rbm-rbm$k.conf.out
        report $? "rbm$k initialises from $prev's checkpoint (SINGA's checkpoint_path)" rbm-rbm$k.conf.out
    fi
    cp "examples/rbm/rbm$k/checkpoint/step000000010.ckpt" "examples/rbm/rbm$k/checkpoint/step000006000.ckpt"
    prev=rbm$k
done
run_conf rbm/autoencoder.conf 10 2
n_from=$(grep -c "^checkpoint_path: [0-9]* params from examples/rbm/rbm[1-4]/checkpoint/step000006000.ckpt" \
    rbm-autoencoder.conf.out)
[ "$n_from" -eq 4 ]
report $? "the autoencoder initialises from all four RBMs' checkpoints (got $n_from)" rbm-autoencoder.conf.out
# ONNX: each net trained 2 steps into a folder of its own, exported, and run in onnxruntime-node
# beside singa.predict on 6 records of random pixels.  With CROP, kRGBImage cuts CROP x CROP
# windows and a kImagePreprocess after it cuts those to CROP - 4.
cat >onnx.lua <<'LUA'
-- onnx.lua CONF DIR [CROP]: prints "maxdiff D" (the largest difference of the two outputs).
local singa = require "singa"
local ox = require "onnxtools"
local conf, dir, crop = arg[1], arg[2], tonumber(arg[3])
local job = singa.import_conf(conf)
job.train_steps, job.disp_freq, job.test_freq, job.test_steps = 2, 0, 0, 0
job.checkpoint_path = dir .. "/ckpt"
local layers = job.neuralnet.layer
for _, l in ipairs(layers) do -- SINGA's tiny inits give near-uniform outputs: differences would hide
  for _, p in ipairs(l.param or {}) do
    if p.init and p.init.type == "kGaussian" then p.init.std = math.max(p.init.std or 0, 0.05) end
  end
end
if crop then
  for _, l in ipairs(layers) do
    if l.type == "kRGBImage" then l.cropsize = crop end
    if l.srclayer == "rgb" then l.srclayer = "pre" end
  end
  table.insert(layers, 4, { name = "pre", type = "kImagePreprocess", srclayer = "rgb", cropsize = crop - 4,
                            scale = 0.5 })
end
singa.train(job)
local model = dir .. "/model.onnx"
singa.export_onnx(job, model)
local _, s = singa.summary(job)
local shape = { 6 }
for _, l in ipairs(s.layers) do
  if l.name == "data" then
    for d = 2, #l.shape do shape[d] = l.shape[d] end
    break
  end
end
local size = 1
for d = 2, #shape do size = size * shape[d] end
local rows, seed = {}, 11
for i = 1, 6 do
  local r = {}
  for k = 1, size do
    seed = (seed * 1103515245 + 12345) % 2147483648
    r[k] = seed % 256
  end
  rows[i] = r
end
local got, why = ox.run(model, rows, shape, dir)
if not got then error(why) end
print(string.format("maxdiff %.3g", ox.maxdiff(singa.predict(job, rows), got)))
LUA
missing=$("$SINGA_TUI" -e /dev/stdin <<'LUA' 2>&1
local why = require("onnxtools").missing()
print(why or "")
LUA
)
for case in "mnist/conv.conf" "cifar10/job.conf" "cifar10/job.conf 28"; do
    set -- $case
    name=onnx-$(echo "$case" | tr '/ ' '--')
    if [ -n "$missing" ]; then
        skip "$case in ONNX" "$missing"
        continue
    fi
    mkdir -p "$name"
    timeout 300 "$SINGA_TUI" -e onnx.lua "$ex/$1" "$name" ${2:-} >"$name.out" 2>&1
    d=$(sed -n 's/^maxdiff //p' "$name.out")
    awk -v d="${d:-x}" 'BEGIN { exit !(d != "x" && d + 0 <= 1e-5) }'
    report $? "$case${2:+ (kRGBImage crop $2, kImagePreprocess)}: the ONNX export agrees with singa.predict (${d:-failed})" "$name.out"
done
done_testing

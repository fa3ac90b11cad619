# SINGA v0.1.0's own example jobs (../shared/singa-examples-v0.1/) run through the importer
# unchanged, from a folder that holds the data where their paths say: the MNIST shards made from
# Fashion-MNIST by SINGA's shard tool (../shared/tools/singa_shard.py), CIFAR-10-format shards and
# image_mean.bin generated here.  Each runs a few steps (singa.import_conf, then train_steps
# shortened: the full runs take hours) and its training loss falls; the RBM chain and the
# autoencoder initialise from the checkpoints the jobs before them wrote, as in SINGA.
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
done_testing

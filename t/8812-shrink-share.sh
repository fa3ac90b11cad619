# cluster.shrink: a 3-process AllReduce job with replicas = 2 whose rank 2 is killed with SIGKILL
# goes on under each mode: the survivors end with status 0 and every step trained once.  Under
# "share" (the default) the survivors train the lost worker's rows too: from the checkpoint after
# the loss, the job ends with the params of an unpartitioned one-process run resumed from that
# checkpoint over the same global batches (within 1e-5 relative: the same sums in another order),
# so every step after the loss trained the whole batch; under "batch" the rows are left out and
# the params are not those.  The log says which.  cluster.shrink's bad values are refused.
# Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8812-shrink-share.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
tmp=$(cd "$tmp" && pwd)
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

job=$top_srcdir/t/shrink-job.lua
STEPS=600

gen_data

. "$top_srcdir/t/shrink.sh"
# kill_at NAME MODE: the 3-process job of MODE, rank 2 killed once it trained 100 steps; its
# output in NAME.out, its status in $rc.
kill_at() {
    start "$1" "$job" "$2" "$tmp/$1.txt" $STEPS "$tmp/ck-$1" "$tmp/ws-$1"
    kill_wait "$1" 2
}
# goes_on NAME WORDS: both survivors trained every step once, and the log says WORDS.
goes_on() {
    grep -q "^rank 0 of 3: $STEPS steps$" "$tmp/$1.out" && grep -q "^rank 1 of 3: $STEPS steps$" "$tmp/$1.out" &&
        grep -q "the job goes on without it (cluster.replicas): from step [0-9]* the group is workers 0.0, 0.1 (2 of 3: $2); servers" "$tmp/$1.out" &&
        contiguous "$1"
}
# against_plain NAME: the relative difference of NAME's final params from those of a plain
# one-process job resumed from NAME's first checkpoint at least 10 steps after the loss.
against_plain() {
    from=$(sed -n 's/.*the job goes on without it (cluster.replicas): from step \([0-9]*\) .*/\1/p' "$tmp/$1.out" | head -1)
    at=$(( (${from:-0} / 10 + 2) * 10 ))
    mkdir -p "$tmp/ck-$1-plain" && cp "$tmp/ck-$1"/step$(printf %09d $at).* "$tmp/ck-$1-plain/" &&
        timeout 60 "$SINGA_TUI" -e "$job" plain "$tmp/$1-plain.txt" $STEPS "$tmp/ck-$1-plain" >"$tmp/$1-plain.out" 2>&1 &&
        diff=$(timeout 30 "$SINGA_TUI" -e "$top_srcdir/t/paramdiff.lua" "$tmp/$1.txt" "$tmp/$1-plain.txt") || diff=1
    echo "# $1: lost from step $from; resumed one process from step $at: relative difference $diff"
}

kill_at share default
goes_on share "the lost workers' rows of each batch are shared out, the global batch whole: 0.0 trains 0.2's too" && [ $rc -eq 137 ]
report $? "shrink unset (\"share\"), rank 2 killed: the survivors train every step once and say worker 0.0 trains 0.2's rows too" "$tmp/share.out"
against_plain share
awk -v d="$diff" 'BEGIN { exit !(d + 0 <= 1e-5) }'
report $? "\"share\": the params after the loss are those of one process training the same global batches (difference $diff)" "$tmp/share-plain.out"

kill_at batch batch
goes_on batch "the lost workers' rows of each batch are left out" && [ $rc -eq 137 ]
report $? "shrink = \"batch\", rank 2 killed: the survivors train every step once and say the lost rows are left out" "$tmp/batch.out"
against_plain batch
awk -v d="$diff" 'BEGIN { exit !(d + 0 > 1e-4) }'
report $? "\"batch\": the params after the loss are not those of the whole batches (difference $diff)" "$tmp/batch-plain.out"

# Refused, naming the field: an unknown value, and shrink where no group shrinks.
refused() {
    cat >"$tmp/bad.lua" <<LUA
local singa = require "singa"
local ok, err = pcall(singa.train, { name = "bad", train_steps = 1, cluster = $1,
  updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.1 } },
  neuralnet = require("testdata").mlp("$tmp/data/images-idx3-ubyte", "$tmp/data/labels-idx1-ubyte") })
print(ok and "trained" or err)
LUA
    timeout 60 "$SINGA_TUI" -e "$tmp/bad.lua" >"$tmp/bad.out" 2>&1
    grep -qF "$2" "$tmp/bad.out"
}
refused 'singa.cluster.allreduce{ workers = 3, procs = 3, replicas = 2, shrink = "half" }' \
    "cluster: field 'shrink' must be \"share\" (the survivors train a lost worker's rows too) or \"batch\" (they are left out), got \"half\""
report $? "shrink = \"half\" is refused, naming the field and its values" "$tmp/bad.out"
refused 'singa.cluster.allreduce{ workers = 3, procs = 3, shrink = "batch" }' \
    "cluster: field 'shrink' = \"batch\" is for a synchronous group that goes on without a lost process: it needs replicas >= 2 and one worker group (this job has replicas = 1)"
report $? "shrink without replicas >= 2 is refused" "$tmp/bad.out"

done_testing

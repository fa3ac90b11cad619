# A lost process started again with SINGA_REJOIN=1 to rejoin a synchronous job: a 3-process
# AllReduce job with cluster.replicas = 2 whose rank 2 is killed goes on without it
# (t/8811-shrink.sh); the process started again meets rank 0, which checks it runs the same job
# and net, then refuses it, naming the reason (a synchronous group does not take a lost process
# back yet), and the job goes on undisturbed: it ends well, every step trained once, every
# server's replicas bitwise equal.  A process started again with another net is refused for
# that.  A synchronous job without replicas refuses the rejoin before it meets.  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8812-rejoin-sync.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

cat >"$tmp/job.lua" <<'EOF2'
-- job.lua MODE STEPS [HIDDEN]: trains on the test's data with replicas = 2 (MODE two) or none.
local singa = require "singa"
local td = require "testdata"
local mode, steps, hidden = arg[1], tonumber(arg[2]), tonumber(arg[3])
local dir = "t/8812-rejoin-sync.tmp"
-- each worker sleeps 4 ms a step, so the job lasts long enough for the rejoins however fast the machine
singa.load_plugin(os.getenv("SLOW_SO"))
local net = td.mlp(dir .. "/data/images-idx3-ubyte", dir .. "/data/labels-idx1-ubyte", hidden)
for _, l in ipairs(net.layer) do if l.name == "fc2" then l.srclayer = "slow" end end
table.insert(net.layer, { name = "slow", type = "kSlow", srclayer = "act", sleep_ms = 4, group = -1 })
local cluster = singa.cluster.allreduce{ workers = 3, procs = 3, replicas = mode == "two" and 2 or nil }
cluster.workspace, cluster.heartbeat_timeout, cluster.join_timeout = dir .. "/ws-" .. mode, 2, 10
local r = singa.train{
  name = "rejoin-sync", seed = 7, train_steps = steps, disp_freq = 1, test_steps = 2,
  checkpoint_path = dir .. "/ckpt-" .. mode, checkpoint_freq = 100,
  cluster = cluster,
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = net,
}
print(string.format("rank %d: %d steps", singa.rank(), r.steps))
EOF2

gen_data
port=$(free_port)
export SINGA_COORDINATOR=tcp://127.0.0.1:$port SINGA_SIZE=3 SLOW_SO="$PWD/t/plugins/.libs/slow.so"
STEPS=1500
# rank R OUT MODE [ARGS...]: one process of the job, as --procs starts it.
rank() {
    r=$1 out=$2
    shift 2
    SINGA_RANK=$r timeout 120 "$SINGA_TUI" "$@" >"$out" 2>&1
}

rank 0 "$tmp/r0.out" --metrics "$tmp/two.csv" -e "$tmp/job.lua" two $STEPS & r0=$!
rank 1 "$tmp/r1.out" -e "$tmp/job.lua" two $STEPS & r1=$!
rank 2 "$tmp/r2.out" -e "$tmp/job.lua" two $STEPS & r2=$!
until_ok grep -q "^step [0-9]* *train" "$tmp/r0.out"
report $? "a 3-process AllReduce job with replicas = 2 trains" "$tmp/r0.out"

for p in $(descendants $r2); do kill -9 "$p"; done # timeout and singa-tui
wait $r2 2>/dev/null
until_ok grep -q "rank 2 (workers 0.2; servers 0.2; backups of servers 0.1) at tcp://.* the job goes on without it (cluster.replicas)" "$tmp/r0.out"
report $? "rank 2 killed: the group goes on without it" "$tmp/r0.out"

# another net (fc1 of 41 outputs): rank 0 refuses it for that, the job going on
SINGA_REJOIN=1 rank 2 "$tmp/net.out" -e "$tmp/job.lua" two $STEPS 41
rc=$?
[ $rc -ne 0 ] && grep -q "the coordinator refused this process: rank 2 runs a different job (fingerprint" "$tmp/net.out" &&
    grep -q "refused a process that asked to rejoin: rank 2 runs a different job" "$tmp/r0.out" && kill -0 $r0 && kill -0 $r1
report $? "a rejoin with another net is refused by rank 0, naming it, the job going on (status $rc)" "$tmp/net.out"

# the same job and net: met, then refused, naming why, the job going on
SINGA_REJOIN=1 rank 2 "$tmp/same.out" -e "$tmp/job.lua" two $STEPS
rc=$?
[ $rc -ne 0 ] && grep -q "the coordinator refused this process: the job is synchronous: with cluster.replicas its group went on without rank 2, but a synchronous group does not take a lost process back yet" "$tmp/same.out" &&
    grep -q "refused rank 2, which asked to rejoin: the job is synchronous" "$tmp/r0.out" && kill -0 $r0 && kill -0 $r1
report $? "a rejoin of the same job meets rank 0, which refuses it, naming why, the job going on (status $rc)" "$tmp/same.out"

wait $r0; rc0=$?
wait $r1; rc1=$?
[ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] && grep -q "^rank 0: $STEPS steps$" "$tmp/r0.out" && grep -q "^rank 1: $STEPS steps$" "$tmp/r1.out"
report $? "the job ends well on the 2 left, each training all $STEPS steps ($rc0 $rc1)" "$tmp/r0.out"

awk -F, -v steps=$STEPS '$2 == "train" { if (seen[$1]++) twice++; if (n++ && $1 != last + 1) skipped++; last = $1 }
    END { printf "# %d steps, %d twice, %d skipped\n", length(seen), twice, skipped
          exit !(length(seen) == steps && !twice && !skipped && last == steps - 1) }' "$tmp/two.csv"
report $? "every step trained once (the --metrics file's steps contiguous)" "$tmp/two.csv"

sed -n 's/.*replica \([0-9]*\) of server \([0-9.]*\) (rank \([0-9]*\)): [0-9]* slices* at version \([0-9]*\), digest \([0-9a-f]*\) .*/\2 \1 \3 \4 \5/p' \
    "$tmp/ws-two"/rank[01].log | sort >"$tmp/digests"
sed 's/^/# /' "$tmp/digests"
awk -v version=$STEPS '{ n[$1]++; if ($4 != version) bad = 1; if ($1 in d && d[$1] != $5) bad = 1; d[$1] = $5 }
    END { for (s in n) { k++; if (n[s] > 1) two++ }; exit bad || k != 3 || !two }' "$tmp/digests"
report $? "every server's replicas in the 2 left end bitwise equal" "$tmp/digests"

# without replicas the job ended with the loss: a rejoin is refused before it meets
SINGA_REJOIN=1 rank 2 "$tmp/none.out" -e "$tmp/job.lua" none 50
[ $? -ne 0 ] && grep -q "SINGA_REJOIN: the job is synchronous (one worker group) without cluster.replicas: losing a process ended it, and no live process holds the lost one's state" "$tmp/none.out"
report $? "a rejoin of a synchronous job without replicas is refused before it meets, naming why" "$tmp/none.out"

[ "$failed" -eq 0 ] && rm -rf "$tmp"
done_testing

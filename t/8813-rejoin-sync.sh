# A lost process started again with SINGA_REJOIN=1 rejoins a running synchronous job: a
# 3-process AllReduce job with cluster.replicas = 2 whose rank 2 is killed goes on without it
# (t/8811-shrink.sh); rank 2 started again meets rank 0, which checks it runs the same job and
# net, copies its replicas' values and updater state and its worker's state from the live
# processes, and the group trains on with it from a later step: the log says who rejoined at
# which step and what the group is, the process its heal time (under 1 s); every step is trained
# once, every server's replicas (the rejoined process's too) end bitwise equal, and the final
# checkpoint has every file.  Killed and started again a second time, it rejoins again.  A
# process started again with another net is refused for that, the job going on; a synchronous
# job without replicas refuses a rejoin before it meets.  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8813-rejoin-sync.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

cat >"$tmp/job.lua" <<'EOF2'
-- job.lua MODE STEPS [HIDDEN]: trains on the test's data with replicas = 2 (MODE two) or none.
local singa = require "singa"
local td = require "testdata"
local mode, steps, hidden = arg[1], tonumber(arg[2]), tonumber(arg[3])
local dir = "t/8813-rejoin-sync.tmp"
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
# rank R OUT ARGS...: one process of the job, as --procs starts it.
rank() {
    r=$1 out=$2
    shift 2
    SINGA_RANK=$r timeout 120 "$SINGA_TUI" "$@" >"$out" 2>&1
}
# trained N: rank 0 trained step N.
trained() { awk -F, -v n="$1" '$2 == "train" && $1 >= n { found = 1 } END { exit !found }' "$tmp/two.csv"; }
# lost K: rank 0 said K times that rank 2 is lost and the group goes on.
lost() { [ "$(grep -c "^rank 2 (workers 0.2; servers 0.2; backups of servers 0.1) at tcp://.* the job goes on without it (cluster.replicas)" "$tmp/r0.out")" -ge "$1" ]; }
# rejoined K: rank 0 said K times that rank 2 rejoins the group.
rejoined() { [ "$(grep -c "^rank 2 (workers 0.2; servers 0.2; backups of servers 0.1) rejoins the synchronous group: from step [0-9]* the group is workers 0.0, 0.1, 0.2; servers 0.0 in rank 0, 0.1 in rank 1, 0.2 in rank 0 (its backup), each with its replicas in rank 2 again$" "$tmp/r0.out")" -ge "$1" ]; }
kill2() { for p in $(descendants $r2); do kill -9 "$p"; done; wait $r2 2>/dev/null; } # timeout and singa-tui

rank 0 "$tmp/r0.out" --metrics "$tmp/two.csv" -e "$tmp/job.lua" two $STEPS & r0=$!
rank 1 "$tmp/r1.out" -e "$tmp/job.lua" two $STEPS & r1=$!
rank 2 "$tmp/r2.out" -e "$tmp/job.lua" two $STEPS & r2=$!
until_ok trained 20
report $? "a 3-process AllReduce job with replicas = 2 trains" "$tmp/r0.out"

kill2
until_ok lost 1
report $? "rank 2 killed: the group goes on without it" "$tmp/r0.out"

# another net (fc1 of 41 outputs): rank 0 refuses it for that, the job going on
SINGA_REJOIN=1 rank 2 "$tmp/net.out" -e "$tmp/job.lua" two $STEPS 41
rc=$?
[ $rc -ne 0 ] && grep -q "the coordinator refused this process: rank 2 runs a different job (fingerprint" "$tmp/net.out" &&
    grep -q "refused a process that asked to rejoin: rank 2 runs a different job" "$tmp/r0.out" && kill -0 $r0 && kill -0 $r1
report $? "a rejoin with another net is refused by rank 0, naming it, the job going on (status $rc)" "$tmp/net.out"

# the same job and net: it rejoins, and the group trains on with it
SINGA_REJOIN=1 rank 2 "$tmp/again1.out" -e "$tmp/job.lua" two $STEPS & r2=$!
until_ok rejoined 1
report $? "rank 2 started again with SINGA_REJOIN=1 rejoins: rank 0's log says from which step, and the group" "$tmp/r0.out"
at=$(sed -n 's/^rank 2 .* rejoins the synchronous group: from step \([0-9]*\) .*/\1/p' "$tmp/r0.out" | tail -1)
until_ok trained $((at + 100))

# killed again after its rejoin, and started again: it rejoins again
kill2
until_ok lost 2
SINGA_REJOIN=1 rank 2 "$tmp/again2.out" -e "$tmp/job.lua" two $STEPS & r2=$!
until_ok rejoined 2
report $? "killed again after its rejoin and started again, rank 2 rejoins again" "$tmp/r0.out"

wait $r0; rc0=$?
wait $r1; rc1=$?
wait $r2; rc2=$?
[ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && grep -q "^rank 0: $STEPS steps$" "$tmp/r0.out" &&
    grep -q "^rank 1: $STEPS steps$" "$tmp/r1.out" && grep -q "^rank 2: $STEPS steps$" "$tmp/again2.out"
report $? "every process ends well ($rc0 $rc1 $rc2)" "$tmp/again2.out"

healed=$(sed -n 's/.* rejoined the synchronous group at step [0-9]*: healed in \([0-9.]*\) s .*/\1/p' "$tmp/ws-two/rank2.log")
echo "# heal times: $(echo $healed)"
[ "$(echo "$healed" | wc -w)" -eq 2 ] && echo "$healed" | awk '$1 >= 1 { bad = 1 } END { exit bad }'
report $? "the rejoined process logs its heal time, under 1 s each time" "$tmp/ws-two/rank2.log"

awk -F, -v steps=$STEPS '$2 == "train" { if (seen[$1]++) twice++; if (n++ && $1 != last + 1) skipped++; last = $1 }
    END { printf "# %d steps, %d twice, %d skipped\n", length(seen), twice, skipped
          exit !(length(seen) == steps && !twice && !skipped && last == steps - 1) }' "$tmp/two.csv"
report $? "every step trained once (the --metrics file's steps contiguous)" "$tmp/two.csv"

# per server, its two replicas (one in the rejoined process but for server 0.0) end equal at the last step
sed -n 's/.*replica \([0-9]*\) of server \([0-9.]*\) (rank \([0-9]*\)): [0-9]* slices* at version \([0-9]*\), digest \([0-9a-f]*\) .*/\2 \1 \3 \4 \5/p' \
    "$tmp/ws-two"/rank*.log | sort | uniq >"$tmp/digests"
sed 's/^/# /' "$tmp/digests"
awk -v version=$STEPS '$4 == version { n[$1]++; if ($1 in d && d[$1] != $5) bad = 1; d[$1] = $5; if ($3 == 2) two++ }
    END { for (s in n) { k++; if (n[s] != 2) bad = 1 }; exit bad || k != 3 || two != 2 }' "$tmp/digests"
report $? "every server's replicas end bitwise equal, the rejoined process's too" "$tmp/digests"

# whole: the final checkpoint verifies, and has every server's shard and every worker's state.
whole() {
    timeout 30 "$SINGA_TUI" --ckpt-info "$tmp/ckpt-two" >"$tmp/info.out" 2>&1 && grep -q "^step $STEPS$" "$tmp/info.out" || return 1
    for f in s0.0 s0.1 s0.2 w0.0 w0.1 w0.2; do
        [ -f "$(printf '%s/ckpt-two/step%09d' "$tmp" $STEPS).$f.ckpt" ] || return 1
    done
}
whole
report $? "the final checkpoint is whole, the rejoined worker's state in it" "$tmp/info.out"

# without replicas the job ended with the loss: a rejoin is refused before it meets
SINGA_REJOIN=1 rank 2 "$tmp/none.out" -e "$tmp/job.lua" none 50
[ $? -ne 0 ] && grep -q "SINGA_REJOIN: the job is synchronous (one worker group) without cluster.replicas: losing a process ended it, and no live process holds the lost one's state" "$tmp/none.out"
report $? "a rejoin of a synchronous job without replicas is refused before it meets, naming why" "$tmp/none.out"

[ "$failed" -eq 0 ] && rm -rf "$tmp"
done_testing

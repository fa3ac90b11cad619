# A lost Hogwild process, started again by hand with the same rank and environment and
# SINGA_REJOIN=1, rejoins the running job: its server group takes each slice's newest values from
# the live group before its workers start, so its first loss is the live group's, not a fresh
# model's, and the job ends with both groups.  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8641-rejoin-hogwild.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

cat >"$tmp/job.lua" <<'EOF'
-- job.lua: a 2-group Hogwild job in 2 processes, checkpointing every 100 steps; its groups
-- seldom sync, so a rejoined group starting from the checkpoint alone would train on stale values
local singa = require "singa"
local td = require "testdata"
local dir = "t/8641-rejoin-hogwild.tmp"
-- every group's worker sleeps 4 ms a step, so the job lasts long enough for a rejoin however fast
-- or loaded the machine is
local net = td.slow_mlp(singa, dir .. "/data")
local cluster = singa.cluster.hogwild{ groups = 2, procs = 2, sync_freq = 1000 }
cluster.heartbeat_timeout, cluster.join_timeout = 2, 10
local r = singa.train{
  name = "rejoin-hogwild", seed = 7, train_steps = 1200, disp_freq = 10, test_steps = 2,
  checkpoint_path = dir .. "/ckpt", checkpoint_freq = 100,
  cluster = cluster,
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = net,
}
print(string.format("rank %d: %d steps", singa.rank(), r.steps))
EOF

gen_data
port=$(free_port)
export SINGA_COORDINATOR=tcp://127.0.0.1:$port SINGA_SIZE=2 SLOW_SO="$PWD/t/plugins/.libs/slow.so"
# rank R OUT: one process of the job, as --procs starts it.
rank() { SINGA_RANK=$1 timeout 120 "$SINGA_TUI" -e "$tmp/job.lua" >"$2" 2>&1; }

rank 0 "$tmp/r0.out" & r0=$!
rank 1 "$tmp/r1.out" & r1=$!
# Killed once group 1's records are 10 to 50 steps past a checkpoint (from step 110 on): its
# record of the step 10 past the checkpoint it rejoins from is there to compare with, and the
# next checkpoint is far enough away for the records' way to rank 0 and the kill.
past_ckpt() {
    s=$(sed -n 's/^step \([0-9]*\) *train g1 .*/\1/p' "$tmp/r0.out" | tail -n 1)
    [ -n "$s" ] && [ "$s" -ge 110 ] && [ $((s % 100)) -ge 10 ] && [ $((s % 100)) -le 50 ]
}
until_ok past_ckpt
report $? "a 2-process Hogwild job trains group 1 (rank 1) past its first checkpoint" "$tmp/r0.out"

# What a kill -9 in the middle of writing a checkpoint leaves: half-written files, never renamed
# (of a step nobody writes, so only their removal takes them away), and one of rank 0's.
for part in w1.0 s1.0 w0.0; do echo partial >"$tmp/ckpt/step000000950.$part.ckpt.tmp"; done
for p in $(descendants $r1); do kill -9 "$p"; done # timeout and singa-tui
wait $r1 2>/dev/null
until_ok grep -q 'rank 1 (.*) at tcp://.* the job goes on without it' "$tmp/r0.out"
report $? "rank 1 killed: the job goes on without it" "$tmp/r0.out"
only_rank0s() { [ "$(cd "$tmp/ckpt" && echo step000000950.*.tmp)" = step000000950.w0.0.ckpt.tmp ]; }
until_ok only_rank0s
report $? "rank 0 removed the files rank 1 was writing (its worker's and its server's), and only those: $(cd "$tmp/ckpt" && echo *.tmp)"

SINGA_REJOIN=1 rank 1 "$tmp/r1-again.out" & r1=$!
wait $r0; rc0=$?
wait $r1; rc1=$?
[ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] && grep -q 'rank 0: 1200 steps' "$tmp/r0.out" && grep -q 'rank 1: 1200 steps' "$tmp/r1-again.out"
report $? "rank 1 started again with SINGA_REJOIN=1: both processes end well ($rc0 $rc1)" "$tmp/r1-again.out"

at=$(sed -n 's/.*rank 1 (.*) rejoined at step \([0-9]*\).*/\1/p' "$tmp/r0.out")
[ -n "$at" ] && [ "$at" -ge 20 ] && grep -q "^rank 1 of 2 .*; rejoined the job, its groups going on from step $at$" "$tmp/r1-again.out"
report $? "the log says rank 1 rejoined, at the step of the newest whole checkpoint ($at)" "$tmp/r0.out"

# group 1's records after the rejoin go on to the end; its first loss of steps all trained after
# the rejoin is nearer group 0's at the time than the checkpoint's stale model's (group 1's
# before the kill at that step) nor the fresh model's of step 0
awk -v at="$at" '/^step [0-9]+ +train g[01] / { for (i = 4; i < NF; i++) if ($i == "loss") l = $(i + 1) + 0 }
    /^step 0 +train g0 / { first = l } /^step [0-9]+ +train g0 / { g0 = l }
    !on && $2 == at + 10 && /^step [0-9]+ +train g1 / { stale = l }
    /rejoined at step/ { on = 1; live = g0 }
    on && /^step [0-9]+ +train g1 / { n++; if ($2 < at) bad = 1; last = $2; if ($2 == at + 10) g1 = l }
    function abs(x) { return x < 0 ? -x : x }
    END { printf "# step 0: %s; at step %d: group 1 before the kill %s, after the rejoin %s; group 0 at the rejoin %s\n",
                 first, at + 10, stale, g1, live
          exit !(n > 0 && !bad && last >= 1190 && g1 != "" && abs(g1 - live) < abs(g1 - stale) && g1 < first / 100) }' "$tmp/r0.out" >"$tmp/loss.out"
report $? "the rejoined group trains on from step $at to the end, from the live group's values" "$tmp/loss.out"
cat "$tmp/loss.out"

[ "$failed" -eq 0 ] && rm -rf "$tmp"
done_testing

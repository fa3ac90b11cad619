# Rejoining a 3-process Hogwild job (3 groups, a server group each; slice k's master is group
# k % 3).  Rank 2 killed and started again with SINGA_REJOIN=1 rejoins, and the job ends with
# every group.  Then ranks 1 and 2 both killed, and rank 2 alone started again: rank 0 tells it
# rank 1 is lost, so its slices whose master is group 1 take their newest values from the live
# groups instead of waiting for the lost one forever, and ranks 0 and 2 end well.  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8643-rejoin-hogwild3.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

cat >"$tmp/job.lua" <<'EOF'
-- job.lua RUN STEPS TIMEOUT: a 3-group Hogwild job in 3 processes, checkpointing every 50 steps,
-- heartbeat_timeout TIMEOUT; every worker sleeps 4 ms a step, so the job lasts long enough for the
-- kills and the rejoin
local singa = require "singa"
local td = require "testdata"
local dir = "t/8643-rejoin-hogwild3.tmp"
local net = td.slow_mlp(singa, dir .. "/data")
local cluster = singa.cluster.hogwild{ groups = 3, procs = 3, sync_freq = 10 }
cluster.heartbeat_timeout, cluster.join_timeout = tonumber(arg[3]), 10
cluster.workspace = dir .. "/ws-" .. arg[1]
local r = singa.train{
  name = "rejoin-hogwild3", seed = 7, train_steps = tonumber(arg[2]), disp_freq = 10, test_steps = 2,
  checkpoint_path = dir .. "/ckpt-" .. arg[1], checkpoint_freq = 50,
  cluster = cluster,
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = net,
}
print(string.format("rank %d: %d steps", singa.rank(), r.steps))
EOF

gen_data
export SINGA_SIZE=3 SLOW_SO="$PWD/t/plugins/.libs/slow.so"
# rank R RUN OUT: one process of run RUN (a, b: 600 steps, c: 1200), in the background; its pid in $pid.
rank() {
    case $2 in c) args="1200 6" ;; *) args="600 2" ;; esac
    SINGA_RANK=$1 timeout 90 "$SINGA_TUI" -e "$tmp/job.lua" "$2" $args >"$3" 2>&1 &
    pid=$!
}
# killed PID...: kills those ranks (timeout and singa-tui) and reaps them.
killed() {
    for r in "$@"; do for p in $(descendants "$r"); do kill -9 "$p"; done; done
    wait "$@" 2>/dev/null
}
# past RUN: group 2 has trained past step 100 (two checkpoints) in run RUN.
past() {
    s=$(sed -n 's/^step \([0-9]*\) *train g2 .*/\1/p' "$tmp/$1-r0.out" | tail -n 1)
    [ -n "$s" ] && [ "$s" -ge 100 ]
}

# start RUN: ranks 0, 1 and 2 of run RUN (pids in r0, r1, r2) at a coordinator port of their own,
# until group 2 is past step 100.
start() {
    export SINGA_COORDINATOR=tcp://127.0.0.1:$(free_port)
    rank 0 "$1" "$tmp/$1-r0.out"; r0=$pid
    rank 1 "$1" "$tmp/$1-r1.out"; r1=$pid
    rank 2 "$1" "$tmp/$1-r2.out"; r2=$pid
    until_ok past "$1"
}

# 1. Rank 2 lost and rejoined: every group ends.
start a
report $? "a 3-process Hogwild job trains group 2 (rank 2) past step 100" "$tmp/a-r0.out"
killed $r2
until_ok grep -q 'rank 2 (.*) at tcp://.* the job goes on without it' "$tmp/a-r0.out"
report $? "rank 2 killed: the job goes on without it" "$tmp/a-r0.out"
SINGA_REJOIN=1 rank 2 a "$tmp/a-r2-again.out"; r2=$pid
wait $r0; rc0=$?
wait $r1; rc1=$?
wait $r2; rc2=$?
[ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && grep -q 'rank 0: 600 steps' "$tmp/a-r0.out" &&
    grep -q 'rank 1: 600 steps' "$tmp/a-r1.out" && grep -q 'rank 2: 600 steps' "$tmp/a-r2-again.out" &&
    grep -q 'rank 2 (.*) rejoined at step [0-9]' "$tmp/a-r0.out"
report $? "rank 2 started again with SINGA_REJOIN=1 rejoins; all three end well ($rc0 $rc1 $rc2)" "$tmp/a-r2-again.out"
awk '/rejoined at step/ { on = 1 } on && /^step [0-9]+ +train g2 / { last = $2 } END { exit !(last >= 590) }' "$tmp/a-r0.out"
report $? "the rejoined group 2 trains to the end" "$tmp/a-r0.out"

# 2. Ranks 1 and 2 lost, rank 2 alone started again: slice 1's master (group 1) is lost.
start b
report $? "again: the job trains group 2 past step 100" "$tmp/b-r0.out"
killed $r1 $r2
until_ok grep -q 'rank 1 (.*) at tcp://.* the job goes on without it' "$tmp/b-r0.out" &&
    until_ok grep -q 'rank 2 (.*) at tcp://.* the job goes on without it' "$tmp/b-r0.out"
report $? "ranks 1 and 2 killed: the job goes on with rank 0 alone" "$tmp/b-r0.out"
SINGA_REJOIN=1 rank 2 b "$tmp/b-r2-again.out"; r2=$pid
wait $r0; rc0=$?
wait $r2; rc2=$?
[ $rc0 -eq 0 ] && [ $rc2 -eq 0 ] && grep -q 'rank 0: 600 steps' "$tmp/b-r0.out" &&
    grep -q 'rank 2: 600 steps' "$tmp/b-r2-again.out" && grep -q 'rank 2 (.*) rejoined at step [0-9]' "$tmp/b-r0.out"
report $? "rank 2 started again rejoins though group 1, master of slice 1, is lost; ranks 0 and 2 end well ($rc0 $rc2)" \
    "$tmp/b-r2-again.out"
log="$tmp/ws-b/rank2.log"
grep -q 'rank 1 (.*) at tcp://.* was lost before this process rejoined; the job goes on without it' "$log" &&
    grep -q "server 2.0: slice 1's master, group 1 (rank 1), is lost: its newest values from the live groups instead" "$log" &&
    ! grep -q "slice [02]'s master" "$log"
report $? "its log says rank 1 was lost before, and slice 1's values came from the live groups" "$log"

# 3. Rank 2 killed and rank 1 stopped (SIGSTOP) at once, rank 2 started again at once: rank 0
# has not yet found rank 1 silent (heartbeat_timeout 6 s), so rank 2's slice 1 asks group 1, which
# never answers; rank 2 finds it lost within the timeout and asks the live groups instead.
start c
report $? "a third run trains group 2 past step 100" "$tmp/c-r0.out"
for p in $(descendants $r1); do kill -STOP "$p"; done
killed $r2
until_ok grep -q 'rank 2 (.*) at tcp://.* the job goes on without it' "$tmp/c-r0.out"
SINGA_REJOIN=1 rank 2 c "$tmp/c-r2-again.out"; r2=$pid
until_ok grep -q 'rank 2 (.*) rejoined at step [0-9]' "$tmp/c-r0.out" && ! grep -q 'rank 1 (' "$tmp/c-r0.out"
report $? "rank 1 stopped, rank 2 killed: rank 2 rejoins before rank 0 finds rank 1 silent" "$tmp/c-r0.out"
wait $r2; rc2=$?
log="$tmp/ws-c/rank2.log"
[ $rc2 -eq 0 ] && grep -q 'rank 2: 1200 steps' "$tmp/c-r2-again.out" &&
    grep -q 'rank 1 (.*) at tcp:.* sent nothing for 6 s (heartbeat_timeout).*; the job goes on without it' "$log" &&
    grep -q "server 2.0: slice 1's master, group 1 (rank 1), is lost: its newest values from the live groups instead" "$log"
report $? "rank 2 finds rank 1 silent, takes slice 1 from the live groups and trains to the end ($rc2)" "$log"
killed $r1
wait $r0; rc0=$?
[ $rc0 -eq 0 ] && grep -q 'rank 0: 1200 steps' "$tmp/c-r0.out"
report $? "rank 0 ends well too ($rc0)" "$tmp/c-r0.out"

[ "$failed" -eq 0 ] && rm -rf "$tmp"
done_testing

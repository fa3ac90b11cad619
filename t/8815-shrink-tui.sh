# The workbench on rank 0 of a 3-process AllReduce job with cluster.replicas = 2 shows what the
# group is after a loss and after a rejoin: rank 2 killed, the Topology panel says rank 2 was lost
# at the step the log says the group went on from, and which process holds each server now (server
# 0.2 in rank 0, its backup); rank 2 started again with SINGA_REJOIN=1, the panel says it rejoined
# at the step the log says, the group whole again (server 0.2 still held by its backup).  Then rank
# 2 is lost and rejoins again while rank 1 is stopped (SIGSTOP), and q y stops the job before the
# step it was to rejoin at: every process still ends with status 0, rank 2 having trained no step
# (rank 0 waits for it no more), and both logs say so.  Prints TAP.
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
tmp=t/8815-shrink-tui.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
TUI_TEST_SECONDS=${TUI_TEST_SECONDS:-180}
. "$top_srcdir/t/tmux.sh"
trap 'kill_ours; cleanup' EXIT

cat >"$tmp/job.lua" <<'EOF2'
-- job.lua WS: a 3-process AllReduce job with replicas = 2, its logs in WS; every worker sleeps
-- 4 ms a step, so it trains slowly enough for the kill and the rejoin
local singa = require "singa"
local td = require "testdata"
local cluster = singa.cluster.allreduce{ workers = 3, procs = 3, replicas = 2 }
-- a silence of 20 s is a loss: rank 1 is stopped for a moment (a kill closes the connection at once)
cluster.workspace, cluster.heartbeat_timeout, cluster.join_timeout = arg[1], 20, 10
singa.train{
  name = "shrink-tui", seed = 7, train_steps = 100000000, disp_freq = 10, test_freq = 100000, test_steps = 2,
  cluster = cluster,
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = td.slow_mlp(singa, os.getenv("DATA")),
}
EOF2
gen_data
job="$PWD/$tmp/job.lua" ws="$PWD/$tmp/ws"
port=$(free_port)
export DATA="$PWD/$tmp/data" SLOW_SO="$PWD/t/plugins/.libs/slow.so" SINGA_SIZE=3
export SINGA_COORDINATOR=tcp://127.0.0.1:$port

# rank R OUT [ENV...]: rank R of the job in the background ($rp).
rank() {
    r=$1 out=$2
    shift 2
    env "$@" SINGA_RANK=$r timeout 150 "$SINGA_TUI" -e "$job" "$ws" >"$out" 2>&1 &
    rp=$!
}
kill2() { for p in $(descendants $r2); do kill -9 "$p"; done; wait $r2 2>/dev/null; } # timeout and singa-tui

start_tui SINGA_RANK=0 -- --run "$job" "$ws"
rank 1 "$tmp/r1.out"; r1=$rp
rank 2 "$tmp/r2.out"; r2=$rp
# trained past step 10 before the kill: a loss before training starts ends the job
wait_for 'worker 2, group 0: running' 30 && until_ok grep -q ' step [1-9][0-9]* kTrain' "$ws/rank0.log" &&
    wait_for 'worker 2, group 0: running' 5 && ! grep -q 'lost' "$tmp/screen.txt"
report $? "the workbench on rank 0 shows rank 2's worker running, the job training, nothing lost" "$tmp/screen.txt"

kill2
wait_for 'rank 2 lost at step [0-9]*; the group:' 20 && wait_for 'worker 2, group 0: dead' 5
at=$(sed -n 's/.*the job goes on without it (cluster.replicas): from step \([0-9]*\) the group is workers 0.0, 0.1 .*/\1/p' "$ws/rank0.log")
topo=$(panel_text '3 Topology')
echo "# the log: from step ${at:-?}; the panel: $topo"
[ -n "$at" ] && echo "$topo" | grep -q "rank 2 lost at step $at; the group: workers 0.0, 0.1; servers 0.0 in rank 0, 0.1 in rank 1, 0.2 in rank 0 (its backup) "
report $? "rank 2 killed: the Topology panel says it was lost at step ${at:-?}, the group's workers, and server 0.2 in its backup" "$tmp/screen.txt"

rank 2 "$tmp/r2-again.out" SINGA_REJOIN=1; r2=$rp
wait_for 'rank 2 rejoined at step [0-9]*; the group:' 30
at=$(sed -n 's/.* rejoins the synchronous group: from step \([0-9]*\) the group is .*/\1/p' "$ws/rank0.log")
topo=$(panel_text '3 Topology')
echo "# the log: from step ${at:-?}; the panel: $topo"
[ -n "$at" ] && echo "$topo" | grep -q "rank 2 rejoined at step $at; the group: workers 0.0, 0.1, 0.2; servers 0.0 in rank 0, 0.1 in rank 1, 0.2 in rank 0 (its backup) " &&
    ! echo "$topo" | grep -q 'rank 2 lost'
report $? "rank 2 started again with SINGA_REJOIN=1: the panel says it rejoined at step ${at:-?}, the group whole" "$tmp/screen.txt"

# The group stalls at a step k with rank 1 stopped, so rank 0 admits rank 2 for step k + 3 and the
# workbench's stop ends the group after step k + 1 or k + 2: rank 2 trains no step.
kill2
wait_for 'rank 2 lost at step [0-9]*; the group:' 20
for p in $(descendants $r1); do kill -STOP "$p"; done
rank 2 "$tmp/r2-late.out" SINGA_REJOIN=1; r2=$rp
admitted_again() { [ "$(grep -c ' rejoins the synchronous group' "$ws/rank0.log")" = 2 ]; }
until_ok admitted_again && keys q y && wait_for 'stopping' 5
stalled=$?
for p in $(descendants $r1); do kill -CONT "$p"; done
restored 0 && wait $r1 && wait $r2 && [ $stalled = 0 ] &&
    grep -q 'rank 2 rejoined for step [0-9]*, but the group stopped before it (after step [0-9]*): it trained no step' "$ws/rank0.log" &&
    grep -q 'the job ended before step [0-9]*, the step worker 0.2 was to rejoin at: it trained no step' "$tmp/r2-late.out"
report $? "q y before the step rank 2 rejoins at: the workbench and ranks 1 and 2 exit 0, rank 2 trained no step" "$tmp/screen.txt"
done_testing

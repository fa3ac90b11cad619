# The workbench on rank 0 of a 2-process Hogwild job shows a rejoin: rank 1 killed, its Topology
# panel says rank 1 is lost and its worker dead; rank 1 started again with SINGA_REJOIN=1, the
# panel says it rejoined, at the step rank 1 says it goes on from, and counts the rejoin.  Then
# the same with the job headless (--listen) and a workbench attached, which gets it over the
# STATS stream.  Prints TAP.
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
tmp=t/8642-rejoin-tui.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
TUI_TEST_SECONDS=${TUI_TEST_SECONDS:-90}
. "$top_srcdir/t/tmux.sh"
trap 'kill_ours; cleanup' EXIT

cat >"$tmp/job.lua" <<'EOF'
-- job.lua CKPT: a 2-group Hogwild job in 2 processes, checkpointing into CKPT every 50 steps;
-- every worker sleeps 4 ms a step, so it trains slowly enough for the kill and the rejoin
local singa = require "singa"
local td = require "testdata"
local net = td.slow_mlp(singa, os.getenv("DATA"))
local cluster = singa.cluster.hogwild{ groups = 2, procs = 2, sync_freq = 10 }
cluster.heartbeat_timeout, cluster.join_timeout = 2, 10
singa.train{
  name = "rejoin-tui", seed = 7, train_steps = 100000000, disp_freq = 10, test_freq = 100000, test_steps = 2,
  checkpoint_path = arg[1], checkpoint_freq = 50,
  cluster = cluster,
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = net,
}
EOF
gen_data
job="$PWD/$tmp/job.lua" # every process runs the same job with the same arguments
export DATA="$PWD/$tmp/data" SLOW_SO="$PWD/t/plugins/.libs/slow.so" SINGA_SIZE=2

# rank1 OUT CKPT [ENV...]: rank 1 of the job, in the background ($r1).
rank1() {
    out=$1 ck=$2
    shift 2
    env "$@" SINGA_RANK=1 timeout 60 "$SINGA_TUI" -e "$job" "$ck" >"$out" 2>&1 &
    r1=$!
}
# kill_rank1: kills rank 1 (timeout and singa-tui) and reaps it.
kill_rank1() {
    for p in $(descendants $r1); do kill -9 "$p"; done
    wait $r1 2>/dev/null
}
# rejoined_step OUT: the step rank 1's rejoined process says its groups go on from.
rejoined_step() {
    until_ok grep -q '; rejoined the job, its groups going on from step' "$1" &&
        sed -n 's/.*; rejoined the job, its groups going on from step \([0-9]*\)$/\1/p' "$1"
}

# 1. The workbench is rank 0.
port=$(free_port)
export SINGA_COORDINATOR=tcp://127.0.0.1:$port
start_tui SINGA_RANK=0 -- --run "$job" "$PWD/$tmp/ck1"
rank1 "$tmp/r1.out" "$PWD/$tmp/ck1"
wait_for 'worker 0, group 1: running' 30 && wait_for 'ckpt   step [1-9]' 30 && ! grep -q 'lost: the job goes on' "$tmp/screen.txt"
report $? "the workbench on rank 0 shows rank 1's worker running, a checkpoint written, nothing lost" "$tmp/screen.txt"
kill_rank1
wait_for 'rank 1 lost: the job goes on' 20 && grep -q 'worker 0, group 1: dead' "$tmp/screen.txt" &&
    ! grep -q 'rejoined at step' "$tmp/screen.txt"
report $? "rank 1 killed: the Topology panel says rank 1 is lost, its worker dead" "$tmp/screen.txt"
rank1 "$tmp/r1-again.out" "$PWD/$tmp/ck1" SINGA_REJOIN=1
wait_for 'rank 1 rejoined at step [0-9]* (1 rejoin)' 30 && wait_for 'worker 0, group 1: running' 10 &&
    ! grep -q 'rank 1 lost' "$tmp/screen.txt"
at=$(rejoined_step "$tmp/r1-again.out")
[ -n "$at" ] && grep -q "rank 1 rejoined at step $at (1 rejoin)" "$tmp/screen.txt"
report $? "rank 1 started again with SINGA_REJOIN=1: the panel says it rejoined at step ${at:-?}, once, and runs" "$tmp/screen.txt"
keys q y
restored 0 && wait $r1
report $? "q y ends the job: the workbench and the rejoined rank 1 exit 0" "$tmp/screen.txt"

# 2. The job headless, listening; a workbench attached.
port=$(free_port)
export SINGA_COORDINATOR=tcp://127.0.0.1:$port
sock="ipc:///tmp/singa-8642-$$.sock"
SINGA_RANK=0 timeout 60 "$SINGA_TUI" --listen "$sock" -e "$job" "$PWD/$tmp/ck2" >"$tmp/r0.out" 2>&1 &
r0=$!
rank1 "$tmp/r1b.out" "$PWD/$tmp/ck2"
start_tui -- --attach "$sock"
wait_for 'worker 0, group 1: running' 30 && until_ok grep -q 'checkpoint written' "$tmp/r0.out"
report $? "attached to the headless job: rank 1's worker runs, a checkpoint is written" "$tmp/screen.txt"
kill_rank1
wait_for 'rank 1 lost: the job goes on' 20
report $? "rank 1 killed: the attached workbench says rank 1 is lost" "$tmp/screen.txt"
rank1 "$tmp/r1b-again.out" "$PWD/$tmp/ck2" SINGA_REJOIN=1
wait_for 'rank 1 rejoined at step [0-9]* (1 rejoin)' 30
at=$(rejoined_step "$tmp/r1b-again.out")
[ -n "$at" ] && grep -q "rank 1 rejoined at step $at (1 rejoin)" "$tmp/screen.txt" && ! grep -q 'rank 1 lost' "$tmp/screen.txt"
report $? "... and, rank 1 started again, that it rejoined at step ${at:-?}" "$tmp/screen.txt"
keys q
restored 0
report $? "q detaches" "$tmp/screen.txt"
for p in $(descendants $r0) $(descendants $r1); do kill -9 "$p" 2>/dev/null; done
wait $r0 $r1 2>/dev/null
rm -f "/tmp/singa-8642-$$.sock"
tui_done

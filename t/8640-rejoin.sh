# A lost worker group's process of an asynchronous job, started again by hand with the same rank
# and environment and SINGA_REJOIN=1, rejoins the running job: Downpour's rank 1 (workers 1.0) is
# killed, started again, and the job ends with both groups, the rejoined one going on from the
# newest whole checkpoint, and the checkpoints after it whole.  A rejoin the job cannot take is
# refused by the process that asks, the job going on: a rank that is not lost, a synchronous job,
# rank 0, a process holding servers.  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8640-rejoin.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

cat >"$tmp/job.lua" <<'EOF'
-- job.lua MODE STEPS: trains on the test's data, checkpointing every 20 steps.
local singa = require "singa"
local td = require "testdata"
local mode, steps = arg[1], tonumber(arg[2])
local dir = "t/8640-rejoin.tmp"
-- every group's worker sleeps 4 ms a step, so the job lasts long enough for a rejoin however fast
-- or loaded the machine is
local net = td.slow_mlp(singa, dir .. "/data")
local cluster = mode == "downpour" and singa.cluster.downpour{ groups = 2, procs = 3 }
                or singa.cluster.sandblaster{ workers = 2, procs = 3 }
cluster.heartbeat_timeout, cluster.join_timeout = 2, 10
local r = singa.train{
  name = "rejoin", seed = 7, train_steps = steps, disp_freq = 10, test_steps = 2,
  checkpoint_path = dir .. "/ckpt-" .. mode, checkpoint_freq = 20,
  cluster = cluster,
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = net,
}
print(string.format("rank %d: %d steps", singa.rank(), r.steps))
EOF

gen_data
port=$(free_port)
export SINGA_COORDINATOR=tcp://127.0.0.1:$port SINGA_SIZE=3 SLOW_SO="$PWD/t/plugins/.libs/slow.so"
# rank R OUT [MODE [STEPS]]: one process of the job, as --procs starts it.
rank() { SINGA_RANK=$1 timeout 120 "$SINGA_TUI" -e "$tmp/job.lua" "${3:-downpour}" "${4:-1500}" >"$2" 2>&1; }

rank 0 "$tmp/r0.out" & r0=$!
rank 1 "$tmp/r1.out" & r1=$!
rank 2 "$tmp/r2.out" & r2=$!
# A whole checkpoint first: a process that asks to rejoin resumes from one before it asks.
until_ok grep -q "step [0-9]* *train g1" "$tmp/r0.out" &&
    until_ok "$SINGA_TUI" --ckpt-info "$tmp/ckpt-downpour" >/dev/null 2>&1
report $? "a 3-process Downpour job trains and checkpoints group 1 (rank 1)" "$tmp/r0.out"

# not lost: refused, the job going on
SINGA_REJOIN=1 rank 1 "$tmp/twice.out"
rc=$?
[ $rc -ne 0 ] && grep -q 'rank 1 is not lost: it still takes part in the job, so it cannot rejoin' "$tmp/twice.out" &&
    kill -0 $r0 && kill -0 $r1 && kill -0 $r2
report $? "a rejoin by a rank that is not lost is refused, the job going on" "$tmp/twice.out"

for p in $(descendants $r1); do kill -9 "$p"; done # timeout and singa-tui
wait $r1 2>/dev/null
until_ok grep -q 'rank 1 (workers 1.0) at tcp://.* the job goes on without it' "$tmp/r0.out"
report $? "rank 1 killed: the job goes on without it" "$tmp/r0.out"

SINGA_REJOIN=1 rank 1 "$tmp/r1-again.out" & r1=$!
wait $r0; rc0=$?
wait $r1; rc1=$?
wait $r2; rc2=$?
[ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && grep -q 'rank 0: 1500 steps' "$tmp/r0.out"
report $? "rank 1 started again with SINGA_REJOIN=1: every process ends well ($rc0 $rc1 $rc2)" "$tmp/r1-again.out"

at=$(sed -n 's/.*rank 1 (workers 1.0) rejoined at step \([0-9]*\).*/\1/p' "$tmp/r0.out")
[ -n "$at" ] && [ "$at" -ge 20 ] && grep -q "^rank 1 of 3 .*: workers 1.0; rejoined the job, its groups going on from step $at$" "$tmp/r1-again.out"
report $? "the log says rank 1 rejoined, at the step of the newest whole checkpoint ($at)" "$tmp/r0.out"

# group 1's records after the rejoin go on from there to the end
awk -v at="$at" '/rejoined at step/ { on = 1 } on && /^step [0-9]+ +train g1 / { n++; if ($2 < at) bad = 1; last = $2 }
    END { exit !(n > 0 && !bad && last >= 1490) }' "$tmp/r0.out"
report $? "the rejoined group's steps go on from step $at to the end" "$tmp/r0.out"

# every kept checkpoint (the newest 3, all after the rejoin) has every file: group 1's too
kept=$(ls "$tmp/ckpt-downpour" | sed -n 's/^step0*\([0-9][0-9]*\)\.s0\.0\.ckpt$/\1/p')
whole=1
for s in $kept; do
    f=$(printf '%s/ckpt-downpour/step%09d' "$tmp" "$s")
    [ "$s" -gt "$at" ] && [ -f "$f.w0.0.ckpt" ] && [ -f "$f.w1.0.ckpt" ] || whole=0
done
"$SINGA_TUI" --ckpt-info "$tmp/ckpt-downpour" >"$tmp/info.out" 2>&1 && grep -q '^step 1500$' "$tmp/info.out" &&
    grep -q "^workers' states: 0.0 .* 1.0 " "$tmp/info.out" && [ -n "$kept" ] && [ $whole -eq 1 ]
report $? "the checkpoints after the rejoin are whole (--ckpt-info: step 1500; kept: $(echo $kept))" "$tmp/info.out"

# refused before joining
SINGA_REJOIN=1 rank 1 "$tmp/sync.out" sandblaster 50
[ $? -ne 0 ] && grep -q 'SINGA_REJOIN: the job is synchronous (one worker group)' "$tmp/sync.out"
report $? "a rejoin to a synchronous job is refused" "$tmp/sync.out"
SINGA_REJOIN=1 rank 0 "$tmp/zero.out"
[ $? -ne 0 ] && grep -q 'SINGA_REJOIN: rank 0 is the coordinator' "$tmp/zero.out"
report $? "rank 0 cannot rejoin" "$tmp/zero.out"
SINGA_REJOIN=1 rank 2 "$tmp/servers.out"
[ $? -ne 0 ] && grep -q 'SINGA_REJOIN: rank 2 (servers 0.0) holds what other processes need' "$tmp/servers.out"
report $? "a process holding servers others need cannot rejoin" "$tmp/servers.out"

[ "$failed" -eq 0 ] && rm -rf "$tmp"
done_testing

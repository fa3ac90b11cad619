# An asynchronous job that loses a process of workers goes on, and its checkpoints after the
# loss record that they lack the lost group's files: each is whole for the params, so --test,
# --ckpt-gather, --ckpt-info, singa.load and resume take the final one, its log, --ckpt-info and
# resume say what it lacks, and `--procs` ends with the killed rank's status (128 + 9).  Downpour (rank 1 of 3,
# workers alone) and Hogwild (rank 1 of 2, workers and a server group).  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8644-lost-ckpt.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

cat >"$tmp/job.lua" <<'LUA'
-- job.lua MODE [STEPS [RESUME]]: 600 steps, checkpointing every 100; every worker sleeps 4 ms a step, so the job
-- lasts long enough for a kill past the first checkpoint however fast the machine is
local singa = require "singa"
local td = require "testdata"
local mode, steps, resume = arg[1], tonumber(arg[2] or 600), arg[3] == "resume"
local dir = "t/8644-lost-ckpt.tmp"
local net = td.slow_mlp(singa, dir .. "/data")
local cluster = mode == "downpour" and singa.cluster.downpour{ groups = 2, procs = 3 }
                or singa.cluster.hogwild{ groups = 2, procs = 2 }
cluster.heartbeat_timeout, cluster.join_timeout = 2, 10
local r = singa.train{
  name = "lost-ckpt", seed = 7, train_steps = steps, disp_freq = 10, test_steps = 2, resume = resume,
  checkpoint_path = dir .. "/ckpt-" .. mode, checkpoint_freq = 100,
  cluster = cluster,
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = net,
}
print(string.format("rank %d: step %d", singa.rank(), r.steps or r.step))
LUA

gen_data
export SLOW_SO="$PWD/t/plugins/.libs/slow.so"

# group1_past N: rank 0's log has a record of group 1 at step N or later
group1_past() {
    s=$(sed -n 's/^step \([0-9]*\) *train g1 .*/\1/p' "$out" | tail -n 1)
    [ -n "$s" ] && [ "$s" -ge "$1" ]
}

for mode in downpour hogwild; do
    procs=3 && [ $mode = hogwild ] && procs=2
    out=$tmp/$mode.out ck=$tmp/ckpt-$mode
    timeout 120 "$SINGA_TUI" --procs $procs -e "$tmp/job.lua" $mode >"$out" 2>&1 & launcher=$!
    until_ok group1_past 130
    r1=$(rank_pid 1)
    [ -n "$r1" ] && kill -9 $r1
    report $? "$mode: rank 1 killed past the first checkpoint" "$out"
    wait $launcher
    rc=$?
    [ $rc -eq 137 ] && grep -q 'the job goes on without it' "$out" && grep -q '^rank 0: step 600$' "$out" &&
        grep -q 'singa-tui: rank 1 (pid [0-9]*) was killed by signal 9' "$out"
    report $? "$mode: the job goes on to step 600, and --procs ends with rank 1's status 137 ($rc)" "$out"

    grep -q "checkpoint written: $ck/step000000600\.\*\.ckpt .*; it lacks the state of lost worker group 1 (rank 1)" "$out" &&
        ! grep -q 'the job ended while writing it' "$out"
    report $? "$mode: the log names the final checkpoint as lacking group 1's state" "$out"

    "$SINGA_TUI" --ckpt-info "$ck" >"$tmp/info-$mode.out" 2>&1 && grep -q '^step 600$' "$tmp/info-$mode.out" &&
        grep -q "^checkpoint $ck/step000000600\.\*\.ckpt (step 600) lacks the state of worker group 1 (lost when it was written): the params are whole; group 1 takes group 0's" "$tmp/info-$mode.out"
    report $? "$mode: --ckpt-info reads step 600 and says it lacks group 1's state" "$tmp/info-$mode.out"

    "$SINGA_TUI" --ckpt-gather "$ck" "$tmp/$mode.ckpt" >"$tmp/gather-$mode.out" 2>&1 &&
        grep -q "^wrote $tmp/$mode.ckpt: step 600 of " "$tmp/gather-$mode.out"
    report $? "$mode: --ckpt-gather writes step 600" "$tmp/gather-$mode.out"

    timeout 60 "$SINGA_TUI" --test -e "$tmp/job.lua" $mode >"$tmp/test-$mode.out" 2>&1 &&
        grep -q "^loaded $ck/step000000600\\.\\*\\.ckpt (step 600)$" "$tmp/test-$mode.out"
    report $? "$mode: --test loads step 600" "$tmp/test-$mode.out"
done

# resumed: every process loads step 600, group 1 taking group 0's state, and trains on
out=$tmp/resume.out
timeout 60 "$SINGA_TUI" --procs 3 -e "$tmp/job.lua" downpour 650 resume >"$out" 2>&1 &&
    grep -q '^rank 0: step 650$' "$out" && grep -q "^resumed from $tmp/ckpt-downpour/step000000600\.\*\.ckpt (step 600)$" "$out" &&
    grep -q "^resume: checkpoint $tmp/ckpt-downpour/step000000600\.\*\.ckpt (step 600) lacks the state of worker group 1" "$out" &&
    grep -q '^step 6[0-9]0 *train g1 ' "$out"
report $? "downpour: resume takes step 600, group 1 taking group 0's state, and both groups train on" "$out"

echo 'local c = require("singa").load(arg[1]); print("loaded step " .. c.step)' >"$tmp/load.lua"
timeout 30 "$SINGA_TUI" -e "$tmp/load.lua" "$tmp/ckpt-hogwild" >"$tmp/load.out" 2>&1 &&
    grep -q '^loaded step 600$' "$tmp/load.out"
report $? "hogwild: singa.load takes step 600" "$tmp/load.out"

[ "$failed" -eq 0 ] && rm -rf "$tmp"
done_testing

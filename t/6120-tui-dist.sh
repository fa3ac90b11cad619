# The workbench on a distributed job (Downpour, two worker groups, in one process): a loss
# series and a legend entry per group, traffic counters from the runtime that grow while it
# trains, the topology's workers and server with the job's state, singa.stats() in the console,
# the plugins on the progress panel, and the last job's counters kept after it ends.  Then the
# same job in 3 processes, the workbench being rank 0; and quitting an AllReduce job whose group
# lives in 2 processes.
# Run by `make check` with SINGA_TUI and top_srcdir set; prints TAP.
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
tmp=t/6120-tui-dist.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
TUI_TEST_SECONDS=${TUI_TEST_SECONDS:-120}
. "$top_srcdir/t/tmux.sh"

# 8x8 generated images (t/testdata.lua), a small MLP with the plugin activation kSwish.
cat >"$tmp/dist.lua" <<'LUA'
-- A tiny Downpour job for the workbench's tests: two worker groups, one server; "procs": in 3
-- processes; "sync": AllReduce, a group of 2 workers in 2 processes.  arg[3]: checkpoint_path,
-- arg[4] "resume": resume from it.
local singa = require "singa"
local td = require "testdata"
local procs = arg[2] == "procs" or arg[2] == "sync" -- the data exists: the ranks would write it at once
local img, lab = "data/images-idx3-ubyte", "data/labels-idx1-ubyte"
if not procs then img, lab = td.idx("data", 256, 4) end
singa.train{
  name = "dist", seed = 1, train_steps = tonumber(arg[1]) or 100000000, disp_freq = 1000,
  test_freq = 1000, test_steps = 2, checkpoint_path = arg[3], resume = arg[4] == "resume",
  cluster = arg[2] == "sync" and singa.cluster.allreduce{ workers = 2, procs = 2, heartbeat_timeout = 2 }
    or singa.cluster.downpour{ groups = 2, procs = procs and 3 or 1, heartbeat_timeout = 2, workspace = "ws" },
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = { layer = {
    { name = "data", type = "kIDXData", batchsize = 16, images = img, labels = lab },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 16 },
    { name = "swish", type = "kSwish", srclayer = "fc1" },
    { name = "fc2", type = "kInnerProduct", srclayer = "swish", num_output = 4 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc2", "label" } },
  } },
}
LUA

# The messages the stub sent to the server (the "sent" total of its "update" row), as a number.
update_sent() {
    sed -n 's/.*│ update  *server 0\.0  *[^ ]*  *[^ ]*  *\([0-9.]*[kMG]*\) .*/\1/p' "$1" | head -n 1 |
        awk '/k$/ { print $0 * 1e3; next } /M$/ { print $0 * 1e6; next } /G$/ { print $0 * 1e9; next } { print $0 + 0 }'
}

start_tui -- dist.lua 100000000 downpour ck-downpour
wait_for 'worker 0, group 1: waiting' 20 && grep -q 'no messages yet' "$tmp/screen.txt"
report $? "before the start key: the topology shows both groups waiting, no messages yet" "$tmp/screen.txt"
keys r
wait_for 'train g0 [0-9][^ ]*  .*train g1 [0-9][^ ]*  .*test g0 [0-9]' 20
report $? "the loss panel has a legend entry per worker group (g0 and g1), and the test's" "$tmp/screen.txt"
wait_for 'worker 0, group 1: running' 10 && grep -q 'process 0 on ' "$tmp/screen.txt" &&
    grep -q 'server 0, group 0: running' "$tmp/screen.txt" &&
    grep -q 'worker 0, group 0: running  step [0-9]' "$tmp/screen.txt" &&
    grep -q 'worker 0, group 1: running  step [0-9]' "$tmp/screen.txt" &&
    [ "$(grep -c '│ worker [0-9]*, group [0-9]*: ' "$tmp/screen.txt")" -eq 2 ]
report $? "the topology lists the server and the worker of each group, running, with the group's step" "$tmp/screen.txt"
grep -q 'plugin .*swish (kSwish)' "$tmp/screen.txt"
report $? "the progress panel lists the loaded plugin swish with its type kSwish" "$tmp/screen.txt"

wait_for '│ update  *server 0\.0 ' 10 && cp "$tmp/screen.txt" "$tmp/traffic1.txt"
sent1=$(update_sent "$tmp/traffic1.txt")
sleep 2.5
screen >"$tmp/traffic2.txt"
sent2=$(update_sent "$tmp/traffic2.txt")
awk -v a="${sent1:-0}" -v b="${sent2:-0}" 'BEGIN { exit !(a > 0 && b > a) }'
report $? "the traffic panel's update messages to the server grow between two captures (${sent1:-none}, then ${sent2:-none})" "$tmp/traffic2.txt"
grep -q '│ update-reply  *server 0\.0 ' "$tmp/traffic2.txt" && grep -q '│ update  *worker 1\.0 ' "$tmp/traffic2.txt" &&
    grep -q 'Message traffic ([0-9]* of [0-9]* rows)' "$tmp/traffic2.txt"
report $? "... with a row per message type and peer, the busiest first" "$tmp/traffic2.txt"

s1=$(sed -n 's/.*│ update  *server 0\.0  *\([0-9.]*[kMG]*\) .*/\1/p' "$tmp/traffic2.txt" | head -n 1)
[ -n "$s1" ] && [ "$s1" != 0 ]
report $? "... and a message rate ($s1 msg/s)" "$tmp/traffic2.txt"

keys :
keys 'local s = singa.stats(); print("rows " .. #s.traffic .. " rank " .. s.rank)' Enter
wait_for 'rows [1-9][0-9]* rank 0' 10
report $? "the console evaluates singa.stats() during the run" "$tmp/screen.txt"
keys Escape

keys p
wait_for 'worker 0, group 1: paused' 10 && grep -q 'server 0, group 0: paused' "$tmp/screen.txt"
report $? "p pauses: every node shows the job's state" "$tmp/screen.txt"
keys p
wait_for 'worker 0, group 1: running' 10
report $? "p again: running" "$tmp/screen.txt"

# A checkpoint asked for in a job of two asynchronous groups: each writes its state into it.
keys c
written() { # the log panel scrolls fast: the workspace's log keeps the line; group 1 writes its own file
    grep -q 'checkpoint written: ' "$tmp/ws/rank0.log" && ls "$tmp/ck-downpour" | grep -q '\.w1\.0\.ckpt$'
}
for _ in $(seq 50); do written && break; sleep 0.2; done
written && wait_for 'worker 0, group 1: running' 5
report $? "c: a job of two worker groups writes a checkpoint with both groups' states, and goes on" "$tmp/screen.txt"

keys w
i=0
while [ $i -lt 25 ] && [ ! -s "$tmp/dist-plot.txt" ]; do sleep 0.2; i=$((i + 1)); done
grep -q '^[0-9]*,train,0,' "$tmp/dist-metrics.csv" && grep -q '^[0-9]*,train,1,' "$tmp/dist-metrics.csv"
report $? "the exported metrics hold a series for each group" "$tmp/dist-metrics.csv"
keys q y
restored 0
report $? "q y quits, exit 0" "$tmp/screen.txt"

# A job that ends keeps its final counters and shows its nodes finished.
start_tui -- --run dist.lua 3000
wait_for 'worker 0, group 1: finished' 30
report $? "a distributed job that ends: its nodes show finished" "$tmp/screen.txt"
sent=$(update_sent "$tmp/screen.txt")
awk -v a="${sent:-0}" 'BEGIN { exit !(a >= 3000) }'
report $? "... and the traffic panel keeps its last counters (${sent:-none} updates to the server)" "$tmp/screen.txt"
keys q
restored 0
report $? "q quits at once, exit 0" "$tmp/screen.txt"

# The job in 3 processes (singa-tui --procs 3 FILE): the workbench is rank 0 and shows every
# process, the other ranks' traffic from their heartbeats, and a lost process as dead.
rank_pid() {
    for p in $(pgrep -P "$(tui_pid)"); do
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "SINGA_RANK=$1" && echo "$p"
    done
}
start_tui TMPDIR="$PWD/$tmp" -- --procs 3 --run dist.lua 100000000 procs # the ranks' logs stay in $tmp
# Each waited for in turn: under ASan rank 2 may be listed before group 1's worker runs.
wait_for 'process 2 on ' 30 && wait_for 'process 1 on ' 10 && wait_for 'worker 0, group 1: running' 30 &&
    wait_for 'server 0, group 0: running' 10
report $? "--procs 3: the topology shows the three processes and what each holds" "$tmp/screen.txt"
wait_for 'train g0 [0-9][^ ]*  .*train g1 [0-9]' 20
report $? "... and the loss panel plots group 1, led in rank 1, too" "$tmp/screen.txt"
keys :
for _ in 1 2 3 4 5 6 7 8 9 10; do # asked again until a heartbeat has brought them
    keys 'local n = 0 for _, t in ipairs(singa.stats().traffic) do if t.rank == 2 then n = n + 1 end end print("rank2 rows " .. n)' Enter
    wait_for 'rank2 rows [1-9]' 2 && break
done
grep -q 'rank2 rows [1-9]' "$tmp/screen.txt" && wait_for '│ proc type ' 10 # the panel reads them once a second
report $? "... and rank 0 has rank 2's traffic, from its heartbeats, in a panel with a proc column" "$tmp/screen.txt"
keys Escape
wait_for 'Message traffic .*busiest process 0-2 [0-9.]*[kMG]\{0,1\}B/step' 10
report $? "... whose title says what a step moves on rank 0's busiest link, to the server's process" "$tmp/screen.txt"

# Pause reaches the other processes with rank 0's heartbeats: rank 1's updates stop, then go on.
rank1_updates() { # asks the console; prints the answer
    keys : 'local n = 0 for _, t in ipairs(singa.stats().traffic) do if t.rank == 1 and t.type == "update" then n = n + t.sent end end print("r1 updates " .. n .. " #' "$1" '")' Enter
    wait_for "r1 updates [0-9]* #$1 " 5 >/dev/null
    grep -o "r1 updates [0-9]* #$1 " "$tmp/screen.txt" | tail -n 1 | awk '{ print $3 }'
    keys Escape
}
keys p
sleep 2
u1=$(rank1_updates a)
sleep 2
u2=$(rank1_updates b)
keys p
sleep 2
u3=$(rank1_updates c)
echo "# rank 1's updates: $u1 and $u2 while paused, $u3 after resuming"
[ -n "$u1" ] && [ "$u1" -gt 0 ] && [ "$u1" = "$u2" ] && [ -n "$u3" ] && [ "$u3" -gt "$u2" ]
report $? "p pauses rank 1's worker too, and p resumes it" "$tmp/screen.txt"
kill -9 "$(rank_pid 1)"
wait_for 'worker 0, group 1: dead' 20 && grep -q 'worker 0, group 0: running' "$tmp/screen.txt"
report $? "a killed process's worker shows dead; the asynchronous job goes on" "$tmp/screen.txt"
! grep -q 'singa-tui: rank 1 (pid' "$tmp/screen.txt"
report $? "the launcher tells of the loss only once the workbench has ended, not over it" "$tmp/screen.txt"
keys q y
restored 137
report $? "q y quits, the other ranks end, and --procs exits with the killed rank's status 137" "$tmp/screen.txt"

# Quitting stops a synchronous group across processes at one step: rank 0's heartbeats carry the
# stop to rank 1, and rank 0's updates of its last step tell rank 1's stub where the group ends,
# so no worker waits for another's next gradient.  Every rank ends well, well before the
# workbench would give up on the job (30 s).  A checkpoint asked for travels the same way.
start_tui TMPDIR="$PWD/$tmp" -- --procs 2 --run dist.lua 100000000 sync ck
wait_for 'step   [1-9][0-9]' 30

# A checkpoint asked for there is written at one step by both processes: its updates of the step
# before tell rank 1, whose worker writes its state and whose server its shard.
keys c
wait_for 'checkpoint written: .*/step[0-9]*\.\*\.ckpt' 20
at=$(grep -o 'checkpoint written: .*/step[0-9]*\.\*\.ckpt' "$tmp/screen.txt" | sed 's/.*step0*\([0-9]*\)\..*/\1/' | head -n 1)
at9=$(printf %09d "${at:-0}")
for _ in $(seq 50); do # worker 0.1 writes its state apart from the message, which the shards end
    ls "$tmp/ck" >"$tmp/ck.ls"
    [ "$(wc -l <"$tmp/ck.ls")" -ge 4 ] && break
    sleep 0.1
done
[ -n "$at" ] && [ "$(tr '\n' ' ' <"$tmp/ck.ls")" = "step$at9.s0.0.ckpt step$at9.s0.1.ckpt step$at9.w0.0.ckpt step$at9.w0.1.ckpt " ]
report $? "c in AllReduce over 2 processes: both workers' states and both servers' shards of step ${at:-none}" "$tmp/ck.ls"
# "c" at the quit prompt: the checkpoint is written at the step the group stops before, then
# every rank ends.
t0=$(date +%s)
keys q c
restored 0 && took=$(($(date +%s) - t0)) && echo "# ended $took s after q c" && [ "$took" -le 10 ] &&
    ! grep -q 'did not stop\|rank 1 (pid' "$tmp/screen.txt"
report $? "AllReduce in 2 processes: q c stops both ranks at once, exit 0" "$tmp/screen.txt"
ls "$tmp/ck" >"$tmp/ck.ls"
last9=$(sed -n 's/^step\([0-9]*\)\.s0\.0\.ckpt$/\1/p' "$tmp/ck.ls" | tail -n 1)
last=$(echo "$last9" | sed 's/^0*//')
[ -n "$last" ] && [ "$last" -gt "${at:-0}" ] && [ "$(grep -c "^step$last9\.[sw]0\.[01]\.ckpt$" "$tmp/ck.ls")" -eq 4 ]
report $? "... after writing every shard and state of step ${last:-none}" "$tmp/ck.ls"
(cd "$tmp" && timeout 60 "$SINGA_TUI" --procs 2 -e dist.lua $((${last:-0} + 5)) sync ck resume) >"$tmp/resumed.out" 2>&1 &&
    grep -q "resumed from ck/step$last9\.\*\.ckpt (step ${last:-none})" "$tmp/resumed.out" &&
    grep -q "step $((${last:-0} + 5)) " "$tmp/resumed.out"
report $? "... from which the job resumes, whole in both processes, and trains on" "$tmp/resumed.out"

tui_done

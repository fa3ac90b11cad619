# Attaching the workbench to a headless job (singa-tui --listen ADDR -e FILE, then
# singa-tui --attach ADDR): its loss advances, with the history from before attaching; a
# read-only attach cannot pause, a --control one pauses and resumes; detaching leaves the job
# running; a 3-process job shows every group; --open shows a finished run's plot; a job with
# cluster.curve and cluster.monitor lets in only its key; and the refusals: nothing listening
# (within 2 s), a corrupt or missing metrics file, a bad cluster.monitor.
# Run by `make check` with SINGA_TUI and top_srcdir set; prints TAP.
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
tmp=t/6200-tui-attach.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
TUI_TEST_SECONDS=${TUI_TEST_SECONDS:-90}
# A sanitizer slows the program's start (the wait itself is 1 s, as the error says).
[ -n "${ASAN_OPTIONS:-}${SINGA_TEST_TSAN:-}" ] && limit_ms=4000 || limit_ms=2000
. "$top_srcdir/t/tmux.sh"
jobs_pids=
trap 'kill $jobs_pids 2>/dev/null; rm -f /tmp/singa-6200-$$.sock /tmp/singa-6200-$$-curve.sock; tmux -L "$tmux_base-second" kill-server >/dev/null 2>&1; cleanup' EXIT

# A small MLP on 8x8 generated images (t/testdata.lua); "procs": Downpour, 2 groups in 3
# processes; "curve": CURVE with the key pair keys/job, listening at arg[2] (cluster.monitor).
cat >"$tmp/job.lua" <<'LUA'
local singa = require "singa"
local td = require "testdata"
local img, lab = "data/images-idx3-ubyte", "data/labels-idx1-ubyte"
if arg[1] ~= "procs" then img, lab = td.idx("data", 256, 4) end
singa.train{
  name = "attach", seed = 1, train_steps = 100000000, disp_freq = 100, test_freq = 2000, test_steps = 2,
  cluster = arg[1] == "procs" and singa.cluster.downpour{ groups = 2, procs = 3, heartbeat_timeout = 2 }
    or arg[1] == "curve" and { monitor = { address = arg[2] },
                               curve = { secret_key_file = "keys/job.key", public_keys_dir = "keys/allowed" } }
    or arg[1] == "bad" and { monitor = { control = true } } or nil,
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = { layer = {
    { name = "data", type = "kIDXData", batchsize = 16, images = img, labels = lab },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 64 },
    { name = "relu", type = "kReLU", srclayer = "fc1" },
    { name = "fc2", type = "kInnerProduct", srclayer = "relu", num_output = 4 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc2", "label" } },
  } },
}
LUA
# A short path of fixed length: the workbench's end line names it and must fit the log panel (and
# a Unix socket's path is limited to 107 bytes, which a deep build tree would pass).
sock="ipc:///tmp/singa-6200-$$.sock"
(cd "$tmp" && exec "$SINGA_TUI" --listen "$sock" --control --metrics run.jsonl -e job.lua) >"$tmp/job.out" 2>&1 &
job=$!
jobs_pids="$job"

# Nothing listens: a clear error within 2 s, exit non-zero (timed in the pane).
printf '#!/bin/sh\nt0=$(date +%%s%%N); "%s" "$@"; rc=$?; echo "took $((($(date +%%s%%N) - t0) / 1000000)) ms"; exit $rc\n' \
    "$SINGA_TUI" >"$tmp/timed.sh" && chmod +x "$tmp/timed.sh"
SINGA_TUI="$PWD/$tmp/timed.sh" start_tui -- --attach tcp://127.0.0.1:1
wait_for 'EXIT=1' 5 && grep -q 'no job answers at tcp://127.0.0.1:1' "$tmp/screen.txt" &&
    ms=$(sed -n 's/^took \([0-9]*\) ms/\1/p' "$tmp/screen.txt") && [ "$ms" -le $limit_ms ]
report $? "attach where nothing listens: an error naming the address, exit 1, in ${ms:-?} ms (at most $limit_ms)" "$tmp/screen.txt"

# The job has trained a while before anyone attaches.
for _ in $(seq 100); do [ "$(wc -l <"$tmp/run.jsonl" 2>/dev/null || echo 0)" -ge 20 ] && break; sleep 0.1; done
before=$(tail -n 1 "$tmp/run.jsonl" | sed 's/{"step": \([0-9]*\),.*/\1/')
start_tui -- --attach "$sock"
wait_for 'train [0-9][^ ]*' 10 && s1=$(step_now) && sleep 0.5 && s2=$(step_now) &&
    echo "# the job was at step $before before attaching; the workbench showed $s1, then $s2" &&
    [ "$s1" -gt "$before" ] && [ "$s2" -gt "$s1" ]
report $? "--attach: the loss panel plots the job's loss and its step advances" "$tmp/screen.txt"
keys w
for _ in $(seq 25); do [ -s "$tmp/attach-metrics.csv" ] && break; sleep 0.2; done
first=$(sed -n '2s/^\([0-9]*\),train,.*/\1/p' "$tmp/attach-metrics.csv")
[ -n "$first" ] && [ "$first" -lt "$before" ]
report $? "... with the history from before attaching (first point at step ${first:-none}, attached after step $before)" "$tmp/attach-metrics.csv"
# A second workbench at the same time (a tmux server of its own).
T2() { tmux -L "$tmux_base-second" -f /dev/null "$@"; }
T2 new-session -d -x 120 -y 40 "cd '$PWD/$tmp' && env TERM=screen-256color '$SINGA_TUI' --attach '$sock'; sleep 60"
for _ in $(seq 50); do T2 capture-pane -p >"$tmp/second.txt"; grep -q 'train [0-9]' "$tmp/second.txt" && break; sleep 0.2; done
grep -q 'train [0-9]' "$tmp/second.txt" && wait_for 'train [0-9][^ ]*' 1
report $? "a second workbench attaches at the same time" "$tmp/second.txt"
T2 kill-server

# A workbench that stops reading (SIGSTOP) does not hold the job up, and catches up once it goes on.
job_step() { tail -c 3000 "$tmp/job.out" | grep -o 'step [0-9]*' | tail -n 1 | cut -d' ' -f2; }
pid=$(tui_pid)
kill -STOP "$pid" && j1=$(job_step) && sleep 1.5 && j2=$(job_step)
kill -CONT "$pid"
sleep 0.5
w=$(step_now)
echo "# the job went from step $j1 to $j2 while the workbench was stopped; the workbench then showed $w"
[ "$j2" -gt $((j1 + 1000)) ] && [ "$w" -ge "$j2" ]
report $? "a stopped workbench does not hold the job up, and shows its step once it goes on" "$tmp/screen.txt"
keys p
wait_for 'read-only: attach with --control' 5 && s1=$(step_now) && sleep 0.5 && [ "$(step_now)" -gt "$s1" ]
report $? "a read-only attach cannot pause: the key says so and the job goes on" "$tmp/screen.txt"
keys :
wait_for 'the Lua console is off when attached' 5
report $? "the console is off, with a message" "$tmp/screen.txt"
keys q
restored 0 && kill -0 "$job"
report $? "q detaches (exit 0) and the job goes on" "$tmp/screen.txt"

# --control: p pauses the job (its step stops), p again resumes it.
start_tui -- --attach "$sock" --control
wait_for 'train [0-9][^ ]*' 10
keys p
wait_for 'worker 0, group 0: paused' 10 && s1=$(step_now) && sleep 0.5 && s2=$(step_now) && [ "$s1" = "$s2" ]
report $? "--control: p pauses the job, whose step stays at ${s1:-none}" "$tmp/screen.txt"
keys p
wait_for 'worker 0, group 0: running' 10 && sleep 0.5 && s3=$(step_now) && [ "$s3" -gt "$s2" ]
report $? "... and p resumes it (step ${s3:-none})" "$tmp/screen.txt"
keys ]
wait_for 'lr 0\.1 (x2)' 5
report $? "] doubles the job's learning rate scale, which its status brings back" "$tmp/screen.txt"
keys S
for _ in $(seq 50); do kill -0 "$job" 2>/dev/null || break; sleep 0.2; done
! kill -0 "$job" 2>/dev/null && wait "$job"
report $? "S stops the job, which ends well" "$tmp/job.out"
wait_for "has ended (q leaves)" 5
report $? "... and the workbench says that it has ended" "$tmp/screen.txt"
keys q
restored 0
report $? "q leaves" "$tmp/screen.txt"

# A finished run opened from its metrics file: the plot, read-only.
start_tui -- --open run.jsonl
wait_for 'train [0-9][^ ]*' 10 && grep -q "a finished run's metrics" "$tmp/screen.txt"
report $? "--open run.jsonl: the loss panel plots the finished run" "$tmp/screen.txt"
keys p
wait_for 'a finished run (--open): nothing to steer' 5
report $? "... read-only" "$tmp/screen.txt"
keys q
restored 0
report $? "q leaves, exit 0" "$tmp/screen.txt"
printf 'step,phase,group,loss,accuracy,images_per_sec\n10,train,0,1.5,0.25,100\n20,train,0,0.75,,100\n20,test,0,0.8,0.5,\n' \
    >"$tmp/run.csv"
start_tui -- --open run.csv
wait_for 'train 1\.125/25\.0%' 10 && grep -q 'test 0\.8/50\.0%' "$tmp/screen.txt" && grep -q 'step   20/20' "$tmp/screen.txt"
report $? "--open of a CSV metrics file: its train and test values, its last step" "$tmp/screen.txt"
keys q
restored 0
head -n 3 "$tmp/run.jsonl" >"$tmp/bad.jsonl" && echo '{"step": 7, "phase": "tra' >>"$tmp/bad.jsonl"
start_tui -- --open bad.jsonl
wait_for 'EXIT=1' 5 && grep -q 'bad.jsonl:4: not a metrics record' "$tmp/screen.txt"
report $? "--open of a corrupt file: an error naming the file and line, exit 1" "$tmp/screen.txt"
start_tui -- --open missing.jsonl
wait_for 'EXIT=1' 5 && grep -q 'cannot open missing.jsonl: No such file' "$tmp/screen.txt"
report $? "--open of a missing file: an error naming it, exit 1" "$tmp/screen.txt"

# A job in 3 processes: rank 0 listens, and the workbench shows both groups and every process.
(cd "$tmp" && exec "$SINGA_TUI" --listen "$sock" --procs 3 -e job.lua procs) >"$tmp/procs.out" 2>&1 &
job=$!
jobs_pids="$job"
sleep 0.5
for _ in $(seq 20); do
    start_tui -- --attach "$sock"
    wait_for 'EXIT=1\|train g0' 10
    grep -q 'train g0' "$tmp/screen.txt" && break
    sleep 0.5 # the job was still meeting its processes
done
wait_for 'train g0 [0-9][^ ]*  .*train g1 [0-9]' 20 && wait_for 'process 2 on ' 10 && grep -q 'process 1 on ' "$tmp/screen.txt"
report $? "--procs 3: the attached workbench plots both groups and shows the three processes" "$tmp/screen.txt"
wait_for '│ 1\.0  *[0-9]  *[0-9.]' 10 && grep -q '7 Workers' "$tmp/screen.txt" && grep -q '│ 0\.0  *[0-9]  *[0-9.]' "$tmp/screen.txt"
report $? "... and the Workers panel times the worker of each group" "$tmp/screen.txt"
keys q
restored 0 && kill -0 "$job"
report $? "q detaches; the job goes on" "$tmp/screen.txt"
kill "$job"
wait "$job" 2>/dev/null

# cluster.monitor with CURVE: only a workbench with the job's key attaches.
"$SINGA_TUI" --curve-keygen "$tmp/keys/job" >/dev/null && "$SINGA_TUI" --curve-keygen "$tmp/keys/other" >/dev/null &&
    mkdir -m 700 "$tmp/keys/allowed" && cp "$tmp/keys/job.pub" "$tmp/keys/allowed/"
sock2="ipc:///tmp/singa-6200-$$-curve.sock"
(cd "$tmp" && exec "$SINGA_TUI" -e job.lua curve "$sock2") >"$tmp/curve.out" 2>&1 &
job=$!
jobs_pids="$job"
for _ in $(seq 50); do grep -q 'step [0-9]' "$tmp/curve.out" && break; sleep 0.1; done
start_tui -- --attach "$sock2"
wait_for 'EXIT=1' 5 && grep -q "no job answers at $sock2" "$tmp/screen.txt" && ! grep -q 'Loss' "$tmp/screen.txt"
report $? "CURVE: a workbench without a key is refused (exit 1), nothing shown" "$tmp/screen.txt"
start_tui -- --attach "$sock2" --curve-key keys/other.key
wait_for 'EXIT=1' 5
report $? "... and one with a key the job does not list" "$tmp/screen.txt"
start_tui -- --attach "$sock2" --curve-key keys/job.key
wait_for 'train [0-9][^ ]*' 10
report $? "... the job's key attaches" "$tmp/screen.txt"
keys q
restored 0
kill "$job"
wait "$job" 2>/dev/null
(cd "$tmp" && "$SINGA_TUI" -e job.lua bad) >"$tmp/bad.out" 2>&1
[ $? -ne 0 ] && grep -q "cluster.monitor: needs 'address'" "$tmp/bad.out"
report $? "a cluster.monitor without an address: a clear error, exit non-zero" "$tmp/bad.out"

tui_done

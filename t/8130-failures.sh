# How a multi-process job meets strangers and failures: a malformed join from a stranger while
# rank 0 waits for the others is dropped and counted; a killed process is found at once (its
# connections close), not after heartbeat_timeout; a process stuck in an endless Lua loop while
# the others wait on it is found hung within heartbeat_timeout; a coordinator port in use ends
# every rank within seconds.  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8130-failures.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

cat >"$tmp/job.lua" <<'EOF'
-- job.lua MODE OUT [STEPS [HEARTBEAT_TIMEOUT]]: AllReduce in 2 processes (MODE allreduce; hang:
-- rank 1's kLua updater loops for ever at step 5, hang0: rank 0's, hang-elastic: rank 1's, the job
-- checkpointing every 2 steps; slow: rank 1's takes 0.3 s a call for 8 steps) or
-- Sandblaster in 3 (sandblaster); rank 0 writes the messages it dropped to OUT.
local singa = require "singa"
local td = require "testdata"
local mode, out = arg[1], arg[2]
local steps, beat = tonumber(arg[3]) or 50, tonumber(arg[4]) or 30
local dir = out:match("^(.*)/")
local cluster = mode == "sandblaster" and singa.cluster.sandblaster{ workers = 2, procs = 3 }
                or singa.cluster.allreduce{ workers = 2, procs = 2 }
cluster.heartbeat_timeout, cluster.join_timeout = beat, 30
local updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.05 } }
if mode:match("^hang") or mode == "slow" then -- slow: rank 1 spends 0.3 s in each call of steps 2-9
  updater = { type = "kLua", learning_rate = { type = "kFixed", base_lr = 0.05 },
              update = function(step, param, grad, state, lr)
                if step == 5 and mode:match("^hang") and singa.rank() == (mode == "hang0" and 0 or 1) then
                  while true do end
                end
                if step >= 2 and step < 10 and singa.rank() == 1 and mode == "slow" then
                  os.execute("sleep 0.3") -- wall time: a loaded machine stretches CPU time
                end
                param:axpy(-lr, grad)
              end }
end
local r = singa.train{
  name = "failures", seed = 7, train_steps = steps, disp_freq = 10,
  checkpoint_freq = mode == "hang-elastic" and 2 or nil, overwrite = true,
  checkpoint_path = mode == "hang-elastic" and dir .. "/ck-elastic" or nil,
  cluster = cluster, updater = updater,
  neuralnet = td.mlp(dir .. "/data/images-idx3-ubyte", dir .. "/data/labels-idx1-ubyte"),
}
if singa.rank() == 0 then
  local f = assert(io.open(out, "w"))
  f:write(string.format("dropped %d\n", r.stats.dropped))
  f:close()
end
print(string.format("rank %d: %d steps", singa.rank(), r.steps))
EOF

gen_data

# Seconds (with a fraction) since $1, a `date +%s.%N`.
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
within() { awk -v t="$1" -v b="$2" 'BEGIN { exit !(t <= b) }'; }
# Waits (up to 20 s) until something listens on loopback port $1.
listening() {
    for _ in $(seq 200); do
        python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$1" 2>/dev/null &&
            return 0
        sleep 0.1
    done
    return 1
}

# 1. Malformed joins from a stranger while rank 0 waits for rank 1: dropped and counted.
port=$(free_port)
SINGA_RANK=0 SINGA_SIZE=2 SINGA_COORDINATOR=tcp://127.0.0.1:$port \
    timeout 90 "$SINGA_TUI" -e "$tmp/job.lua" allreduce "$tmp/join.txt" >"$tmp/join0.out" 2>&1 &
rank0=$!
listening "$port" && timeout 30 t/fuzz-peers --joins 40 "tcp://127.0.0.1:$port" >"$tmp/join.fuzz" 2>&1
fuzz_rc=$?
cat "$tmp/join.fuzz"
SINGA_RANK=1 SINGA_SIZE=2 SINGA_COORDINATOR=tcp://127.0.0.1:$port \
    timeout 90 "$SINGA_TUI" -e "$tmp/job.lua" allreduce "$tmp/join.txt" >"$tmp/join1.out" 2>&1
rc1=$?
wait "$rank0"
rc0=$?
dropped=$(awk '$1 == "dropped" { print $2 }' "$tmp/join.txt" 2>/dev/null)
echo "# rank 0 exited $rc0, rank 1 $rc1; rank 0 dropped ${dropped:-?}" | tee -a "$tmp/join0.out"
[ $fuzz_rc -eq 0 ] && [ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] && [ "${dropped:-0}" -ge 40 ]
report $? "40 malformed joins from a stranger during the meeting: dropped and counted, the job ends well" "$tmp/join0.out"

# Starts `--procs` MODE (2 or 3 processes) for ever in the background with heartbeat_timeout
# $3; sets launcher and out; waits for training.
start_long() {
    out="$tmp/$2.out"
    timeout 120 "$SINGA_TUI" --procs "$4" -e "$tmp/job.lua" "$1" "$tmp/x.txt" 1000000 "$3" >"$out" 2>&1 &
    launcher=$!
    for _ in $(seq 300); do grep -q '^step ' "$out" && break; sleep 0.1; done
}
# Waits (up to $1 s) until none of the pids $2... lives; sets alive.
wait_gone() {
    limit=$1
    shift
    for _ in $(seq $((limit * 20))); do
        alive=0
        for p in "$@"; do kill -0 "$p" 2>/dev/null && alive=1; done
        [ $alive -eq 0 ] && return
        sleep 0.05
    done
}

# 2. A killed process is found by its closed connections, long before heartbeat_timeout (30 s).
for victim in "1 workers 0.1" "2 servers 0.0" "0 workers 0.0"; do
    set -- $victim
    rank=$1
    shift
    role="$*"
    start_long sandblaster "kill$rank" 30 3
    pid=$(rank_pid "$rank")
    survivors=
    for r in 0 1 2; do [ "$r" -ne "$rank" ] && survivors="$survivors $(rank_pid "$r")"; done
    t0=$(date +%s.%N)
    kill -9 "$pid"
    wait_gone 20 $survivors
    took=$(since "$t0")
    wait "$launcher"
    rc=$?
    echo "# the survivors of rank $rank ended $took s after its SIGKILL" | tee -a "$out"
    [ $rc -ne 0 ] && [ $alive -eq 0 ] && within "$took" 3 &&
        grep -q "rank $rank ($role) at tcp://127.0.0.1:[0-9]* died: its connection closed and it does not answer" "$out"
    report $? "SIGKILL of rank $rank ($role), heartbeat_timeout 30 s: the others end within 3 s, naming it" "$out"
done

# 3. Rank 1 loops for ever in its kLua updater and keeps beating: rank 0, waiting on it, finds it
# hung (busy, no progress) within heartbeat_timeout (3 s) and ends naming it; the hung rank is
# told, its Lua loop interrupted, and it ends too (status SINGA_EXIT_HUNG, 70), the launcher with
# it.
t0=$(date +%s.%N)
timeout 120 "$SINGA_TUI" --procs 2 -e "$tmp/job.lua" hang "$tmp/x.txt" 1000000 3 >"$tmp/hang.out" 2>&1 &
launcher=$!
for _ in $(seq 300); do pid0=$(rank_pid 0); [ -n "$pid0" ] && break; sleep 0.1; done
wait_gone 60 $pid0
took0=$(since "$t0")
wait "$launcher"
rc=$?
took=$(since "$t0")
echo "# rank 0 ended after $took0 s, the launcher after $took s, status $rc" | tee -a "$tmp/hang.out"
[ $rc -ne 0 ] && [ $rc -ne 124 ] && within "$took0" 20 && within "$took" "$(awk -v t="$took0" 'BEGIN { print t + 2 }')" &&
    grep -q "rank 1 (workers 0.1; servers 0.1) at tcp://127.0.0.1:[0-9]* hung: busy for 3 s (heartbeat_timeout) without progress" "$tmp/hang.out" &&
    grep -q "rank 0 found this process (rank 1) hung: .*; a Lua function of this process (a kLua updater or schedule?) still ran, without end, and was interrupted" "$tmp/hang.out" &&
    grep -q "rank 1 (pid [0-9]*) exited with status 70" "$tmp/hang.out"
report $? "rank 1 in an endless kLua loop: rank 0 ends within heartbeat_timeout, naming it hung; rank 1 within 2 s more, saying why" "$tmp/hang.out"

# The same with rank 0 (the coordinator, whose servers the job needs) hung, its ranks started by
# hand (no launcher to end them): rank 1 ends naming it, rank 0 within 2 s of rank 1, status 70.
port=$(free_port)
t0=$(date +%s.%N)
ranks=
for r in 0 1; do
    ( SINGA_RANK=$r SINGA_SIZE=2 SINGA_COORDINATOR=tcp://127.0.0.1:$port \
        timeout 60 "$SINGA_TUI" -e "$tmp/job.lua" hang0 "$tmp/x.txt" 1000000 3 >"$tmp/hang0-$r.out" 2>&1
      echo "$? $(since "$t0")" >"$tmp/hang0-$r.end" ) &
    ranks="$ranks $!"
done
wait $ranks
for r in 0 1; do read -r rc took <"$tmp/hang0-$r.end"; eval "rc$r=\$rc took$r=\$took"; done
echo "# rank 0 (hung) exited $rc0 after $took0 s, rank 1 $rc1 after $took1 s" | tee -a "$tmp/hang0-0.out"
[ "$rc0" -eq 70 ] && [ "$rc1" -eq 1 ] && within "$took1" 20 && within "$took0" "$(awk -v t="$took1" 'BEGIN { print t + 2 }')" &&
    grep -q "rank 0 (workers 0.0; servers 0.0) at tcp://127.0.0.1:$port hung: busy for 3 s (heartbeat_timeout) without progress" "$tmp/hang0-1.out" &&
    grep -q "rank 1 found this process (rank 0) hung: busy for 3 s (heartbeat_timeout) without progress while the others waited; a Lua function of this process (a kLua updater or schedule?) still ran, without end, and was interrupted" "$tmp/hang0-0.out"
report $? "rank 0 in an endless kLua loop: rank 1 ends naming it hung, rank 0 within 2 s more with status 70, saying why" "$tmp/hang0-0.out"

# An elastic job (--elastic 1): the hung rank 1, interrupted, ends with status 70, which the
# launcher counts lost, and the job starts again on rank 0 alone and finishes.
timeout 120 "$SINGA_TUI" --procs 2 --elastic 1 -e "$tmp/job.lua" hang-elastic "$tmp/x.txt" 40 3 >"$tmp/hang-el.out" 2>&1 &&
    grep -q "rank 1 (pid [0-9]*) exited with status 70" "$tmp/hang-el.out" &&
    grep -q "elastic restart 1: rank 1 lost, the job starts again on the 1 process left" "$tmp/hang-el.out" &&
    grep -q "^rank 0: 40 steps" "$tmp/hang-el.out"
report $? "elastic, rank 1 hung: it ends with status 70, counted lost, and the job finishes on rank 0" "$tmp/hang-el.out"

# ... but a rank slow in its kLua updater (0.3 s a call, several seconds in all) still makes
# progress: no hang with heartbeat_timeout 2 s.
timeout 120 "$SINGA_TUI" --procs 2 -e "$tmp/job.lua" slow "$tmp/x.txt" 12 2 >"$tmp/slow.out" 2>&1 &&
    grep -q '^rank 1: 12 steps' "$tmp/slow.out" && ! grep -q hung "$tmp/slow.out"
report $? "rank 1 slow in its kLua updater for longer than heartbeat_timeout, but progressing: no hang" "$tmp/slow.out"

# 4. The coordinator's port taken by another program: rank 0 cannot listen, and every other rank
# finds something there that does not speak ZeroMQ; all end within 2 s (join_timeout 30 s).  A
# rank that gave up on the coordinator ends at once: within 1.4 s of its connection (1 s, its wait
# for a handshake, and its exit), not 1.5 s or more (its unsent join held the exit 0.5 s more).
# The other program accepts every connection, holds it and prints the time it came.
cat >"$tmp/busy.py" <<'EOF'
import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1], flush=True)
held = []
while True:
    c, _ = s.accept(); held.append(c); print("%.3f" % time.time(), flush=True)
EOF
python3 "$tmp/busy.py" >"$tmp/port" &
busy_pid=$!
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.2; done
busy=$(head -1 "$tmp/port")
t0=$(date +%s.%N)
ranks=
for r in 0 1; do
    ( SINGA_RANK=$r SINGA_SIZE=2 SINGA_COORDINATOR=tcp://127.0.0.1:$busy \
        timeout 60 "$SINGA_TUI" -e "$tmp/job.lua" allreduce "$tmp/x.txt" >"$tmp/busy$r.out" 2>&1
      echo "$? $(since "$t0") $(date +%s.%N)" >"$tmp/busy$r.end" ) &
    ranks="$ranks $!"
done
wait $ranks
for r in 0 1; do read -r rc took end <"$tmp/busy$r.end"; eval "rc$r=\$rc took$r=\$took end$r=\$end"; done
came=$(sed -n 2p "$tmp/port")
gap=$(awk -v a="$came" -v b="$end1" 'BEGIN { printf "%.2f", b - a }')
echo "# by hand: rank 0 exited $rc0 after $took0 s, rank 1 $rc1 after $took1 s, $gap s after its connection came" | tee -a "$tmp/busy1.out"
[ "$rc0" -ne 0 ] && [ "$rc0" -ne 124 ] && [ "$rc1" -ne 0 ] && [ "$rc1" -ne 124 ] && within "$took0" 2 && within "$took1" 2 &&
    [ -n "$came" ] && within "$gap" 1.4 &&
    grep -q "cannot listen on tcp://127.0.0.1:$busy (the coordinator's address): Address already in use" "$tmp/busy0.out" &&
    grep -q "the coordinator's address tcp://127.0.0.1:$busy accepts connections but does not speak ZeroMQ" "$tmp/busy1.out"
report $? "a coordinator port in use, ranks started by hand: both end within 2 s, each saying why" "$tmp/busy1.out"

t0=$(date +%s.%N)
SINGA_COORDINATOR=tcp://127.0.0.1:$busy timeout 60 "$SINGA_TUI" --procs 2 -e "$tmp/job.lua" allreduce "$tmp/x.txt" \
    >"$tmp/busy.out" 2>&1
rc=$?
took=$(since "$t0")
echo "# --procs 2 exited $rc after $took s" | tee -a "$tmp/busy.out"
[ $rc -ne 0 ] && [ $rc -ne 124 ] && within "$took" 2 &&
    grep -q "cannot listen on tcp://127.0.0.1:$busy (the coordinator's address): Address already in use" "$tmp/busy.out" &&
    grep -q "does not speak ZeroMQ" "$tmp/busy.out"
report $? "a coordinator port in use, --procs 2: the job ends within 2 s, every rank saying why" "$tmp/busy.out"
kill "$busy_pid" 2>/dev/null

[ "$failed" -eq 0 ] && rm -rf "$tmp"
done_testing

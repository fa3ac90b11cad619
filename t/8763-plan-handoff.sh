# cluster.plan = "auto" over processes that another launcher started (Open MPI's variables here):
# rank 0's choice reaches the others over the network at the job's coordinator address, not a
# file, and both train it; a rank 0 of another run is not followed; a fake "rank 0" that answers
# garbage, or nothing, leaves rank 1 with its own cluster fields, saying why, within
# $SINGA_PLAN_WAIT.  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8763-plan-handoff.tmp
rm -rf "$tmp" && mkdir -p "$tmp/tmpdir" || exit 1
tmp=$(cd "$tmp" && pwd)
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT
gen_data

cat >"$tmp/job.lua" <<'EOF2'
-- job.lua DATA: the test MLP for 20 steps, its cluster planned.
local singa = require "singa"
local td = require "testdata"
local r = singa.train{
  name = "handoff", seed = 7, train_steps = 20, disp_freq = 0, cluster = { plan = "auto" },
  updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = td.mlp(arg[1] .. "/images-idx3-ubyte", arg[1] .. "/labels-idx1-ubyte"),
}
print(string.format("trained %d steps, loss %.4f", r.steps, r.train.loss))
EOF2

# A fake rank 0 at port $2 that speaks ZeroMQ (ZMTP 3.0, NULL) as a ROUTER: "garbage" answers
# an ask with a line that is no choice, "silent" never answers.
cat >"$tmp/fake.py" <<'EOF2'
import socket, struct, sys, time
mode, port = sys.argv[1], int(sys.argv[2])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen(4)
print("listening", flush=True)
c, _ = s.accept()
def take(n):
    b = b""
    while len(b) < n:
        got = c.recv(n - len(b))
        if not got:
            sys.exit(0)
        b += got
    return b
def frame():
    flags = take(1)[0]
    n = struct.unpack(">Q", take(8))[0] if flags & 2 else take(1)[0]
    return take(n)
c.sendall(b"\xff" + b"\0" * 8 + b"\x7f\x03\x00" + b"NULL".ljust(20, b"\0") + b"\0" * 32)
take(64)
ready = b"\x05READY\x0bSocket-Type" + struct.pack(">I", 6) + b"ROUTER"
c.sendall(b"\x04" + bytes([len(ready)]) + ready)
frame()  # its READY
ask = frame()
print("asked:", ask.decode(), flush=True)
if mode == "garbage":
    c.sendall(b"\x00\x0fhello, rank 1!\n")
time.sleep(10)
EOF2

# ranks PORT RUN0 RUN1: rank 0 and rank 1 started as Open MPI would, at one coordinator, with
# $SINGA_RUN_ID RUN0 and RUN1; their outputs in $tmp/r0.out and $tmp/r1.out, statuses rc0, rc1.
ranks() {
    for r in 0 1; do
        eval "run=\$$((r + 2))"
        TMPDIR=$tmp/tmpdir SINGA_PLAN_WAIT=${wait:-60} OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=2 \
            SINGA_COORDINATOR=tcp://127.0.0.1:$1 SINGA_RUN_ID=$run \
            timeout 120 "$SINGA_TUI" -e "$tmp/job.lua" "$tmp/data" >"$tmp/r$r.out" 2>&1 &
        eval "pid$r=\$!"
    done
    wait "$pid0"; rc0=$?
    wait "$pid1"; rc1=$?
}

# Over the network: both ranks log the same configuration, train it, and no file is left.
ranks "$(free_port)" run1 run1
cat "$tmp/r0.out" "$tmp/r1.out" >"$tmp/both.out"
[ "$(grep -cE '^plan: .* over 2 processes \(link local\), predicted [0-9]+ images/s$' "$tmp/both.out")" = 2 ] &&
    [ "$(grep '^plan: ' "$tmp/both.out" | sed 's/ over .*//' | sort -u | wc -l)" = 1 ] &&
    [ "$(grep -c '^trained 20 steps' "$tmp/both.out")" = 2 ] && [ -z "$(ls -A "$tmp/tmpdir")" ]
report $(( rc0 != 0 || rc1 != 0 || $? )) "cluster.plan = \"auto\" under Open MPI's variables: rank 0's choice reaches rank 1 over the network, both train it, no file in \$TMPDIR (status $rc0, $rc1)" "$tmp/both.out"

# A rank 0 of another run (another $SINGA_RUN_ID) at the address is not followed.
wait=2 ranks "$(free_port)" run2 run3
cat "$tmp/r0.out" "$tmp/r1.out" >"$tmp/other.out"
grep -q "^plan: rank 0's choice did not arrive within 2 s: only a process of another run or job answered at tcp://127.0.0.1:[0-9]* (its key 2 [0-9a-f]* run2, this one's 2 [0-9a-f]* run3): the job runs with its own cluster fields" "$tmp/r1.out" &&
    grep -q "^plan: cannot hand the choice to the other processes: rank(s) 1 did not take it at tcp://127.0.0.1:[0-9]* within 2 s: the job runs with its own cluster fields" "$tmp/r0.out" &&
    ! grep -q '^trained' "$tmp/other.out"
report $(( rc0 == 0 || rc0 == 124 || rc1 == 0 || rc1 == 124 || $? )) "a rank 0 of another run is not followed: rank 1 says so and both fall back (status $rc0, $rc1)" "$tmp/other.out"

# fake MODE: rank 1 alone, at a fake rank 0 of MODE, with $SINGA_PLAN_WAIT 2; its output in
# $tmp/MODE.out, its status rc and its seconds secs.
fake() {
    port=$(free_port)
    python3 "$tmp/fake.py" "$1" "$port" >"$tmp/$1.fake" 2>&1 &
    until_ok grep -q listening "$tmp/$1.fake"
    start=$(date +%s)
    SINGA_PLAN_WAIT=2 OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 SINGA_COORDINATOR=tcp://127.0.0.1:$port \
        timeout 60 "$SINGA_TUI" -e "$tmp/job.lua" "$tmp/data" >"$tmp/$1.out" 2>&1
    rc=$? secs=$(( $(date +%s) - start ))
    cat "$tmp/$1.fake" >>"$tmp/$1.out"
}
fake garbage
grep -q "^plan: rank 0's answer at tcp://127.0.0.1:$port is not a choice: 'hello, rank 1!?': the job runs with its own cluster fields" "$tmp/garbage.out" &&
    grep -q '^asked: singa-plan ask 1 2 ' "$tmp/garbage.out" && [ "$secs" -lt 10 ]
report $(( rc == 0 || rc == 124 || $? )) "a fake rank 0 that answers garbage: rank 1 refuses it naming it and runs its own cluster fields (status $rc, ${secs} s)" "$tmp/garbage.out"
fake silent
grep -q "^plan: rank 0's choice did not arrive within 2 s: no answer at tcp://127.0.0.1:$port: the job runs with its own cluster fields" "$tmp/silent.out" &&
    [ "$secs" -lt 10 ]
report $(( rc == 0 || rc == 124 || $? )) "a fake rank 0 that never answers: rank 1 falls back within \$SINGA_PLAN_WAIT, saying so (status $rc, ${secs} s)" "$tmp/silent.out"

# A process that rejoins cannot hear the choice (rank 0 handed it on as the job started): it says
# so at once instead of waiting.
SINGA_REJOIN=1 OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 SINGA_COORDINATOR=tcp://127.0.0.1:$(free_port) \
    timeout 60 "$SINGA_TUI" -e "$tmp/job.lua" "$tmp/data" >"$tmp/rejoin.out" 2>&1
rc=$?
grep -q "^plan: cannot plan (a process that rejoins (\$SINGA_REJOIN) cannot hear rank 0's choice, handed on as the job started: put the configuration its 'plan: ' line named in the job): the job runs with its own cluster fields" "$tmp/rejoin.out"
report $(( rc == 0 || rc == 124 || $? )) "a process that rejoins says at once that it cannot hear rank 0's choice (status $rc)" "$tmp/rejoin.out"

done_testing

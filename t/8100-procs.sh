# The runtime across processes (singa-tui --procs N over loopback tcp, and ranks launched by
# hand as a launcher would): synchronous frameworks in 3 processes end with exactly the params
# of one worker, an asynchronous one converges, the meeting at the coordinator refuses a process
# that runs another job or has other plugins, bad launches fail within seconds, and a process
# killed (its connections close) or stopped is found out within heartbeat_timeout.  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8100-procs.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

cat >"$tmp/job.lua" <<'EOF'
-- job.lua MODE OUT [STEPS [HEARTBEAT_TIMEOUT [JOIN_TIMEOUT]]]: trains on the test's data with the
-- cluster of MODE; rank 0 writes every param value and the test accuracy to OUT.
local singa = require "singa"
local td = require "testdata"
local mode, out = arg[1], arg[2]
local steps, beat, join = tonumber(arg[3]) or 50, tonumber(arg[4]) or 2, tonumber(arg[5]) or 30
local dir = out:match("^(.*)/")
local common = { heartbeat_timeout = beat, join_timeout = join, workspace = dir .. "/ws-" .. mode }
local clusters = {
  sandblaster = singa.cluster.sandblaster{ workers = 2, servers = 2, procs = 3 },
  allreduce = singa.cluster.allreduce{ workers = 3, procs = 3 },
  downpour = singa.cluster.downpour{ groups = 2, procs = 3 },
}
local cluster = (mode == "plugin" or mode == "curve") and clusters.sandblaster or clusters[mode]
if mode == "curve" then
  common.curve = { secret_key_file = os.getenv("CURVE_KEY"), public_keys_dir = os.getenv("CURVE_PUBS") }
end
for k, v in pairs(cluster and common or {}) do cluster[k] = v end
if mode == "plugin" and singa.rank() == 1 then singa.load_plugin("t/plugins/.libs/double.so") end
local r = singa.train{
  name = "procs", seed = 7, train_steps = steps, disp_freq = 10, test_steps = 4,
  cluster = cluster,
  updater = { type = "kSGD", momentum = 0.9, weight_decay = 1e-4,
              learning_rate = { type = "kStep", base_lr = 0.05, gamma = 0.5, change_freq = 20 } },
  neuralnet = td.mlp(dir .. "/data/images-idx3-ubyte", dir .. "/data/labels-idx1-ubyte"),
}
local rank, size = singa.rank()
if rank == 0 then
  local f = assert(io.open(out, "w"))
  td.write_params(f, r.params)
  f:write(string.format("accuracy %.6f\n", r.test.accuracy))
  f:write(string.format("dropped %d\n", r.stats.dropped))
  local ranks, seen = 0, {}
  for _, t in ipairs(r.stats.traffic) do
    if not seen[t.rank] then seen[t.rank], ranks = true, ranks + 1 end
  end
  f:write(string.format("traffic_ranks %d\n", ranks))
  f:close()
end
print(string.format("rank %d of %d: %d steps, test accuracy %.4f", rank, size, r.steps, r.test.accuracy))
EOF


gen_data

timeout 60 "$SINGA_TUI" -e "$tmp/job.lua" plain "$tmp/plain.txt" >"$tmp/plain.out" 2>&1
report $? "one worker with batch 24 trains (the reference)" "$tmp/plain.out"

# exact OUT [REF]: OUT's params are REF's (default: the reference run's) to 1e-5.
exact() { params_close "$1" "${2:-$tmp/plain.txt}"; }

for mode in sandblaster allreduce; do
    timeout 60 "$SINGA_TUI" --procs 3 -e "$tmp/job.lua" $mode "$tmp/$mode.txt" >"$tmp/$mode.out" 2>&1
    report $? "--procs 3: $mode trains" "$tmp/$mode.out"
    exact "$tmp/$mode.txt"
    report $? "$mode in 3 processes ends with the params of one worker" "$tmp/$mode.out"
done
at='at tcp://127.0.0.1:[0-9]*'
grep -q "^rank 0 of 3 (pid [0-9]*, SINGA_RANK) $at: workers 0.0$" "$tmp/sandblaster.out" &&
    grep -q "^rank 1 of 3 (pid [0-9]*, SINGA_RANK) $at: workers 0.1$" "$tmp/sandblaster.out" &&
    grep -q "^rank 2 of 3 (pid [0-9]*, SINGA_RANK) $at: servers 0.0-0.1$" "$tmp/sandblaster.out"
report $? "each process prints its role and address" "$tmp/sandblaster.out"
[ "$(grep -c '^step ' "$tmp/sandblaster.out")" -eq 6 ] && [ "$(grep -c 'test accuracy' "$tmp/sandblaster.out")" -eq 3 ]
report $? "only rank 0 prints progress; every rank's script sees rank 0's result" "$tmp/sandblaster.out"
grep -q 'rank 1 of 3' "$tmp/ws-sandblaster/rank1.log" && grep -q 'rank 2 of 3' "$tmp/ws-sandblaster/rank2.log" &&
    grep -q 'step 0 kTrain, group 0: loss' "$tmp/ws-sandblaster/rank0.log"
report $? "every process writes its log to the workspace" "$tmp/ws-sandblaster/rank1.log"

timeout 60 "$SINGA_TUI" --procs 3 -e "$tmp/job.lua" downpour "$tmp/downpour.txt" 300 >"$tmp/downpour.out" 2>&1 &&
    awk '$1 == "accuracy" { exit !($2 > 0.9) }' "$tmp/downpour.txt"
report $? "--procs 3: Downpour (2 groups) converges" "$tmp/downpour.out"

# Under Open MPI's mpirun, ranks come from its environment.
if command -v mpirun >/dev/null 2>&1; then
    as_root=
    [ "$(id -u)" -eq 0 ] && as_root=--allow-run-as-root
    port=$(free_port)
    SINGA_COORDINATOR=tcp://127.0.0.1:$port timeout 120 mpirun $as_root --oversubscribe -np 3 \
        -x SINGA_COORDINATOR -x LUA_PATH_5_4 -x SINGA_LUA_PATH \
        "$SINGA_TUI" -e "$tmp/job.lua" sandblaster "$tmp/mpi.txt" >"$tmp/mpi.out" 2>&1 &&
        grep -q '^rank 2 of 3 (pid [0-9]*, OMPI_COMM_WORLD_RANK) at tcp' "$tmp/mpi.out" && exact "$tmp/mpi.txt"
    report $? "mpirun -np 3: Sandblaster across its ranks ends with the params of one worker" "$tmp/mpi.out"
else
    skip "mpirun -np 3" "no mpirun (Debian: openmpi-bin)"
fi

# Under MPICH's launcher (Hydra), ranks come from PMI_RANK and PMI_SIZE.
if command -v mpiexec.mpich >/dev/null 2>&1; then
    port=$(free_port)
    SINGA_COORDINATOR=tcp://127.0.0.1:$port timeout 120 mpiexec.mpich -n 3 \
        "$SINGA_TUI" -e "$tmp/job.lua" sandblaster "$tmp/mpich.txt" >"$tmp/mpich.out" 2>&1 &&
        grep -q '^rank 2 of 3 (pid [0-9]*, PMI_RANK) at tcp' "$tmp/mpich.out" && exact "$tmp/mpich.txt"
    report $? "MPICH's mpiexec -n 3: Sandblaster across its ranks ends with the params of one worker" "$tmp/mpich.out"
else
    skip "mpiexec.mpich -n 3" "no MPICH (Debian: mpich)"
fi

# Slurm's srun starts each task with SLURM_PROCID and SLURM_NTASKS set: three tasks started that
# way by hand (srun itself follows, where Slurm is installed).
port=$(free_port)
for r in 2 1 0; do
    SLURM_PROCID=$r SLURM_NTASKS=3 SINGA_COORDINATOR=tcp://127.0.0.1:$port timeout 120 \
        "$SINGA_TUI" -e "$tmp/job.lua" sandblaster "$tmp/srun.txt" >"$tmp/srun$r.out" 2>&1 &
    eval "task$r=\$!"
done
wait "$task0" && wait "$task1" && wait "$task2" &&
    grep -q '^rank 1 of 3 (pid [0-9]*, SLURM_PROCID) at tcp' "$tmp/srun1.out" && exact "$tmp/srun.txt"
report $? "tasks as srun -n 3 starts them: Sandblaster across them ends with the params of one worker" "$tmp/srun0.out"

# Slurm's srun itself, as root with Slurm's daemons installed (Debian: slurmctld slurmd
# slurm-client): a one-node cluster of this test's own, on free ports, with its state in $tmp and
# no munge (auth/none), started and stopped here.
start_slurm() {
    sl=$(cd "$tmp" && pwd)/slurm
    mkdir -p "$sl/state" "$sl/spool" || return 1
    host=$(hostname -s)
    cat >"$sl/slurm.conf" <<EOF
ClusterName=singatest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$sl/state
SlurmdSpoolDir=$sl/spool
SlurmctldPidFile=$sl/slurmctld.pid
SlurmdPidFile=$sl/slurmd.pid
ProctrackType=proctrack/pgid
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
NodeName=singa0 NodeAddr=127.0.0.1 NodeHostname=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=singa0 Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
EOF
    export SLURM_CONF="$sl/slurm.conf"
    slurmctld -D -i >"$sl/slurmctld.out" 2>&1 &
    slurmctld_pid=$!
    slurmd -D -N singa0 >"$sl/slurmd.out" 2>&1 &
    slurmd_pid=$!
    for _ in $(seq 150); do
        [ "$(sinfo -h -n singa0 -o %T 2>/dev/null)" = idle ] && return 0
        sleep 0.2
    done
    tail -n 5 "$sl/slurmctld.out" "$sl/slurmd.out"
    return 1
}
if [ "$(id -u)" -eq 0 ] && command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v srun >/dev/null; then
    start_slurm >"$tmp/slurm.out" 2>&1
    started=$?
    report $started "a one-node Slurm cluster starts" "$tmp/slurm.out"
    if [ $started -eq 0 ]; then
        port=$(free_port)
        # -O: three tasks on however few CPUs this machine has
        SINGA_COORDINATOR=tcp://127.0.0.1:$port timeout 120 srun -O -n 3 \
            "$SINGA_TUI" -e "$tmp/job.lua" sandblaster "$tmp/slurm.txt" >"$tmp/slurm-run.out" 2>&1 &&
            grep -q '^rank 2 of 3 (pid [0-9]*, SLURM_PROCID) at tcp' "$tmp/slurm-run.out" && exact "$tmp/slurm.txt"
        report $? "srun -n 3: Sandblaster across its tasks ends with the params of one worker" "$tmp/slurm-run.out"
        # Two tasks for a topology of three processes: each says so and srun fails.
        SINGA_COORDINATOR=tcp://127.0.0.1:$(free_port) timeout 60 srun -O -n 2 \
            "$SINGA_TUI" -e "$tmp/job.lua" sandblaster "$tmp/slurm2.txt" >"$tmp/slurm-bad.out" 2>&1
        rc=$?
        [ $rc -ne 0 ] && [ $rc -ne 124 ] &&
            [ "$(grep -c 'in 3 processes, but 2 were launched (\$SLURM_PROCID)' "$tmp/slurm-bad.out")" -eq 2 ]
        report $? "srun -n 2 for three processes: every task names the mismatch, srun exits non-zero" "$tmp/slurm-bad.out"
    fi
    kill "$slurmd_pid" "$slurmctld_pid" 2>/dev/null
    wait "$slurmd_pid" "$slurmctld_pid" 2>/dev/null
    unset SLURM_CONF
else
    skip "srun -n 3 under a Slurm cluster of the test's own" "needs root and Slurm (Debian: slurmctld slurmd slurm-client)"
fi

# fuzz_run MODE NAME [FUZZER OPTIONS]: trains MODE for 6000 steps in 3 processes while a stranger
# sends every listening port and the Unix socket beside it 1000 bad messages (t/fuzz-peers); sets
# fuzz_ok (0: the fuzzer had sent them all while the job still ran), job_rc, and dropped (the
# messages rank 0 dropped and counted).
fuzz_run() {
    fz_mode=$1 fz_name=$2
    shift 2
    timeout 120 "$SINGA_TUI" --procs 3 -e "$tmp/job.lua" "$fz_mode" "$tmp/$fz_name.txt" 6000 >"$tmp/$fz_name.out" 2>&1 &
    job=$!
    # Every rank's address, then training under way; a loaded machine may take a while.
    for _ in $(seq 1200); do
        endpoints=$(sed -n 's/^rank [0-9] of 3 (pid [0-9]*, SINGA_RANK) at \(tcp:[^ ]*\): .*/\1/p' "$tmp/$fz_name.out")
        [ "$(echo $endpoints | wc -w)" -eq 3 ] && grep -q '^step ' "$tmp/$fz_name.out" && break
        sleep 0.05
    done
    timeout 60 t/fuzz-peers "$@" 1000 $endpoints >"$tmp/$fz_name.fuzz" 2>&1 &
    fuzzer=$!
    for _ in $(seq 600); do grep -q '^sent' "$tmp/$fz_name.fuzz" && break; sleep 0.05; done
    kill -0 $job 2>/dev/null
    running=$?
    wait $fuzzer
    fuzz_rc=$?
    echo "endpoints: $endpoints; the job ran until the fuzzer was done: $([ $running -eq 0 ] && echo yes || echo no)" >>"$tmp/$fz_name.fuzz"
    cat "$tmp/$fz_name.fuzz"
    [ $fuzz_rc -eq 0 ] && [ $running -eq 0 ] && [ "$(echo $endpoints | wc -w)" -eq 3 ]
    fuzz_ok=$?
    wait $job
    job_rc=$?
    # A failure's report shows the end of the job's output: say there how the fuzzing went.
    { cat "$tmp/$fz_name.fuzz"; echo "the job's exit status: $job_rc"; } >>"$tmp/$fz_name.out"
    dropped=$(awk '$1 == "dropped" { print $2 }' "$tmp/$fz_name.txt" 2>/dev/null)
}

# Fuzzing: the processes drop and count the bad messages, and the job ends with exactly the
# params it would have had.
timeout 60 "$SINGA_TUI" -e "$tmp/job.lua" plain "$tmp/plain6k.txt" 6000 >"$tmp/plain6k.out" 2>&1
fuzz_run sandblaster fuzzed
report $fuzz_ok "the fuzzer sent 1000 bad messages to each of the 3 ports and their Unix sockets while the job ran" "$tmp/fuzzed.fuzz"
[ $job_rc -eq 0 ] && [ "${dropped:-0}" -gt 0 ] && exact "$tmp/fuzzed.txt" "$tmp/plain6k.txt"
report $? "the job lives, drops and counts them (${dropped:-?} at rank 0), and ends exact" "$tmp/fuzzed.out"
awk '$1 == "traffic_ranks" { exit !($2 == 3) }' "$tmp/fuzzed.txt"
report $? "rank 0's singa.stats() has every process's traffic, from their heartbeats" "$tmp/fuzzed.txt"

# CURVE with a ZAP allow-list: an authorised peer's messages arrive (here: garbage, dropped and
# counted); those of a NULL-security peer, of a peer with an unknown key and of one with the
# wrong server key never do.  The job itself runs encrypted and exact.
keys=$tmp/keys
mkdir -p "$keys/pub" && (cd "$keys" && "$SINGA_TUI" --curve-keygen a && "$SINGA_TUI" --curve-keygen b) >"$tmp/keygen.out" 2>&1 &&
    cp "$keys/a.pub" "$keys/pub/" && [ "$(stat -c %a "$keys/a.key")" = 600 ] && [ -s "$keys/b.pub" ]
report $? "--curve-keygen writes a secret key readable by its owner only and a public key" "$tmp/keygen.out"
export CURVE_KEY="$keys/a.key" CURVE_PUBS="$keys/pub"
# Under ThreadSanitizer libsodium makes each step about a hundred times slower; make check and
# make check-asan run these.
[ -n "${SINGA_TEST_TSAN:-}" ] && curve_peers= || curve_peers=yes
for peer in "authorised --curve $keys/a.pub $keys/a.key" "null" "unknown-key --curve $keys/a.pub $keys/b.key" \
    "wrong-server-key --curve $keys/b.pub $keys/a.key"; do
    set -- $peer
    if [ -z "$curve_peers" ]; then
        skip "CURVE: a $1 peer" "too slow under ThreadSanitizer"
        continue
    fi
    name=$1
    shift
    fuzz_run curve "curve-$name" "$@"
    if [ "$name" = authorised ]; then
        [ $fuzz_ok -eq 0 ] && [ $job_rc -eq 0 ] && [ "${dropped:-0}" -gt 0 ] && exact "$tmp/curve-$name.txt" "$tmp/plain6k.txt"
        report $? "CURVE: an authorised peer's messages arrive (${dropped:-?} dropped as garbage); the job runs exact" "$tmp/curve-$name.out"
    else
        [ $fuzz_ok -eq 0 ] && [ $job_rc -eq 0 ] && [ "${dropped:-1}" -eq 0 ] && exact "$tmp/curve-$name.txt" "$tmp/plain6k.txt"
        report $? "CURVE: a $name peer delivers nothing (${dropped:-?} dropped)" "$tmp/curve-$name.out"
    fi
done
cp "$keys/a.key" "$keys/loose.key" && chmod 644 "$keys/loose.key"
CURVE_KEY="$keys/loose.key" timeout 30 "$SINGA_TUI" --procs 3 -e "$tmp/job.lua" curve "$tmp/x.txt" >"$tmp/loose.out" 2>&1
[ $? -ne 0 ] && grep -q "the secret key file $keys/loose.key has permissions 0644" "$tmp/loose.out"
report $? "CURVE: a secret key file with loose permissions is refused" "$tmp/loose.out"
unset CURVE_KEY CURVE_PUBS

# Bad launches: clear errors, within seconds.
timeout 30 "$SINGA_TUI" --procs 2 -e "$tmp/job.lua" plain "$tmp/x.txt" >"$tmp/bad1.out" 2>&1
[ $? -ne 0 ] && grep -q 'places its workers and servers in 1 process, but 2 were launched' "$tmp/bad1.out"
report $? "a job for one process, launched as 2: refused" "$tmp/bad1.out"

closed=$(free_port)
start=$(date +%s)
SINGA_RANK=1 SINGA_SIZE=3 SINGA_COORDINATOR=tcp://127.0.0.1:$closed \
    timeout 30 "$SINGA_TUI" -e "$tmp/job.lua" sandblaster "$tmp/x.txt" 50 2 1 >"$tmp/bad2.out" 2>&1
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $(($(date +%s) - start)) -le 10 ] &&
    grep -q "no answer from the coordinator (rank 0) at tcp://127.0.0.1:$closed within 1 s" "$tmp/bad2.out"
report $? "an unreachable coordinator: a clear error within seconds" "$tmp/bad2.out"

SINGA_RANK=0 SINGA_SIZE=3 SINGA_COORDINATOR=tcp://127.0.0.1:$closed \
    timeout 30 "$SINGA_TUI" -e "$tmp/job.lua" sandblaster "$tmp/x.txt" 50 2 1 >"$tmp/bad3.out" 2>&1
[ $? -ne 0 ] && grep -q "ranks 1, 2 did not join the coordinator at tcp://127.0.0.1:$closed within 1 s" "$tmp/bad3.out"
report $? "ranks that never come: the coordinator says which" "$tmp/bad3.out"

python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(30)' >"$tmp/port" &
busy_pid=$!
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.2; done # python starts slowly on a loaded machine
busy=$(cat "$tmp/port")
SINGA_RANK=0 SINGA_SIZE=3 SINGA_COORDINATOR=tcp://127.0.0.1:$busy \
    timeout 30 "$SINGA_TUI" -e "$tmp/job.lua" sandblaster "$tmp/x.txt" 50 2 1 >"$tmp/bad4.out" 2>&1
[ $? -ne 0 ] && grep -q "cannot listen on tcp://127.0.0.1:$busy (the coordinator's address): Address already in use" "$tmp/bad4.out"
report $? "the coordinator's port in use: a clear error" "$tmp/bad4.out"
kill "$busy_pid" 2>/dev/null

SINGA_RANK=1 SINGA_SIZE=2 SINGA_COORDINATOR=tcp://127.0.0.1:$closed \
    timeout 30 "$SINGA_TUI" -e "$tmp/job.lua" sandblaster "$tmp/x.txt" >"$tmp/bad5.out" 2>&1
[ $? -ne 0 ] && grep -q 'places its workers and servers in 3 processes, but 2 were launched' "$tmp/bad5.out"
report $? "a size that does not match the topology: refused" "$tmp/bad5.out"

# The meeting refuses a process that runs another job (here: other train_steps), or has other
# plugins; every process ends with the reason.
port=$(free_port)
for r in 0 1 2; do
    steps=50; [ $r -eq 1 ] && steps=60
    SINGA_RANK=$r SINGA_SIZE=3 SINGA_COORDINATOR=tcp://127.0.0.1:$port \
        timeout 30 "$SINGA_TUI" -e "$tmp/job.lua" sandblaster "$tmp/x.txt" $steps 2 10 >"$tmp/fp$r.out" 2>&1 &
done
fails=0
for p in $(jobs -p); do wait "$p" || fails=$((fails + 1)); done
[ $fails -eq 3 ] && grep -q 'rank 1 runs a different job' "$tmp/fp0.out" &&
    grep -q 'the coordinator refused this process: rank 1 runs a different job' "$tmp/fp1.out" &&
    grep -q 'rank 1 runs a different job' "$tmp/fp2.out"
report $? "a process running another job is refused at the meeting, and every process says why" "$tmp/fp0.out"

timeout 60 "$SINGA_TUI" --procs 3 -e "$tmp/job.lua" plugin "$tmp/x.txt" 50 2 10 >"$tmp/plugin.out" 2>&1
[ $? -ne 0 ] && grep -q 'rank 1 loaded the plugins \[.*double 2.1.*\], but rank 0 loaded \[' "$tmp/plugin.out"
report $? "a process with other plugins is refused at the meeting" "$tmp/plugin.out"

# Starts a long run of mode $1 in the background; sets launcher and out; waits for training.
start_long() {
    out="$tmp/long-$1-$2.out"
    timeout 90 "$SINGA_TUI" --procs 3 -e "$tmp/job.lua" "$1" "$tmp/x.txt" "${3:-1000000}" 2 >"$out" 2>&1 &
    launcher=$!
    for _ in $(seq 100); do grep -q '^step ' "$out" && break; sleep 0.1; done
}
# Seconds (with a fraction) since $1, a `date +%s.%N`.
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
within() { awk -v t="$1" -v b="$2" 'BEGIN { exit !(t <= b) }'; }

# A lost process of a synchronous job: every survivor ends, naming it, within the bound (2 s of
# heartbeat_timeout, plus 3 s for the loaded machine).
for victim in "1 KILL workers 0.1" "2 KILL servers 0.0-0.1" "0 KILL workers 0.0" "2 STOP servers 0.0-0.1"; do
    set -- $victim
    rank=$1 sig=$2
    shift 2
    role="$*"
    start_long sandblaster "$rank$sig"
    pid=$(rank_pid "$rank")
    t0=$(date +%s.%N)
    kill -"$sig" "$pid"
    survivors=
    for r in 0 1 2; do [ "$r" -ne "$rank" ] && survivors="$survivors $(rank_pid "$r")"; done
    for _ in $(seq 200); do
        alive=0
        for p in $survivors; do kill -0 "$p" 2>/dev/null && alive=1; done
        [ $alive -eq 0 ] && break
        sleep 0.05
    done
    took=$(since "$t0")
    [ "$sig" = STOP ] && kill -9 "$pid"
    wait "$launcher"
    rc=$?
    echo "# the survivors of rank $rank (SIG$sig) ended after $took s"
    # a killed process's connections close: it is known at once; a stopped one falls silent
    why="sent nothing for 2 s (heartbeat_timeout)"
    [ "$sig" = KILL ] && why="died: its connection closed and it does not answer"
    [ $rc -ne 0 ] && [ $alive -eq 0 ] && within "$took" 5 && grep -q "rank $rank ($role) at tcp://127.0.0.1:[0-9]* $why" "$out"
    report $? "SIG$sig of rank $rank ($role): the others end within 5 s, naming it" "$out"
done

# A short stall is no failure.
start_long sandblaster stall 3000
pid=$(rank_pid 1)
kill -STOP "$pid" && sleep 1 && kill -CONT "$pid"
wait "$launcher"
report $? "a 1 s stall of a worker (heartbeat_timeout 2 s) is no failure" "$out"

# Asynchronous: the job goes on without a lost worker group, and says so.
start_long downpour lost 3000
pid=$(rank_pid 1)
kill -9 "$pid"
wait "$launcher"
rc=$?
[ $rc -eq 137 ] && grep -q 'rank 1 (workers 1.0) at tcp://.* the job goes on without it' "$out" &&
    grep -q 'rank 0 of 3: 3000 steps' "$out"
report $? "Downpour: the job goes on without a killed worker group and says so; --procs exits 137 ($rc)" "$out"

[ "$failed" -eq 0 ] && rm -rf "$tmp"
done_testing

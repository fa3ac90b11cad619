# Elastic synchronous jobs (--procs N --elastic MIN, cluster.elastic): a rank killed with SIGKILL
# in the middle of a 3-process job, the survivors end and the job starts again on the 2 left,
# resuming from the newest whole checkpoint, and ends with the params a plain 2-process resume of
# that checkpoint reaches; the log names the lost rank and the restart.  Restarts used up or too
# few processes left end the job with an error saying so; bad settings are refused before
# training.  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8600-elastic.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
tmp=$(cd "$tmp" && pwd)
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

job=$top_srcdir/t/elastic-job.lua

gen_data

# refused NAME STATUS PATTERN [ARGS...]: runs singa-tui ARGS, which ends with STATUS, saying PATTERN.
refused() {
    r_name=$1 r_status=$2 r_pattern=$3
    shift 3
    timeout 60 "$SINGA_TUI" "$@" >"$tmp/$r_name.out" 2>&1
    rc=$?
    [ $rc -eq "$r_status" ] && grep -q -- "$r_pattern" "$tmp/$r_name.out"
    report $? "refused before training: $r_name (status $rc)" "$tmp/$r_name.out"
}
job() { printf '%s ' -e "$job" "$1" "$tmp/$1.txt" 100 "$tmp/ck-$1" fresh; }
refused elastic0 2 "^singa-tui: --elastic needs the fewest processes .*got '0'" --procs 3 --elastic 0 $(job three)
refused above-n 2 "^singa-tui: --elastic 4 needs --procs N with N >= 4" --procs 3 --elastic 4 $(job three)
refused no-procs 2 "^singa-tui: --elastic 2 needs --procs N" --elastic 2 $(job three)
refused min0 1 "cluster.elastic: 'min' must be at least 1, got 0" $(job min0)
refused min4 1 "cluster.elastic: min = 4 is above the 3 processes the job runs in" $(job min4)
refused negative 1 "cluster.elastic: 'max_restarts' must not be negative, got -1" $(job negative)
refused typo 1 "cluster.elastic: unknown field 'max_restart'" $(job typo)
refused async 1 "cluster.elastic: an elastic job is synchronous (one worker group); this one has 2" $(job async)
refused servers 1 "cluster.elastic: min = 2 lets the job restart on 2 processes, where its topology cannot be built: no process is left for the workers (the servers take 2)" $(job servers)
refused batch 1 "cluster.elastic: min = 5 lets the job restart on 5 processes, with 5 workers, over which layer 'data''s batchsize 24 does not split evenly" $(job batch)
refused no-checkpoint 1 "cluster.elastic: a restart resumes from the newest checkpoint, but the job writes none" \
    --procs 3 --elastic 2 -e "$job" three "$tmp/x.txt" 100

# pid_of NAME R N: the pid of rank R of N as its announcement in NAME.out gives it.
pid_of() { sed -n "s/^rank $2 of $3 (pid \([0-9]*\),.*/\1/p" "$tmp/$1.out" | tail -1; }
# start NAME N ARGS...: starts `singa-tui --procs N ARGS` in the background ($launcher), its
# output in NAME.out; waits until it wrote a checkpoint at step 30 or later.
start() {
    s_name=$1 s_n=$2
    shift 2
    timeout 120 "$SINGA_TUI" --procs "$s_n" "$@" >"$tmp/$s_name.out" 2>&1 &
    launcher=$!
    for _ in $(seq 1500); do
        grep -q '^checkpoint written: .*/step0000000[3-9]0\.' "$tmp/$s_name.out" && return 0
        kill -0 $launcher 2>/dev/null || return 1
        sleep 0.02
    done
    return 1
}

# whole_stop DIR PIDS...: stops PIDS (SIGSTOP) between two checkpoints: DIR's newest step has all
# 6 files of 3 processes and none is being written (under load a stop may come mid-checkpoint,
# which the survivors then finish, and the restart resumes that one).
whole_stop() {
    w_dir=$1
    shift
    for _ in $(seq 200); do
        kill -STOP "$@"
        w_newest=$(ls "$w_dir" | sed -n 's/^step\([0-9]*\)\..*/\1/p' | sort -n | tail -n 1)
        [ -n "$w_newest" ] && [ "$(ls "$w_dir" | grep -c "^step$w_newest\.[sw]0\.[0-2]\.ckpt$")" = 6 ] &&
            ! ls "$w_dir" | grep -q '\.tmp$' && return 0
        kill -CONT "$@"
        sleep 0.02
    done
    return 1
}

# 1. Rank 2 of 3 killed: the job starts again on 2 processes, from the newest whole checkpoint
# (copied aside while every rank is stopped between checkpoints, so the copy is what the restart
# finds).
STEPS=600
start kill 3 --elastic 2 -e "$job" three "$tmp/kill.txt" $STEPS "$tmp/ck-kill" fresh
started=$?
pids="$(pid_of kill 0 3) $(pid_of kill 1 3) $(pid_of kill 2 3)"
victim=$(pid_of kill 2 3)
whole_stop "$tmp/ck-kill" $pids && cp -r "$tmp/ck-kill" "$tmp/ck-plain" && kill -9 "$victim" && kill -CONT $pids
wait $launcher
rc=$?
at=$(sed -n 's/^elastic restart 1 of 3: rank 2 lost, resuming step \([0-9]*\) on 2 processes$/\1/p' "$tmp/kill.out")
echo "# killed rank 2 (pid $victim); the restart resumed step ${at:-none}"
[ $started -eq 0 ] && [ $rc -eq 0 ] && [ -n "$at" ] && [ "$at" -lt $STEPS ] &&
    grep -q "^singa-tui: rank 2 (pid $victim) was killed by signal 9" "$tmp/kill.out" &&
    grep -q "^singa-tui: .*rank 2 (workers 0.2; servers 0.2) at tcp://.* died: .*the job can restart from its newest checkpoint on the processes left (elastic, exit status 75)" "$tmp/kill.out" &&
    grep -q "^singa-tui: elastic restart 1: rank 2 lost, the job starts again on the 2 processes left$" "$tmp/kill.out" &&
    grep -q "^rank 1 of 2 (pid [0-9]*, SINGA_RANK) at tcp://.*: workers 0.1; servers 0.1$" "$tmp/kill.out" &&
    grep -q "^rank 0 of 2: $STEPS steps$" "$tmp/kill.out" && grep -q "^rank 1 of 2: $STEPS steps$" "$tmp/kill.out"
report $? "--procs 3 --elastic 2, rank 2 killed: restarted on 2 processes from step ${at:-none}, all $STEPS steps trained, exit 0" "$tmp/kill.out"
timeout 120 "$SINGA_TUI" --procs 2 -e "$job" two "$tmp/plain.txt" $STEPS "$tmp/ck-plain" resume >"$tmp/plain.out" 2>&1 &&
    grep -q "^resumed from .* (step $at)$" "$tmp/plain.out" && params_close "$tmp/kill.txt" "$tmp/plain.txt"
report $? "its params are those of a plain resume of step ${at:-none} on 2 processes" "$tmp/plain.out"

# 2. Restarts used up: one allowed (min 1); rank 2 of the first run killed, then rank 1 of the
# restarted one.
start once 3 -e "$job" once "$tmp/once.txt" 100000 "$tmp/ck-once" fresh
started=$?
kill -9 "$(pid_of once 2 3)"
for _ in $(seq 1500); do
    grep -q '^elastic restart 1 of 1: rank 2 lost, resuming step [0-9]* on 2 processes$' "$tmp/once.out" &&
        [ -n "$(pid_of once 1 2)" ] && break
    sleep 0.02
done
kill -9 "$(pid_of once 1 2)"
wait $launcher
rc=$?
[ $started -eq 0 ] && [ $rc -eq 1 ] &&
    grep -q "^singa-tui: .*rank 1 (workers 0.1; servers 0.1) at tcp://.* died: .*; the job cannot restart: its restarts are used up (1 of cluster.elastic.max_restarts = 1)" "$tmp/once.out" &&
    [ "$(grep -c '^singa-tui: elastic restart' "$tmp/once.out")" -eq 1 ]
report $? "max_restarts = 1: the second loss ends the job (status $rc), saying the restarts are used up" "$tmp/once.out"

# 3. Fewer than MIN left: --procs 2 --elastic 2 loses rank 1.
start few 2 --elastic 2 -e "$job" two "$tmp/few.txt" 100000 "$tmp/ck-few" fresh
started=$?
kill -9 "$(pid_of few 1 2)"
wait $launcher
rc=$?
[ $started -eq 0 ] && [ $rc -eq 1 ] &&
    grep -q "^singa-tui: .*rank 1 .* died: .*; the job cannot restart: 1 process would be left, fewer than cluster.elastic.min = 2" "$tmp/few.out" &&
    ! grep -q '^singa-tui: elastic restart' "$tmp/few.out"
report $? "--procs 2 --elastic 2 losing a rank ends (status $rc): fewer than min would be left" "$tmp/few.out"

done_testing

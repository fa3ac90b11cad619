# No single point of failure in a synchronous group that shrinks (cluster.replicas): a 3-process
# AllReduce job with replicas = 2 whose rank 0, the coordinator, is killed (kill -9) goes on in
# ranks 1 and 2, rank 1 coordinating: both end well with every step trained once (the metrics
# file's steps contiguous, the tests going on), the log says who was lost at which step and who
# coordinates now, the replicas end bitwise equal and the final checkpoint is whole; so too with
# replicas = 3 when rank 1 is killed after it took over (rank 2 takes over in turn), and in
# Sandblaster, whose servers' process ends with rank 1.  A new membership needs a
# majority of the last one when the loss is a silence (which cannot tell a lost process from a
# partition).  A 3-process AllReduce job with replicas = 3 whose ranks 1
# and 2 are stopped (SIGSTOP) goes on 2 of 3 after the first silence, and rank 0, 1 of 2 after
# the second, ends with status 1 naming why, within seconds (no hang).
# Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8814-takeover.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
tmp=$(cd "$tmp" && pwd)
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

job=$top_srcdir/t/takeover-job.lua
STEPS=1500

gen_data

. "$top_srcdir/t/shrink.sh"
# begin NAME MODE [JOB]: the 3-process job of MODE (of takeover-job.lua, or JOB) in the background
# ($launcher), back once it trained 100 steps.
begin() {
    start "$1" "${3:-$job}" "$2" "$tmp/$1.txt" $STEPS "$tmp/ws-$1" "$tmp/ck-$1"
    echo "# $1: at step $at"
}

# Rank 0, the coordinator, killed: rank 1 takes over.  Its files half written (as a kill in the
# middle of a checkpoint leaves them) are removed.
begin lead two
touch "$tmp/ck-lead/step000000099.w0.0.ckpt.tmp" "$tmp/ck-lead/step000000099.s0.0.ckpt.tmp"
vpid=$(rank_pid 0)
kill -9 $vpid
wait $launcher
rc=$?
out=$tmp/lead.out
echo "# killed rank 0 (pid $vpid); status $rc"
grep -q "^rank 1 of 3: $STEPS steps$" "$out" && grep -q "^rank 2 of 3: $STEPS steps$" "$out" &&
    ! grep -q "^singa-tui: rank [12] " "$out" &&
    grep -q "^rank 0 (workers 0.0; servers 0.0; backups of servers 0.2) at tcp://.* died: its connection closed and it does not answer; the job goes on without it (cluster.replicas): from step [0-9]* the group is workers 0.1, 0.2 (2 of 3: .*); servers 0.0 in rank 1 (its backup), 0.1 in rank 1, 0.2 in rank 2$" "$out" &&
    grep -q "^rank 0, the coordinator, was lost at step [0-9]*: rank 1 coordinates now (worker 0.1 leads the group: its metrics, checkpoints and the end of the job)$" "$out"
report $? "rank 0 killed: ranks 1 and 2 train all $STEPS steps and end well, rank 1 coordinating; the log says so (launcher status $rc)" "$out"
contiguous lead
report $? "rank 0 killed: the metrics' steps are contiguous (none twice, none skipped)" "$tmp/lead.csv"
tests=$(awk -F, '$2 == "test" { printf "%s ", $1 }' "$tmp/lead.csv")
echo "# tests at steps $tests"
[ "$tests" = "$(seq -s ' ' 0 100 1400) $STEPS " ]
report $? "rank 0 killed: the tests every 100 steps go on, run by the new leader, and the final one" "$tmp/lead.csv"
agree lead
report $? "rank 0 killed: the survivors' replicas of each server end bitwise equal" "$tmp/lead.digests"
cmp -s "$tmp/lead.txt.1" "$tmp/lead.txt.2"
report $? "rank 0 killed: both survivors return the same params" "$tmp/lead.txt.1"
timeout 30 "$SINGA_TUI" --ckpt-info "$tmp/ck-lead" >"$tmp/lead.info" 2>&1 && grep -q "^step $STEPS$" "$tmp/lead.info" &&
    timeout 30 "$SINGA_TUI" --ckpt-gather "$tmp/ck-lead" "$tmp/lead.ckpt" >>"$tmp/lead.info" 2>&1 &&
    find "$tmp/ck-lead" -name '*.tmp*' | sed 's/^/left behind: /' >>"$tmp/lead.info" && ! grep -q "^left behind" "$tmp/lead.info"
report $? "rank 0 killed: the final checkpoint, written after the takeover, is whole and gathers into one model; no .tmp is left" "$tmp/lead.info"

# replicas = 3: rank 0 killed, then rank 1, which took over from it: rank 2 takes over in turn and
# trains on alone (two deaths are certain: no majority is needed).
begin twice three
kill -9 $(rank_pid 0)
until_ok grep -q "rank 1 coordinates now" "$tmp/twice.out"
at=$(awk -F, '$2 == "train" { n = $1 } END { print n + 0 }' "$tmp/twice.csv")
until_ok awk -F, -v at=$at '$2 == "train" && $1 >= at + 100 { ok = 1 } END { exit !ok }' "$tmp/twice.csv"
kill -9 $(rank_pid 1)
wait $launcher
rc=$?
echo "# rank 1 killed after step $at + 100; status $rc"
grep -q "^rank 2 of 3: $STEPS steps$" "$tmp/twice.out" &&
    grep -q "^rank 1, the coordinator, was lost at step [0-9]*: rank 2 coordinates now (worker 0.2 leads the group: .*)$" "$tmp/twice.out" &&
    contiguous twice && timeout 30 "$SINGA_TUI" --ckpt-info "$tmp/ck-twice" >"$tmp/twice.info" 2>&1 &&
    grep -q "^step $STEPS$" "$tmp/twice.info" && grep -q "^workers' states: 0.2 " "$tmp/twice.info"
report $? "replicas = 3, rank 0 then rank 1 killed: rank 2 coordinates in turn and trains all $STEPS steps once; its final checkpoint is whole" "$tmp/twice.out"

# Sandblaster (workers 0.0 in rank 0, 0.1 in rank 1, the servers in rank 2 and their backups in
# rank 0): rank 0 killed, rank 1 coordinates, and rank 2, which holds servers alone, ends too.
begin servers sandblaster "$top_srcdir/t/replicas-job.lua"
kill -9 $(rank_pid 0)
wait $launcher
grep -q "^rank 1 of 3: $STEPS steps$" "$tmp/servers.out" && grep -q "^rank 2 of 3: $STEPS steps$" "$tmp/servers.out" &&
    grep -q "^rank 0, the coordinator, was lost at step [0-9]*: rank 1 coordinates now (worker 0.1 leads the group: .*)$" "$tmp/servers.out" &&
    contiguous servers
report $? "Sandblaster, rank 0 killed: rank 1 coordinates, the servers' rank ends with it, every step trained once" "$tmp/servers.out"

# A minority left after silences ends the job.
begin minority three
p1=$(rank_pid 1) p2=$(rank_pid 2)
kill -STOP $p1 $p2
t0=$(date +%s)
until_ok grep -q "^singa-tui: rank 0 (pid [0-9]*) exited with status" "$tmp/minority.out"
t1=$(date +%s)
kill -9 $p1 $p2
wait $launcher
rc=$?
echo "# rank 0 ended $((t1 - t0)) s after the stop; status $rc"
[ $rc -eq 1 ] && [ $((t1 - t0)) -le 15 ] &&
    grep -q "sent nothing for 1 s (heartbeat_timeout).*; the job goes on without it (cluster.replicas): from step [0-9]* the group is workers 0.0, 0.[12] " "$tmp/minority.out" &&
    grep -q "sent nothing for 1 s (heartbeat_timeout): it died, hung or was stopped; the job ends: the 1 process left is not a majority of the 2 the group had, and a silence cannot tell a lost process from a partition" "$tmp/minority.out"
report $? "replicas = 3, ranks 1 and 2 stopped: 2 of 3 go on, then rank 0 alone (1 of 2) ends, naming why (status $rc)" "$tmp/minority.out"

done_testing

# No single point of failure in a synchronous group that shrinks (cluster.replicas): a new
# membership needs a majority of the last one when the loss is a silence (which cannot tell a
# lost process from a partition).  A 3-process AllReduce job with replicas = 3 whose ranks 1
# and 2 are stopped (SIGSTOP) goes on 2 of 3 after the first silence, and rank 0, 1 of 2 after
# the second, ends with status 1 naming why, within seconds (no hang).
# Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8812-takeover.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
tmp=$(cd "$tmp" && pwd)
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

job=$top_srcdir/t/takeover-job.lua
STEPS=1500

gen_data

# start NAME MODE: the 3-process job of MODE in the background ($launcher), back once it trained
# 100 steps.
start() {
    timeout 120 "$SINGA_TUI" --procs 3 --metrics "$tmp/$1.csv" -e "$job" "$2" "$tmp/$1.txt" $STEPS "$tmp/ws-$1" \
        "$tmp/ck-$1" >"$tmp/$1.out" 2>&1 &
    launcher=$!
    for _ in $(seq 3000); do
        at=$(awk -F, '$2 == "train" { n = $1 } END { print n + 0 }' "$tmp/$1.csv" 2>/dev/null)
        [ "${at:-0}" -ge 100 ] && break
        kill -0 $launcher 2>/dev/null || break
        sleep 0.01
    done
    echo "# $1: at step $at"
}

# A minority left after silences ends the job.
start minority three
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

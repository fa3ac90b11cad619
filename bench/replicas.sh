#!/bin/sh
# bench/replicas.sh: what replicated slices cost and buy (issue 33).  `make bench-replicas` runs it
# from the build directory; it also runs as `sh bench/replicas.sh` from a built source tree.
#
# 1. The cost, no fault: bench/replicas.lua (the big MLP, batch 66, allreduce{ workers = 3,
#    procs = 3 }) with replicas = 1 and replicas = 2, BENCH_ROUNDS rounds (default 3, the order
#    reversed every other round; 0 leaves this part out), BENCH_STEPS steps each (default 200);
#    prints each one's median images/s and the ratio (the issue's target: replicas = 2 at least
#    0.90 of replicas = 1).
# 2. Losses: the same job with replicas = 2 and every step in the --metrics file, one rank
#    killed with SIGKILL at a random step after BENCH_KILL_AFTER (default 20) steps, BENCH_KILLS
#    runs (default 1) of each case: rank 1 or 2 (random) under cluster.shrink = "share" (the
#    default) and under "batch", and rank 0 (another rank takes over coordinating).  Each run's
#    line: the gap between the last step recorded before the kill and the first after (the
#    largest between records that ends in one of the first 3 after the kill; the target: within
#    1 s), whether the steps are contiguous (every step recorded once), the survivors' exit
#    statuses, and the rows trained a second (images/s) after the loss (from 2 steps past the
#    gap: the steps before train on the old split) against before it (from step 2).
# 3. A rejoin: the same job launched rank by rank, rank 1 or 2 killed at a random step early in
#    the run and started again with SINGA_REJOIN=1 once rank 0 logged the loss; its line: the
#    heal time the process logs (the target: under 1 s), the step it rejoined from, whether the
#    steps are contiguous, the three processes' exit statuses, and images/s after the rejoin
#    against before the kill (from 2 steps past the one it rejoined from).  BENCH_KILLS runs.
# The times of the steps are the times their records reach the --metrics file (python3 stamps
# each line as it arrives, within 5 ms), one clock across the processes that write it (after
# rank 0's loss the new coordinator writes on, its `seconds` on its own clock).  The end prints a row for BENCHMARKS.md's table per measurement.
# Knobs: BENCH_ROUNDS, BENCH_STEPS, BENCH_KILLS, BENCH_KILL_AFTER, BENCH_THREADS (default 1).
: "${SINGA_TUI:=./singa-tui}"
here=$(cd "$(dirname "$0")" && pwd)
job=$here/replicas.lua
rounds=${BENCH_ROUNDS:-3} steps=${BENCH_STEPS:-200} kills=${BENCH_KILLS:-1}
after=${BENCH_KILL_AFTER:-20} threads=${BENCH_THREADS:-1}
batch=66 # bench/replicas.lua's global batch
tmp=$(mktemp -d) || exit 1
ours="" # the processes started in the background, ended if the script is
trap 'for p in $ours; do kill -9 "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# run R: images/s of one run with replicas = R (nothing printed when it failed).
run() {
    "$SINGA_TUI" --procs 3 -e "$job" "$1" "$steps" "" "$threads" >"$tmp/run.out" 2>&1 &&
        sed -n 's/^RESULT images_per_sec=\([0-9]*\) .*/\1/p' "$tmp/run.out"
}

if [ "$rounds" -gt 0 ]; then
    echo "== replicas = 2 against replicas = 1, no fault: $rounds rounds of $steps steps"
    for i in $(seq "$rounds"); do
        order="1 2"
        [ $((i % 2)) -eq 0 ] && order="2 1"
        for r in $order; do
            v=$(run "$r")
            [ -n "$v" ] || { echo "replicas = $r failed:"; tail -5 "$tmp/run.out"; exit 1; }
            echo "$v" >>"$tmp/r$r"
            echo "round $i replicas = $r: $v images/s"
        done
    done
    one=$(median <"$tmp/r1") two=$(median <"$tmp/r2")
    awk -v a="$one" -v b="$two" 'BEGIN { printf "median images/s: replicas = 1 %.0f, replicas = 2 %.0f: ratio %.3f\n", a, b, b / a }'
    awk -v a="$one" -v b="$two" -v r="$rounds" -v s="$steps" -v l1="$(tr '\n' ' ' <"$tmp/r1")" -v l2="$(tr '\n' ' ' <"$tmp/r2")" 'BEGIN {
        sub(/ $/, "", l1); sub(/ $/, "", l2)
        verdict = b / a >= 0.9 ? "met" : "not met"
        printf("| images/s, replicas = 1 against 2, no fault (medians of %d rounds of %d steps) | %.0f against %.0f (%s; %s): %.2f | at least 0.90: **%s** |\n",
            r, s, a, b, l1, l2, b / a, verdict) }' >>"$tmp/rows"
fi

# stamp CSV: copies each line of CSV, as it is written, to CSV.t with the time it arrived first
# (seconds since the epoch), until CSV.done exists; in the background ($stamper).
stamp() {
    python3 -c '
import os, sys, time
path = sys.argv[1]
f, rest = None, b""
out = open(path + ".t", "w")
while True:
    done = os.path.exists(path + ".done")
    if f is None and os.path.exists(path):
        f = open(path, "rb")
    data = f.read() if f else b""
    if data:
        now = time.time()
        *lines, rest = (rest + data).split(b"\n")
        out.write("".join("%.4f,%s\n" % (now, l.decode()) for l in lines))
        out.flush()
    elif done:
        break
    else:
        time.sleep(0.005)
' "$1" &
    stamper=$!
    ours="$ours $stamper"
}
# stamp_end CSV: the last lines stamped, the stamper ended.
stamp_end() { touch "$1.done"; wait $stamper; ours=""; }

# reach CSV N PID: back once CSV.t has a train record of step N or later, or PID ended.
reach() {
    while kill -0 "$3" 2>/dev/null; do
        n=$(awk -F, '$3 == "train" { n = $2 } END { print n + 0 }' "$1.t" 2>/dev/null)
        [ "${n:-0}" -ge "$2" ] && return 0
        sleep 0.01
    done
}

# random N: an integer from 0 to N - 1 (seeded by the clock's nanoseconds: srand() alone takes seconds).
random() { awk -v n="$1" -v seed="$(date +%N)" 'BEGIN { srand(seed); print int(rand() * n) }'; }
# random_step FRACTION: a step from BENCH_KILL_AFTER on, within FRACTION of the steps left.
random_step() { echo $((after + $(random "$(awk -v a="$after" -v s="$steps" -v f="$1" 'BEGIN { n = int((s - a) * f); print (n > 0 ? n : 1) }')"))); }

# measure CSV KILLED: from the stamped records, "GAP FROM TO CONTIGUOUS RATE_BEFORE RATE_AFTER LAST":
# the largest gap between consecutive train records that ends in one of the first 3 records after
# the time KILLED (the stall while the loss is found, not a later hiccup of a shared machine) and
# the steps around it, yes/no (every step 0..STEPS-1 recorded once), steps/s from step 2 to FROM
# and from TO + 2 to the last (the step in flight at the loss and the next train on the old split),
# and the last step recorded before KILLED.
measure() {
    awk -F, -v kt="$2" -v steps="$steps" '
        $3 != "train" { next }
        { t = $1 + 0; step = $2 + 0
          if (seen[step]++) twice++
          if (n++ && step != last + 1) skipped++
          if (!(step in at)) at[step] = t
          if (t <= kt) k = step
          else if (n > 1 && ++since <= 3 && t - lt > gap) { gap = t - lt; from = last; to = step }
          last = step; lt = t }
        function rate(a, b) { return b > a && (a in at) && (b in at) && at[b] > at[a] ? (b - a) / (at[b] - at[a]) : 0 }
        END { ok = length(seen) == steps && !twice && !skipped && last == steps - 1
              printf("%.3f %d %d %s %.4f %.4f %d\n", gap, from, to, ok ? "yes" : "no", rate(2, from), rate(to + 2, last), k) }' "$1.t"
}

# status OUT RANK: rank RANK's exit status as --procs reported it in OUT (0: not reported).
status() {
    s=$(sed -n -e "s/^singa-tui: rank $2 (pid [0-9]*) exited with status \([0-9]*\).*/\1/p" \
        -e "s/^singa-tui: rank $2 (pid [0-9]*) was killed by signal \([0-9]*\).*/signal \1/p" "$1" | tail -1)
    echo "${s:-0}"
}

# kill_run CASE VICTIM SHRINK: one --procs run of CASE (its name) with rank VICTIM killed,
# cluster.shrink = SHRINK ("" unset); prints its line and adds its row.
kill_run() {
    m=$tmp/$1.csv out=$tmp/$1.out
    rm -f "$m" "$m.t" "$m.done"
    stamp "$m"
    "$SINGA_TUI" --procs 3 --metrics "$m" -e "$job" 2 "$steps" 1 "$threads" "$3" >"$out" 2>&1 &
    launcher=$!
    ours="$ours $launcher"
    at=$(random_step 0.5)
    reach "$m" "$at" $launcher
    victim=$(sed -n "s/^rank $2 of 3 (pid \([0-9]*\),.*/\1/p" "$out" | tail -1)
    killed=$(date +%s.%N)
    [ -n "$victim" ] && kill -9 "$victim"
    wait $launcher
    rc=$?
    stamp_end "$m"
    set -- "$1" "$2" "$3" $(measure "$m" "$killed")
    exits="" survivors=""
    for r in 0 1 2; do
        [ "$r" -eq "$2" ] && continue
        survivors="$survivors${survivors:+, }$r" exits="$exits${exits:+, }$(status "$out" $r)"
    done
    # rows trained a step after the loss: all of the batch but under "batch", which leaves the lost third out
    awk -v name="$1" -v victim="$2" -v shrink="${3:-share}" -v gap="$4" -v from="$5" -v to="$6" -v contiguous="$7" \
        -v before="$8" -v after="$9" -v rc="$rc" -v at="${10}" -v steps="$steps" -v batch="$batch" \
        -v survivors="$survivors" -v exits="$exits" 'BEGIN {
        rows = shrink == "batch" ? batch * 2 / 3 : batch
        verdict = gap < 1 && contiguous == "yes" && exits ~ /^0(, 0)*$/ ? "met" : "not met"
        what = victim == 0 ? "rank 0 (the coordinator: takeover)" : "rank " victim
        ratio = before > 0 ? after * rows / (before * batch) : 0
        printf("%s: rank %d killed after step %d; status %d; gap %.3f s (step %d to %d); steps contiguous %s; survivors %s exit %s; images/s %.0f before, %.0f after (%d rows a step): %.2f\n",
            name, victim, at, rc, gap, from, to, contiguous, survivors, exits, before * batch, after * rows, rows, ratio)
        printf("| %s killed with SIGKILL after step %d, replicas = 2, shrink = \"%s\" (%d steps) | gap %.3f s (step %d to %d); steps contiguous: %s; survivors (ranks %s) exit %s (--procs %d); images/s after the loss %.2f of before (%.0f against %.0f, %d rows a step after) | resumes within 1 s, steps contiguous, survivors exit 0: **%s** |\n",
            what, at, shrink, steps, gap, from, to, contiguous, survivors, exits, rc, ratio, after * rows, before * batch, rows,
            verdict) >>(ENVIRON["tmp"] "/rows") }'
    [ "$7" = yes ] || grep -m3 "died\|lost\|error" "$out"
}

# rank_run R OUT ARGS...: rank R of the job launched by hand, as --procs does, in the background ($pid).
rank_run() {
    rank=$1 rank_out=$2
    shift 2
    SINGA_RANK=$rank SINGA_SIZE=3 SINGA_COORDINATOR=tcp://127.0.0.1:$port "$SINGA_TUI" "$@" >"$rank_out" 2>&1 &
    pid=$!
    ours="$ours $pid"
}

# rejoin_run I: rank 1 or 2 killed, then started again with SINGA_REJOIN=1 once rank 0 logged its
# loss; prints its line and adds its row.
rejoin_run() {
    m=$tmp/rejoin$1.csv o=$tmp/rejoin$1
    rm -f "$m" "$m.t" "$m.done"
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    v=$((1 + $(random 2)))
    stamp "$m"
    rank_run 0 "$o.0.out" --metrics "$m" -e "$job" 2 "$steps" 1 "$threads"
    p0=$pid
    rank_run 1 "$o.1.out" -e "$job" 2 "$steps" 1 "$threads"
    p1=$pid
    rank_run 2 "$o.2.out" -e "$job" 2 "$steps" 1 "$threads"
    p2=$pid
    eval "pv=\$p$v"
    at=$(random_step 0.25)
    reach "$m" "$at" $p0
    killed=$(date +%s.%N)
    kill -9 "$pv"
    wait "$pv" 2>/dev/null
    for _ in $(seq 3000); do
        grep -q "^rank $v (.*the job goes on without it" "$o.0.out" && break
        kill -0 $p0 2>/dev/null || break
        sleep 0.01
    done
    SINGA_REJOIN=1 rank_run "$v" "$o.again.out" -e "$job" 2 "$steps" 1 "$threads"
    eval "p$v=\$pid"
    wait $p0; s0=$?
    wait $p1; s1=$?
    wait $p2; s2=$?
    stamp_end "$m"
    heal=$(sed -n 's/.*rejoined the synchronous group at step \([0-9]*\): healed in \([0-9.]*\) s .*/\1 \2/p' "$o.again.out" | tail -1)
    set -- "$1" "$v" "$at" ${heal:-0 0} $(measure "$m" "$killed")
    # before: steps 2 to the last before the kill; after: from 2 past the step it rejoined from
    awk -F, -v v="$2" -v at="${12}" -v S="$4" -v heal="$5" -v contiguous="$9" -v exits="$s0, $s1, $s2" -v kt="$killed" \
        -v steps="$steps" -v batch="$batch" -v healed="${heal:+yes}" '
        $3 != "train" { next }
        { t = $1 + 0; step = $2 + 0; if (!(step in T)) T[step] = t; if (t <= kt) k = step; last = step }
        function rate(a, b) { return b > a && (a in T) && (b in T) && T[b] > T[a] ? (b - a) / (T[b] - T[a]) : 0 }
        END { before = rate(2, k) * batch; after = rate(S + 2, last) * batch
              verdict = healed == "yes" && heal < 1 && contiguous == "yes" && exits == "0, 0, 0" ? "met" : "not met"
              ratio = before > 0 ? after / before : 0
              what = healed == "yes" ? sprintf("healed in %.3f s, training from step %d", heal, S) : "not rejoined"
              printf("rejoin: rank %d killed after step %d, started again with SINGA_REJOIN=1: %s; steps contiguous %s; exits %s; images/s %.0f before the kill, %.0f after the rejoin: %.2f\n",
                  v, at, what, contiguous, exits, before, after, ratio)
              printf("| rank %d killed with SIGKILL after step %d and started again with SINGA_REJOIN=1 once the loss was logged, replicas = 2 (%d steps) | %s; steps contiguous: %s; ranks 0, 1, 2 exit %s; images/s after the rejoin %.2f of before the kill (%.0f against %.0f) | healed within 1 s, steps contiguous, every process exits 0: **%s** |\n",
                  v, at, steps, what, contiguous, exits, ratio, after, before, verdict) >>(ENVIRON["tmp"] "/rows") }' "$m.t"
    [ -n "$heal" ] || grep -h -m2 "refused\|error" "$o.again.out" "$o.0.out"
}
export tmp

echo "== replicas = 2, one rank killed with SIGKILL at a random step: $kills runs of each case, $steps steps"
for i in $(seq "$kills"); do
    kill_run "share$i" $((1 + $(random 2))) ""
    kill_run "batch$i" $((1 + $(random 2))) batch
    kill_run "takeover$i" 0 ""
done
echo "== replicas = 2, a rank killed and started again with SINGA_REJOIN=1: $kills runs of $steps steps"
for i in $(seq "$kills"); do rejoin_run "$i"; done

echo "== rows for BENCHMARKS.md (| | result | target |)"
cat "$tmp/rows"

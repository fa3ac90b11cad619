#!/bin/sh
# bench/replicas.sh: what replicated slices cost and buy (issue 33).  `make bench-replicas` runs it
# from the build directory; it also runs as `sh bench/replicas.sh` from a built source tree.
#
# 1. The cost, no fault: bench/replicas.lua (the big MLP, batch 66, allreduce{ workers = 3,
#    procs = 3 }) with replicas = 1 and replicas = 2, BENCH_ROUNDS rounds (default 3, the order
#    reversed every other round), BENCH_STEPS steps each (default 200); prints each one's median
#    images/s and the ratio (the issue's target: replicas = 2 at least 0.90 of replicas = 1).
# 2. A loss: the same job with replicas = 2 and every step in the --metrics file, rank 1 or 2
#    (random) killed with SIGKILL at a random step after BENCH_KILL_AFTER (default 20) steps;
#    prints how the job ended and, when it went on, the gap between the last step recorded
#    before the kill and the first after (the target: within 1 s), and whether the steps are
#    contiguous (no step trained twice or skipped).  BENCH_KILLS runs (default 3).
# Knobs: BENCH_ROUNDS, BENCH_STEPS, BENCH_KILLS, BENCH_KILL_AFTER, BENCH_THREADS (default 1).
: "${SINGA_TUI:=./singa-tui}"
here=$(cd "$(dirname "$0")" && pwd)
job=$here/replicas.lua
rounds=${BENCH_ROUNDS:-3} steps=${BENCH_STEPS:-200} kills=${BENCH_KILLS:-3}
after=${BENCH_KILL_AFTER:-20} threads=${BENCH_THREADS:-1}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# run R: images/s of one run with replicas = R (nothing printed when it failed).
run() {
    "$SINGA_TUI" --procs 3 -e "$job" "$1" "$steps" "" "$threads" >"$tmp/run.out" 2>&1 &&
        sed -n 's/^RESULT images_per_sec=\([0-9]*\) .*/\1/p' "$tmp/run.out"
}

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

# kill_run I: one run with a kill; prints its line.
kill_run() {
    m=$tmp/kill$1.csv
    rm -f "$m"
    "$SINGA_TUI" --procs 3 --metrics "$m" -e "$job" 2 "$steps" 1 "$threads" >"$tmp/kill$1.out" 2>&1 &
    launcher=$!
    victim_rank=$(awk 'BEGIN { srand(); print 1 + int(rand() * 2) }')
    at=$(awk -v a="$after" -v s="$steps" 'BEGIN { srand(); print a + int(rand() * (s - a) / 2) }')
    for _ in $(seq 6000); do
        n=$(awk -F, '$2 == "train" { n = $1 } END { print n + 0 }' "$m" 2>/dev/null)
        [ "${n:-0}" -ge "$at" ] && break
        kill -0 $launcher 2>/dev/null || break
        sleep 0.01
    done
    victim=$(sed -n "s/^rank $victim_rank of 3 (pid \([0-9]*\),.*/\1/p" "$tmp/kill$1.out" | tail -1)
    killed=$(date +%s.%N)
    [ -n "$victim" ] && kill -9 "$victim"
    wait $launcher
    rc=$?
    awk -F, -v rc="$rc" -v rank="$victim_rank" -v at="$at" '
        $2 != "train" { next }
        { step = $1 + 0; t = $NF + 0
          if (seen[step]++) twice++
          if (last != "" && step != last + 1) skipped++
          if (last != "" && t - lt > gap) { gap = t - lt; from = last; to = step }
          last = step; lt = t }
        END { printf "kill of rank %d at about step %d: status %d; largest gap %.3f s (step %s to %s); %s\n",
                  rank, at, rc, gap, from, to,
                  twice || skipped ? "steps NOT contiguous" : "steps contiguous" }' "$m"
    [ $rc -eq 0 ] || grep -m1 "died\|lost" "$tmp/kill$1.out"
}

echo "== replicas = 2, one rank killed at a random step: $kills runs of $steps steps"
for i in $(seq "$kills"); do kill_run "$i"; done

#!/bin/sh
# bench/trace.sh: what --trace costs training.  Runs bench/smallmlp.lua headless with and without
# `--trace FILE` (the default ring of the last 50 steps), alternating the order every round, as a
# plain job and as a Sandblaster group of 2 workers in one process (the runtime: its stub, server
# and workers all record), and prints the median images/s of each and the cost in percent (the
# goal: at most 5%).  `make bench-trace` runs it from the build directory; it also runs as
# `sh bench/trace.sh` from a built tree.
#
# Environment:
#   BENCH_ROUNDS=5           rounds (medians over rounds)
#   BENCH_SMALL_STEPS=2000   timed training steps per run
#   BENCH_WORKERS_LIST="1 2" workers per job to measure (1: a plain job)
#   SINGA_TUI                the program (default ./singa-tui, then beside this script's folder)
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(dirname "$here")
rounds=${BENCH_ROUNDS:-5}
steps=${BENCH_SMALL_STEPS:-2000}
workers_list=${BENCH_WORKERS_LIST:-"1 2"}

bench_name=bench/trace
# shellcheck source=bench/common.sh
. "$here/common.sh"
bench_start singa-bench-trace

run() { # WORKERS [--trace FILE]: images/s of one headless run
    w=$1
    shift
    (cd "$tmp" && BENCH_WORKERS=$w "$tui" "$@" -e "$here/smallmlp.lua" 1 "$steps") 2>&1 |
        sed -n 's/^RESULT images_per_sec=\([0-9]*\).*/\1/p'
}

echo "bench/trace: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $rounds rounds of $steps steps (batch 128, 1 thread)"
printf '%-8s %14s %14s %8s\n' workers "plain" "--trace" cost
for w in $workers_list; do
    : >"$tmp/p" && : >"$tmp/t"
    r=1
    while [ $r -le "$rounds" ]; do
        if [ $((r % 2)) -eq 1 ]; then
            run "$w" >>"$tmp/p"
            run "$w" --trace "$tmp/trace.json" >>"$tmp/t"
        else
            run "$w" --trace "$tmp/trace.json" >>"$tmp/t"
            run "$w" >>"$tmp/p"
        fi
        [ -s "$tmp/trace.json" ] || die "--trace wrote no file"
        echo "  round $r, $w worker(s): plain $(tail -n 1 "$tmp/p"), traced $(tail -n 1 "$tmp/t")" >&2
        r=$((r + 1))
    done
    p=$(median "$tmp/p") t=$(median "$tmp/t")
    [ "$p" != - ] && [ "$t" != - ] || die "a run gave no result"
    printf '%-8s %14.0f %14.0f %7.1f%%\n' "$w" "$p" "$t" "$(echo "$p $t" | awk '{ print 100 * ($1 - $2) / $1 }')"
done

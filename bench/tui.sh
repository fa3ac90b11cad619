#!/bin/sh
# bench/tui.sh: what the workbench costs training.  Runs bench/smallmlp.lua headless
# (`singa-tui -e`) and in the workbench (`singa-tui --run`, in a 120x40 tmux window, where it
# redraws ten times a second while the job trains), alternating the order every round, and
# prints the median images/s of each and the workbench's cost in percent.  `make bench-tui`
# runs it from the build directory; it also runs as `sh bench/tui.sh` from a built tree.
#
# Environment:
#   BENCH_ROUNDS=5           rounds (medians over rounds)
#   BENCH_SMALL_STEPS=2000   timed training steps per run
#   BENCH_THREADS="1 2"      num_openblas_threads values to measure
#   SINGA_TUI                the program (default ./singa-tui, then beside this script's folder)
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(dirname "$here")
rounds=${BENCH_ROUNDS:-5}
steps=${BENCH_SMALL_STEPS:-2000}
threads_list=${BENCH_THREADS:-"1 2"}

die() { echo "bench/tui: $*" >&2; exit 1; }
command -v tmux >/dev/null 2>&1 || die "tmux is not installed"
tui=
for p in "${SINGA_TUI:-}" ./singa-tui "$srcdir/singa-tui"; do
    if [ -n "$p" ] && [ -x "$p" ]; then tui=$(cd "$(dirname "$p")" && pwd)/$(basename "$p"); break; fi
done
[ -n "$tui" ] || die "singa-tui not found: build it first (make), or set SINGA_TUI"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/singa-bench-tui.XXXXXX") || die "mktemp failed"
sock="singa-bench-tui-$$"
trap 'tmux -L "$sock" kill-server >/dev/null 2>&1; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
export XDG_STATE_HOME="$tmp/state"

headless() { # THREADS: images/s of one headless run
    (cd "$tmp" && "$tui" -e "$here/smallmlp.lua" "$1" "$steps") 2>&1 | sed -n 's/^RESULT images_per_sec=\([0-9]*\).*/\1/p'
}

workbench() { # THREADS: images/s of one run in the workbench, from the RESULT line in its log
    tmux -L "$sock" -f /dev/null new-session -d -x 120 -y 40 \
        "cd '$tmp' && env LC_ALL=C.UTF-8 TERM=screen-256color '$tui' --run '$here/smallmlp.lua' $1 $steps; sleep 60"
    ips=
    i=0
    while [ $i -lt 1200 ] && [ -z "$ips" ]; do
        sleep 0.5
        ips=$(tmux -L "$sock" capture-pane -p | grep -o 'RESULT images_per_sec=[0-9]*' | head -n 1 | cut -d= -f2)
        i=$((i + 1))
    done
    tmux -L "$sock" send-keys q
    sleep 0.5
    tmux -L "$sock" kill-server >/dev/null 2>&1
    echo "$ips"
}

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "bench/tui: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $rounds rounds of $steps steps (batch 128)"
printf '%-8s %14s %14s %8s\n' threads "headless -e" "workbench" cost
for threads in $threads_list; do
    : >"$tmp/h" && : >"$tmp/w"
    r=1
    while [ $r -le "$rounds" ]; do
        if [ $((r % 2)) -eq 1 ]; then
            headless "$threads" >>"$tmp/h"
            workbench "$threads" >>"$tmp/w"
        else
            workbench "$threads" >>"$tmp/w"
            headless "$threads" >>"$tmp/h"
        fi
        echo "  round $r, $threads thread(s): headless $(tail -n 1 "$tmp/h"), workbench $(tail -n 1 "$tmp/w")" >&2
        r=$((r + 1))
    done
    h=$(median <"$tmp/h") w=$(median <"$tmp/w")
    [ -n "$h" ] && [ -n "$w" ] || die "a run gave no result"
    printf '%-8s %14.0f %14.0f %7.1f%%\n' "$threads" "$h" "$w" "$(echo "$h $w" | awk '{ print 100 * ($1 - $2) / $1 }')"
done

#!/bin/sh
# bench/attach.sh: what listening for workbenches costs training.  Runs bench/smallmlp.lua
# headless (`singa-tui -e`) three ways, alternating the order every round: plain; listening
# (`--listen ipc://...`) with one workbench attached (`singa-tui --attach`, in a 120x40 tmux
# window); and listening with that workbench stopped (SIGSTOP once attached: it reads nothing,
# as a workbench whose machine hangs).  Prints the median images/s of each and the cost in
# percent against plain.  `make bench-tui` runs it after bench/tui.sh; it also runs as
# `sh bench/attach.sh` from a built tree.
#
# Environment:
#   BENCH_ROUNDS=5           rounds (medians over rounds)
#   BENCH_SMALL_STEPS=2000   timed training steps per run
#   BENCH_THREADS="1"        num_openblas_threads values to measure
#   SINGA_TUI                the program (default ./singa-tui, then beside this script's folder)
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(dirname "$here")
rounds=${BENCH_ROUNDS:-5}
steps=${BENCH_SMALL_STEPS:-2000}
threads_list=${BENCH_THREADS:-"1"}

bench_name=bench/attach
# shellcheck source=bench/common.sh
. "$here/common.sh"
command -v tmux >/dev/null 2>&1 || die "tmux is not installed"
bench_start singa-bench-attach
sock="singa-bench-attach-$$"
addr="ipc://$tmp/job.sock"
trap 'tmux -L "$sock" kill-server >/dev/null 2>&1; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
export XDG_STATE_HOME="$tmp/state"

result() { sed -n 's/^RESULT images_per_sec=\([0-9]*\).*/\1/p' "$1"; }

plain() { # THREADS: images/s of one headless run
    (cd "$tmp" && "$tui" -e "$here/smallmlp.lua" "$1" "$steps") >"$tmp/out" 2>&1
    result "$tmp/out"
}

# THREADS MODE (attached or stopped): images/s of one listening run with a workbench.  The
# workbench tries until the job listens (during its warm-up job), then stays for the timed one.
listening() {
    rm -f "$tmp/job.sock"
    (cd "$tmp" && exec "$tui" --listen "$addr" -e "$here/smallmlp.lua" "$1" "$steps") >"$tmp/out" 2>&1 &
    job=$!
    tmux -L "$sock" -f /dev/null new-session -d -x 120 -y 40 \
        "cd '$tmp' && until env LC_ALL=C.UTF-8 TERM=screen-256color '$tui' --attach '$addr'; do sleep 0.05; done; sleep 60"
    i=0
    while [ $i -lt 100 ] && ! tmux -L "$sock" capture-pane -p | grep -q 'attached to'; do sleep 0.1; i=$((i + 1)); done
    [ "$2" = stopped ] && pkill -STOP -P "$(tmux -L "$sock" display -p '#{pane_pid}')"
    wait "$job"
    [ "$2" = stopped ] && pkill -CONT -P "$(tmux -L "$sock" display -p '#{pane_pid}')"
    tmux -L "$sock" kill-server >/dev/null 2>&1
    result "$tmp/out"
}

cost() { echo "$1 $2" | awk '{ printf "%.1f%%", 100 * ($1 - $2) / $1 }'; }

echo "bench/attach: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $rounds rounds of $steps steps (batch 128)"
printf '%-8s %12s %12s %7s %12s %7s\n' threads "headless -e" "+attached" cost "+stopped" cost
for threads in $threads_list; do
    : >"$tmp/p" && : >"$tmp/a" && : >"$tmp/s"
    r=1
    while [ $r -le "$rounds" ]; do
        if [ $((r % 2)) -eq 1 ]; then
            plain "$threads" >>"$tmp/p"
            listening "$threads" attached >>"$tmp/a"
            listening "$threads" stopped >>"$tmp/s"
        else
            listening "$threads" stopped >>"$tmp/s"
            listening "$threads" attached >>"$tmp/a"
            plain "$threads" >>"$tmp/p"
        fi
        echo "  round $r, $threads thread(s): plain $(tail -n 1 "$tmp/p"), attached $(tail -n 1 "$tmp/a"), stopped $(tail -n 1 "$tmp/s")" >&2
        r=$((r + 1))
    done
    p=$(median "$tmp/p") a=$(median "$tmp/a") s=$(median "$tmp/s")
    [ "$p" != - ] && [ "$a" != - ] && [ "$s" != - ] || die "a run gave no result"
    printf '%-8s %12.0f %12.0f %7s %12.0f %7s\n' "$threads" "$p" "$a" "$(cost "$p" "$a")" "$s" "$(cost "$p" "$s")"
done

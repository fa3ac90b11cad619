#!/bin/sh
# bench/tta.sh: time to accuracy.  `make bench-tta` runs it from the build directory; it also runs
# as `sh bench/tta.sh` from a source tree that has been built.
#
# bench/tta.lua trains the big MLP on Fashion-MNIST, a test on 2,000 test images every 100 steps,
# by one process (1 BLAS thread) and by 2 processes in each configuration of bench/tta.lua
# (allreduce, allreduce-powersgd, hogwild, hogwild-outer, feature, pipeline), as root one
# process in each of two network namespaces joined by a 1 Gbit/s link (bench/netns.sh), else
# under singa-tui --procs 2 on this host.  A run reaches the target at the first test where the
# mean accuracy of the last three tests is at least the target; its time is that test's
# `seconds` in the --metrics file (from the job's start: reading the data, meeting, the tests
# included, as a user waits for them).  Then PyTorch DDP, plain and with its PowerSGD hook
# (rank 4), in images/s over the same link (bench/ddp_ref.py).
#
# Printed per configuration: seconds to the target, its ratio to one process, the steps it took,
# the best mean of three tests in a row the run reached, images/s over the run, and the wire
# bytes per step (what the link's interfaces carried over the
# run, by the steps run; - on this host without root).
#
# Environment:
#   BENCH_TTA_CONFIGS="one allreduce-powersgd hogwild hogwild-outer pipeline feature ddp ddp-powersgd"
#   BENCH_TTA_TARGET=0.845      the mean of the last three tests' accuracy to reach
#   BENCH_TTA_STEPS=2500        training steps of every run (the most it may take)
#   BENCH_TTA_LINK=1gbit        or loopback
#   BENCH_QUICK=1               smoke run: 200 steps, target 0.5 (numbers not meaningful)
#   SINGA_TUI, PYTHON (/usr/bin/python3, which has Debian's torch)
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(dirname "$here")
bench_name=bench/tta
# shellcheck source=bench/common.sh
. "$here/common.sh"
bench_start singa-bench-tta
# shellcheck source=bench/netns.sh
. "$here/netns.sh"

py=${PYTHON:-/usr/bin/python3}
configs=${BENCH_TTA_CONFIGS:-"one allreduce-powersgd hogwild hogwild-outer pipeline feature ddp ddp-powersgd"}
target=${BENCH_TTA_TARGET:-0.845} steps=${BENCH_TTA_STEPS:-2500} link=${BENCH_TTA_LINK:-1gbit}
if [ "${BENCH_QUICK:-0}" = 1 ]; then target=${BENCH_TTA_TARGET:-0.5} steps=${BENCH_TTA_STEPS:-200}; fi
case $link in loopback | 1gbit) ;; *) die "unknown link '$link' (loopback, 1gbit)" ;; esac
[ $root = 1 ] || note "bench/tta: not root: 2 processes on this host, without a shaped link or wire bytes"
"$py" -c 'import torch' 2>/dev/null || { note "bench/tta: $py cannot import torch; no DDP runs"; configs=$(echo "$configs" | sed 's/ddp[-a-z]*//g'); }

# reached METRICS: "SECONDS STEP BEST" of the first test at which the mean of the last three
# reaches the target ("- -" for a run that never does), and the best such mean of the run.
reached() {
    sed -n 's/.*"step": \([0-9]*\), "phase": "test".*"accuracy": \([0-9.e-]*\).*"seconds": \([0-9.]*\).*/\1 \2 \3/p' "$1" |
        awk -v t="$target" '$1 > 0 { a[++n] = $2; if (n < 3) next; m = (a[n] + a[n - 1] + a[n - 2]) / 3
                if (m > best) best = m
                if (!at && m >= t) at = $3 " " $1 }
            END { printf "%s %.4f\n", at ? at : "- -", best }'
}

# run CONFIG: one run; its line of the table to $tmp/rows.
run() {
    c=$1
    metrics=$tmp/$c.jsonl
    rm -f "$tmp/wire" "$metrics"
    case $c in
    one) get "$c" seconds "$tui" --metrics "$metrics" -e "$here/tta.lua" one "$steps" ;;
    ddp | ddp-powersgd)
        set -- --model bigmlp --steps 300 --warmup 5
        [ "$c" = ddp-powersgd ] && set -- "$@" --powersgd 4
        if [ $root = 1 ]; then
            make_ns "$link" || die "cannot make the network namespaces for $link"
            get "$c" images_per_sec pair "$link" ddp "$@"
        else
            get "$c" images_per_sec "$py" "$here/ddp_ref.py" --procs 2 "$@"
        fi
        v=$(tail -n 1 "$tmp/$c" 2>/dev/null || echo -)
        printf '%-19s %9s %7s %7s %9s %10s %13s\n' "$c" - - - - "$v" - >>"$tmp/rows"
        return
        ;;
    *)
        if [ $root = 1 ]; then
            make_ns "$link" || die "cannot make the network namespaces for $link"
            rank0_flags="--metrics $metrics" get "$c" seconds pair "$link" singa "$here/tta.lua" "$c" "$steps"
        else
            get "$c" seconds "$tui" --procs 2 --metrics "$metrics" -e "$here/tta.lua" "$c" "$steps"
        fi
        ;;
    esac
    set -- $(reached "$metrics")
    secs=$1 at=$2 best=$3
    [ "$c" = one ] && one=$secs
    images=$(tr ' ' '\n' <"$tmp/$c.result" 2>/dev/null | sed -n 's/^images=//p')
    run_s=$(tr ' ' '\n' <"$tmp/$c.result" 2>/dev/null | sed -n 's/^seconds=//p')
    ips=$(ratio "$steps" "${run_s:--}" "${images:-0}" "%.0f")
    wire=-
    [ -s "$tmp/wire" ] && wire=$(awk -v b="$(cat "$tmp/wire")" -v n="$steps" 'BEGIN { printf "%.2f\n", b / n / 1e6 }')
    printf '%-19s %9s %7s %7s %9s %10s %13s\n' "$c" "$secs" "$(ratio "$secs" "${one:--}")" "$at" "$best" "$ips" "$wire" >>"$tmp/rows"
}

one=-
note "bench/tta: target $target (mean of the last three tests), at most $steps steps; link $link; configurations: $configs"
note "(CPUs $(wait_idle)% busy before the runs)"
for c in $configs; do run "$c"; done
cleanup_ns

printf '\n%-19s %9s %7s %7s %9s %10s %13s\n' config "s to target" "x one" steps "best acc" images/s "wire MB/step"
cat "$tmp/rows"

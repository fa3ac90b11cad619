#!/bin/sh
# bench/ceiling.sh: what two processes on this machine can gain over one at all, whatever crosses
# between them.  `make bench-ceiling` runs it from the build directory; it also runs as
# `sh bench/ceiling.sh` from a source tree that has been built.
#
# The big MLP (bench/bigmlp.lua, batch 64, 1 BLAS thread a process).  Two upper bounds, measured
# with nothing crossing between the processes:
#   split     a data-parallel step splits the batch: each process trains 32 rows through the
#             whole net and updates every param.  Two singa-tui processes train bench/bigmlp.lua
#             at batch 32 side by side; their images/s together, against one process at batch 64,
#             bound every data-parallel configuration of `make bench-net` (AllReduce compressed or
#             not, PowerSGD: an exchange only adds to the step).  The same for PyTorch
#             (bench/torch_ref.py), and one process at batch 32 alone, to tell a smaller batch's
#             cost from two processes sharing the machine.
#   pipeline  a pipeline's stages run each micro-batch's forward and data-gradient GEMMs on
#             64 / m rows, reading all of a layer's weights each time, and the weight gradient once
#             over the batch (src/net/pipeline.c).  bench/gemm_ceiling times exactly those GEMMs
#             for the whole net (MICRO m) and a step's at m = 1.  Two stages of exactly half the
#             work each, with no transfer, reach at most
#                 2 x T1 / (T1 - G1 + Gm) x m / (m + 1)
#             one process's images/s (T1: one process's step; G1, Gm: the GEMMs' time at 1 and m
#             micro-batches, what is not GEMM kept; m / (m + 1): the busy share of a 1F1B schedule
#             over 2 stages).
#
# Environment:
#   BENCH_ROUNDS=3           rounds (medians over rounds); BENCH_QUICK=1: 1 round, few steps
#   BENCH_CEILING_MICRO="2 4 8"  the micro-batches of the pipeline's rows
#   SINGA_TUI, GEMM_CEILING (bench/gemm_ceiling), PYTHON (/usr/bin/python3, which has Debian's torch)
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(dirname "$here")
bench_name=bench/ceiling
# shellcheck source=bench/common.sh
. "$here/common.sh"
bench_start singa-bench-ceiling

gemm=$(find_prog "${GEMM_CEILING:-}" bench/gemm_ceiling) || die "bench/gemm_ceiling not found: make bench/gemm_ceiling"
py=${PYTHON:-/usr/bin/python3}
torch=1
"$py" -c 'import torch' 2>/dev/null || { note "bench/ceiling: $py cannot import torch (Debian: python3-torch); no PyTorch rows"; torch=0; }
micros=${BENCH_CEILING_MICRO:-"2 4 8"}
if [ "${BENCH_QUICK:-0}" = 1 ]; then rounds=${BENCH_ROUNDS:-1} steps=10 secs=0.5; else rounds=${BENCH_ROUNDS:-3} steps=150 secs=3; fi

ours() { "$tui" -e "$here/bigmlp.lua" 1 "$steps" 3 "$1"; }
theirs() { "$py" "$here/torch_ref.py" --model bigmlp --threads 1 --batch "$1" --max-batches "$steps" --warmup 3 --no-eval; }

# side_by_side NAME CMD...: two copies of CMD at once; the sum of their images/s to $tmp/NAME.
# Whichever ends first leaves the other a few steps alone, which only raises the sum: a bound.
side_by_side() {
    name=$1
    shift
    "$@" >"$tmp/a" 2>&1 &
    first=$!
    "$@" >"$tmp/b" 2>&1
    rb=$?
    wait "$first"
    ra=$?
    if [ $ra != 0 ] || [ $rb != 0 ]; then
        note "$bench_name: FAILED: $*"
        tail -n 15 "$tmp/a" "$tmp/b" >&2
        return 0
    fi
    v=$(cat "$tmp/a" "$tmp/b" | grep '^RESULT' | tr ' ' '\n' | sed -n 's/^images_per_sec=//p' |
        awk '{ s += $1; n++ } END { if (n == 2) print s }')
    [ -n "$v" ] || { note "$bench_name: no images_per_sec in the outputs of: $*"; return 0; }
    echo "$v" >>"$tmp/$name"
    note "  $name: $v"
}

for r in $(seq 1 "$rounds"); do
    note "bench/ceiling: round $r of $rounds (machine $(wait_idle)% busy)"
    get one images_per_sec ours 64
    get half images_per_sec ours 32
    side_by_side pair ours 32
    if [ $torch = 1 ]; then
        get torch_one images_per_sec theirs 64
        get torch_half images_per_sec theirs 32
        side_by_side torch_pair theirs 32
    fi
    get gemm1 ms_per_step "$gemm" bigmlp 1 "$secs" 1 1
    for m in $micros; do get "gemm$m" ms_per_step "$gemm" bigmlp 1 "$secs" 1 "$m"; done
done

one=$(median "$tmp/one")
echo
echo "# bench/ceiling: the big MLP, batch 64, 1 BLAS thread a process; medians of $rounds rounds"
echo "# split the batch over 2 processes, nothing exchanged (bounds every data-parallel row):"
printf '%-34s %10s %10s   %s\n' "run" "images/s" "x one" "every round"
row() { printf '%-34s %10s %10s   %s\n' "$1" "$2" "$3" "$4"; }
row "singa-tui, 1 process, batch 64" "$one" 1.00 "$(all one)"
row "singa-tui, 1 process, batch 32" "$(median "$tmp/half")" "$(ratio "$(median "$tmp/half")" "$one")" "$(all half)"
row "singa-tui, 2 processes, batch 32" "$(median "$tmp/pair")" "$(ratio "$(median "$tmp/pair")" "$one")" "$(all pair)"
if [ $torch = 1 ]; then
    tone=$(median "$tmp/torch_one")
    row "PyTorch, 1 process, batch 64" "$tone" 1.00 "$(all torch_one)"
    row "PyTorch, 1 process, batch 32" "$(median "$tmp/torch_half")" "$(ratio "$(median "$tmp/torch_half")" "$tone")" "$(all torch_half)"
    row "PyTorch, 2 processes, batch 32" "$(median "$tmp/torch_pair")" "$(ratio "$(median "$tmp/torch_pair")" "$tone")" "$(all torch_pair)"
fi
echo "# a 2-stage pipeline, perfectly balanced, no transfer (bounds the pipeline rows):"
t1=$(ratio 64 "$one" 1000 %.3f) # one process's step, ms
g1=$(median "$tmp/gemm1")
printf '%-14s %12s %16s %10s\n' "micro-batches" "GEMMs ms" "a stage's ms" "x one"
printf '%-14s %12s %16s %10s   %s\n' 1 "$g1" "$t1" 1.00 "(one process's step)"
for m in $micros; do
    gm=$(median "$tmp/gemm$m")
    awk -v t1="$t1" -v g1="$g1" -v gm="$gm" -v m="$m" 'BEGIN {
        if (t1 == "-" || g1 == "-" || gm == "-") { printf "%-14s %12s %16s %10s\n", m, "-", "-", "-"; exit }
        stage = (t1 - g1 + gm) / 2
        printf "%-14s %12.1f %16.1f %10.2f\n", m, gm, stage, t1 / stage * m / (m + 1) }'
done

#!/bin/sh
# bench/accuracy.sh: what compression costs in accuracy.  `make bench-accuracy` runs it from the
# build directory; it also runs as `sh bench/accuracy.sh` from a source tree that has been built.
#
# demos/fmnist_mlp.lua's job (784-512-256-10 on Fashion-MNIST, its steps and schedule) under
# AllReduce over 2 processes (singa-tui --procs 2, bench/fmnist_compress.lua), uncompressed and
# with each cluster.compress, the same steps: the final test accuracy over the 10,000 test
# images, and its difference to the uncompressed run in points, against issue 21's bounds (fp16
# and bf16 within 0.3 points, top-k 1% with error feedback within 1; issue 31's: PowerSGD rank 4
# within 0.5, and `outer`, Hogwild with an outer Nesterov optimizer, within 0.5 of AllReduce).
#
# Environment:
#   BENCH_ACC_CONFIGS="none fp16 bf16 topk topk8 powersgd outer"
#   BENCH_ACC_STEPS                          train_steps (default: the demo's, 12000)
#   BENCH_QUICK=1                            smoke run: 300 steps (numbers not meaningful)
#   FMNIST_DIR (/usr/share/datasets/fashion-mnist/), SINGA_TUI
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(dirname "$here")
bench_name=bench/accuracy
# shellcheck source=bench/common.sh
. "$here/common.sh"
bench_start singa-bench-accuracy

configs=${BENCH_ACC_CONFIGS:-"none fp16 bf16 topk topk8 powersgd outer"}
steps=${BENCH_ACC_STEPS:-}
[ "${BENCH_QUICK:-0}" = 1 ] && steps=${steps:-300}
fm=${FMNIST_DIR:-/usr/share/datasets/fashion-mnist/}
[ -r "$fm/train-images-idx3-ubyte.gz" ] || die "no Fashion-MNIST in $fm (Debian: dataset-fashion-mnist), or set FMNIST_DIR"

note "bench/accuracy: configurations: $configs; steps: ${steps:-as in the demo}"
for c in $configs; do
    out=$tmp/$c.out
    (cd "$srcdir" && FMNIST_DIR=$fm timeout 3600 "$tui" --procs 2 -e bench/fmnist_compress.lua "$c" $steps) >"$out" 2>&1
    line=$(grep '^RESULT' "$out")
    [ -n "$line" ] || { tail -n 15 "$out" >&2; die "$c: no result"; }
    note "  $c: $line"
    echo "$line" | tr ' ' '\n' | sed -n 's/^accuracy=//p' >"$tmp/$c.acc"
done

printf '\n%-7s %9s %14s %8s\n' config accuracy "points vs none" bound
base=$(cat "$tmp/none.acc" 2>/dev/null)
for c in $configs; do
    acc=$(cat "$tmp/$c.acc")
    case $c in fp16 | bf16) bound=0.3 ;; topk | topk8) bound=1 ;; powersgd | outer) bound=0.5 ;; *) bound=- ;; esac
    awk -v c="$c" -v a="$acc" -v b="${base:-}" -v bound="$bound" 'BEGIN {
        # Numbers, not strings: awk compares the string "+0.97" below "0.5".
        p = 100 * (a - b); ap = p < 0 ? -p : p
        d = b == "" ? "-" : sprintf("%+.2f", p)
        verdict = bound == "-" || d == "-" ? "" : (sprintf("%.2f", ap) + 0 <= bound + 0 ? "  within" : "  OUTSIDE")
        printf "%-7s %8.2f%% %14s %8s%s\n", c, 100 * a, d, bound, verdict }'
done

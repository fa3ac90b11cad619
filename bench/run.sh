#!/bin/sh
# bench/run.sh: training throughput and peak memory of singa-tui against the PyTorch reference
# (bench/torch_ref.py) and against the sgemm-only ceiling (bench/gemm_ceiling), for the small and
# the big MLP at 1 and 2 threads.  `make bench` runs it from the build directory; it also runs as
# `sh bench/run.sh` from a source tree that has been built.
#
# Each round runs, per model and thread count: our engine, the PyTorch reference (at 2 threads both
# of its good settings, OMP_WAIT_POLICY=PASSIVE --threads 2 and --threads 1 --blas-threads 2, keeping
# the better), and the GEMM ceiling.  The order of ours and PyTorch's flips every round.  The table
# shows medians over the rounds.  The machine is noisy: compare ratios, not absolute numbers.
#
# Environment:
#   BENCH_ROUNDS=5          rounds (median over rounds)
#   BENCH_QUICK=1           smoke run: 1 round, few steps (numbers are not meaningful)
#   BENCH_MODELS="smallmlp bigmlp lenet"   BENCH_THREADS="1 2"
#   BENCH_SMALL_STEPS=936   BENCH_BIG_STEPS=150   timed training steps per run (both engines)
#   BENCH_CEILING_SECONDS=2 timed seconds per gemm_ceiling run
#   BENCH_TORCH=0           skip PyTorch;  BENCH_PYTHON=/usr/bin/python3  interpreter that has torch
#   SINGA_TUI, GEMM_CEILING paths of the programs (default: ./singa-tui, ./bench/gemm_ceiling, then
#                           the same beside this script's folder)
#   OPENBLAS_CORETYPE       passed to all three (reported in the header); unset, the kernels
#                           singa-tui runs (bench/common.sh), for all three
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(dirname "$here")

quick=${BENCH_QUICK:-0}
if [ "$quick" = 1 ]; then
    rounds=${BENCH_ROUNDS:-1}
    small_steps=${BENCH_SMALL_STEPS:-60}
    big_steps=${BENCH_BIG_STEPS:-6}
    small_warm=5
    big_warm=2
    lenet_steps=${BENCH_LENET_STEPS:-20}
    lenet_warm=2
    ceil_secs=${BENCH_CEILING_SECONDS:-0.3}
else
    rounds=${BENCH_ROUNDS:-5}
    small_steps=${BENCH_SMALL_STEPS:-936}
    big_steps=${BENCH_BIG_STEPS:-150}
    small_warm=20
    big_warm=5
    lenet_steps=${BENCH_LENET_STEPS:-300}
    lenet_warm=10
    ceil_secs=${BENCH_CEILING_SECONDS:-2}
fi
models=${BENCH_MODELS:-"smallmlp bigmlp lenet"}
threads_list=${BENCH_THREADS:-"1 2"}
python=${BENCH_PYTHON:-/usr/bin/python3}
use_torch=${BENCH_TORCH:-1}

bench_name=bench
# shellcheck source=bench/common.sh
. "$here/common.sh"
bench_start singa-bench
median_fmt="%.0f"

if ! ceiling=$(find_prog "${GEMM_CEILING:-}" bench/gemm_ceiling); then
    # From a source tree without `make bench/gemm_ceiling`: build it here.
    note "bench: bench/gemm_ceiling not built; compiling it into $tmp"
    cflags=$(pkg-config --cflags openblas 2>/dev/null) || cflags=
    libs=$(pkg-config --libs openblas 2>/dev/null) || libs=-lopenblas
    # shellcheck disable=SC2086
    ${CC:-cc} -O2 -std=gnu11 $cflags -o "$tmp/gemm_ceiling" "$here/gemm_ceiling.c" $libs -lpthread \
        || die "cannot build bench/gemm_ceiling; run: make bench/gemm_ceiling"
    ceiling=$tmp/gemm_ceiling
fi

timev=
if [ -x /usr/bin/time ] && /usr/bin/time -v -o "$tmp/t" true 2>/dev/null; then
    timev=/usr/bin/time
else
    note "bench: GNU time (/usr/bin/time, Debian package 'time') not found: no peak RSS"
fi

torch_version=-
if [ "$use_torch" = 1 ]; then
    if torch_version=$("$python" -c 'import torch, numpy; print(torch.__version__)' 2>/dev/null); then
        :
    else
        note "bench: $python cannot import torch (Debian package python3-torch): PyTorch columns skipped"
        use_torch=0
        torch_version=-
    fi
fi

# run NAME CMD...: runs CMD under GNU time; appends images/s and peak RSS (MB) to $tmp/NAME.ips and
# $tmp/NAME.rss; echoes the images/s ("-" when the run failed).
run() {
    name=$1
    shift
    if [ -n "$timev" ]; then
        "$timev" -v -o "$tmp/time.out" "$@" >"$tmp/out" 2>&1
    else
        "$@" >"$tmp/out" 2>&1
    fi
    rc=$?
    ips=$(sed -n 's/^RESULT images_per_sec=\([0-9.]*\).*/\1/p' "$tmp/out" | tail -n 1)
    if [ $rc -ne 0 ] || [ -z "$ips" ]; then
        note "bench: FAILED (exit $rc): $*"
        tail -n 15 "$tmp/out" >&2
        echo 1 >"$tmp/failed"
        echo -
        return 0
    fi
    rss=-
    if [ -n "$timev" ]; then
        rss=$(awk -F: '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$tmp/time.out")
    fi
    echo "$ips" >>"$tmp/$name.ips"
    echo "$rss" >>"$tmp/$name.rss"
    grep '^RESULT' "$tmp/out" | tail -n 1 >>"$tmp/$name.log"
    echo "$ips"
}


list() { # WHO MODEL THREADS: the images/s of every run, in order
    if [ -s "$tmp/$1_$2_$3.ips" ]; then paste -s -d ' ' "$tmp/$1_$2_$3.ips"; else echo -; fi
}

steps_of() { case $1 in bigmlp) echo "$big_steps" ;; lenet) echo "$lenet_steps" ;; *) echo "$small_steps" ;; esac; }
warm_of() { case $1 in bigmlp) echo "$big_warm" ;; lenet) echo "$lenet_warm" ;; *) echo "$small_warm" ;; esac; }
batch_of() { case $1 in smallmlp) echo 128 ;; *) echo 64 ;; esac; }

ours() { # MODEL THREADS
    s=$(steps_of "$1")
    ips=$(run "ours_$1_$2" "$tui" -e "$here/$1.lua" "$2" "$s" "$(warm_of "$1")")
    note "  ours    $1 threads=$2: $ips images/s"
}

torch() { # MODEL THREADS: at 2+ threads, the better of PyTorch's two good settings counts
    [ "$use_torch" = 1 ] || return 0
    m=$1 t=$2
    s=$(steps_of "$m")
    nb=$((60000 / $(batch_of "$m")))
    epochs=$(((s + nb - 1) / nb))
    per_epoch=$(((s + epochs - 1) / epochs))
    set -- "$python" "$here/torch_ref.py" --model "$m" --epochs "$epochs" --max-batches "$per_epoch" \
        --warmup "$(warm_of "$m")" --no-eval
    if [ "$t" = 1 ]; then
        ips=$(run "torch_${m}_$t" "$@" --threads 1)
        note "  pytorch $m threads=$t: $ips images/s"
        return 0
    fi
    # shellcheck disable=SC2030 # the subshell is the point: only this run sees it
    a=$(export OMP_WAIT_POLICY=PASSIVE; run "torchA_${m}_$t" "$@" --threads "$t")
    b=$(run "torchB_${m}_$t" "$@" --threads 1 --blas-threads "$t")
    note "  pytorch $m threads=$t: $a images/s (OMP_WAIT_POLICY=PASSIVE --threads $t), $b images/s (--threads 1 --blas-threads $t)"
    if [ "$a" != - ] && { [ "$b" = - ] || awk -v a="$a" -v b="$b" 'BEGIN { exit !(a + 0 >= b + 0) }'; }; then
        v=torchA
    elif [ "$b" != - ]; then
        v=torchB
    else
        return 0
    fi
    tail -n 1 "$tmp/${v}_${m}_$t.ips" >>"$tmp/torch_${m}_$t.ips"
    tail -n 1 "$tmp/${v}_${m}_$t.rss" >>"$tmp/torch_${m}_$t.rss"
}

ceil() { # MODEL THREADS (the GEMM-only ceiling models the MLPs)
    [ "$1" = lenet ] && return 0
    ips=$(run "ceil_$1_$2" "$ceiling" "$1" "$2" "$ceil_secs")
    note "  ceiling $1 threads=$2: $ips images/s"
}

cpu=$(LC_ALL=C lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)
core=$("$ceiling" 64:8-8 1 0.01 2>/dev/null | sed -n 's/.* core=\([^ ]*\).*/\1/p')
echo "singa-tui benchmark: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "  $("$tui" --version 2>/dev/null | head -n 1); PyTorch $torch_version ($python)"
echo "  CPU: ${cpu:-unknown}, nproc $(nproc 2>/dev/null || echo '?')"
# shellcheck disable=SC2031
echo "  OpenBLAS core: ${core:-?}; OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-(unset)}; OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-(unset)}"
echo "  rounds $rounds; timed steps per run: smallmlp $small_steps (warm-up $small_warm), bigmlp $big_steps (warm-up $big_warm), lenet $lenet_steps (warm-up $lenet_warm); ceiling ${ceil_secs}s per run"
[ "$quick" = 1 ] && echo "  BENCH_QUICK=1: a smoke run; the numbers are not meaningful"
echo

r=1
while [ "$r" -le "$rounds" ]; do
    note "round $r/$rounds"
    for m in $models; do
        case $m in smallmlp | bigmlp | lenet) ;; *) die "unknown model '$m' (smallmlp, bigmlp, lenet)" ;; esac
        for t in $threads_list; do
            if [ $((r % 2)) = 1 ]; then
                ours "$m" "$t"
                torch "$m" "$t"
            else
                torch "$m" "$t"
                ours "$m" "$t"
            fi
            ceil "$m" "$t"
        done
    done
    r=$((r + 1))
done

echo "Training images/s (median over $rounds round(s)); peak RSS of the whole process (median):"
fmt="%-9s %3s %10s %10s %6s %10s %8s %8s %8s %6s\n"
# shellcheck disable=SC2059
printf "$fmt" model thr ours torch ratio ceiling ours/ceil oursMB torchMB RSS
for m in $models; do
    for t in $threads_list; do
        o=$(median "$tmp/ours_${m}_$t.ips")
        p=$(median "$tmp/torch_${m}_$t.ips")
        c=$(median "$tmp/ceil_${m}_$t.ips")
        orss=$(median "$tmp/ours_${m}_$t.rss")
        prss=$(median "$tmp/torch_${m}_$t.rss")
        # shellcheck disable=SC2059
        printf "$fmt" "$m" "$t" "$o" "$p" "$(ratio "$o" "$p")" "$c" \
            "$(ratio "$o" "$c" 100 "%.0f%%")" "$orss" "$prss" "$(ratio "$orss" "$prss" 1 "%.3f")"
    done
done
echo
echo "ratio = ours / torch images/s; ours/ceil = ours / GEMM-only images/s; RSS = ours / torch peak RSS."
if [ "$use_torch" = 1 ]; then
    for m in $models; do
        for t in $threads_list; do
            [ "$t" = 1 ] && continue
            echo "PyTorch $m at $t threads, medians: OMP_WAIT_POLICY=PASSIVE --threads $t: $(median "$tmp/torchA_${m}_$t.ips");" \
                "--threads 1 --blas-threads $t: $(median "$tmp/torchB_${m}_$t.ips") images/s"
        done
    done
fi
echo "Per run, images/s: ours / torch / ceiling"
for m in $models; do
    for t in $threads_list; do
        echo "  $m $t: $(list ours "$m" "$t") / $(list torch "$m" "$t") / $(list ceil "$m" "$t")"
    done
done
if [ -f "$tmp/failed" ]; then
    echo "bench: some runs failed (see above)" >&2
    exit 1
fi
exit 0

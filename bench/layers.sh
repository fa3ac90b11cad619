#!/bin/sh
# Per-layer forward and backward milliseconds per batch for LeNet (batch 64): singa-tui (job
# field `profile = true`) beside PyTorch (module hooks in bench/torch_ref.py --layer-times), at 1
# and 2 threads.  Layers pair up in order: conv1, pool1, conv2, pool2, ip1, relu1, ip2.
# Env: SINGA_TUI, BENCH_PYTHON (/usr/bin/python3), BENCH_LAYER_STEPS (200; 20 with BENCH_QUICK=1),
# BENCH_THREADS ("1 2").
here=$(cd "$(dirname "$0")" && pwd)
tui=${SINGA_TUI:-./singa-tui}
python=${BENCH_PYTHON:-/usr/bin/python3}
if [ "${BENCH_QUICK:-0}" = 1 ]; then steps=${BENCH_LAYER_STEPS:-20}; else steps=${BENCH_LAYER_STEPS:-200}; fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/singa-layers.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

for t in ${BENCH_THREADS:-1 2}; do
    BENCH_PROFILE=1 "$tui" -e "$here/lenet.lua" "$t" "$steps" 10 >"$tmp/ours" 2>&1 || { cat "$tmp/ours"; exit 1; }
    if [ "$t" = 1 ]; then set -- --threads 1; else set -- --threads "$t"; fi
    OMP_WAIT_POLICY=PASSIVE "$python" "$here/torch_ref.py" --model lenet "$@" --epochs 1 \
        --max-batches "$steps" --warmup 10 --no-eval --layer-times >"$tmp/torch" 2>&1 || { cat "$tmp/torch"; exit 1; }
    echo "LeNet per-layer ms per batch of 64, $t thread(s): singa-tui / PyTorch (oneDNN)"
    printf '%-8s %-14s %9s %9s %9s %9s\n' layer type fwd fwd-torch bwd bwd-torch
    awk '$1 == "LAYER" && $3 != "kIDXData" && $3 != "kMnist" && $3 != "kLabel" && $3 != "kSoftmaxLoss" { print $2, $3, $4, $5 }' "$tmp/ours" >"$tmp/o"
    awk '$1 == "LAYER" && $3 != "Unflatten" && $3 != "Flatten" { print $4, $5 }' "$tmp/torch" >"$tmp/p"
    paste -d ' ' "$tmp/o" "$tmp/p" | awk '{ printf "%-8s %-14s %9.3f %9.3f %9.3f %9.3f\n", $1, $2, $3, $5, $4, $6;
        f += $3; g += $5; b += $4; c += $6 }
        END { printf "%-8s %-14s %9.3f %9.3f %9.3f %9.3f\n", "total", "", f, g, b, c }'
    echo
done

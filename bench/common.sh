# shellcheck shell=sh disable=SC2034,SC2154 # its variables are set by and for the sourcing script
# What the bench scripts share (sourced after they set bench_name and srcdir): messages, finding
# the programs, a scratch folder, running a measurement, waiting for idle CPUs, and medians and
# ratios of measurements.

die() { echo "$bench_name: $*" >&2; exit 1; }
note() { echo "$*" >&2; }

find_prog() { # ENV_VALUE NAME: the first executable of ENV_VALUE, ./NAME, $srcdir/NAME
    for p in "$1" "./$2" "$srcdir/$2"; do
        if [ -n "$p" ] && [ -x "$p" ] && [ ! -d "$p" ]; then
            (cd "$(dirname "$p")" && echo "$(pwd)/$(basename "$p")")
            return 0
        fi
    done
    return 1
}

# bench_start PREFIX: tui (singa-tui's path) and tmp (a scratch folder, removed at exit).
bench_start() {
    tui=$(find_prog "${SINGA_TUI:-}" singa-tui) || die "singa-tui not found: build it first (make), or set SINGA_TUI"
    # The kernels singa-tui runs (it picks better ones where OpenBLAS fell back to generic ones),
    # for every program of the run: PyTorch and the sgemm ceiling load the same OpenBLAS.
    if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
        OPENBLAS_CORETYPE=$("$tui" --version | sed -n 's/.*OpenBLAS \([A-Za-z0-9]*\))$/\1/p')
        [ -n "$OPENBLAS_CORETYPE" ] && export OPENBLAS_CORETYPE || unset OPENBLAS_CORETYPE
    fi
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || die "mktemp failed"
    trap 'rm -rf "$tmp"' EXIT
    trap 'exit 130' INT TERM
}

# median FILE: the median of the numbers in FILE (lines holding only a number), or "-"; the
# mean of the middle two printed with $median_fmt.
median_fmt="%.1f"
median() {
    if [ ! -s "$1" ]; then
        echo -
        return
    fi
    grep -E '^[0-9.]+$' "$1" | sort -n | awk -v f="$median_fmt" '{ v[NR] = $1 } END {
        if (NR == 0) { print "-"; exit }
        if (NR % 2) print v[(NR + 1) / 2]; else printf f "\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

ratio() { # A B [SCALE [FMT]]: SCALE * A / B, or "-"
    awk -v a="$1" -v b="$2" -v k="${3:-1}" -v f="${4:-%.2f}" 'BEGIN {
        if (a == "-" || b == "-" || b + 0 == 0) print "-"; else printf f "\n", k * a / b }'
}

all() { if [ -s "$tmp/$1" ]; then paste -s -d ' ' "$tmp/$1"; else echo -; fi; }

# get NAME KEY CMD...: runs CMD, appends the value of KEY=... from its last RESULT line to
# $tmp/NAME and keeps that line in $tmp/NAME.result; a failed run is reported and leaves nothing.
get() {
    name=$1 key=$2
    shift 2
    if ! "$@" >"$tmp/out" 2>&1; then
        note "$bench_name: FAILED: $*"
        tail -n 15 "$tmp/out" >&2
        return 0
    fi
    v=$(grep '^RESULT' "$tmp/out" | tail -n 1 | tr ' ' '\n' | sed -n "s/^$key=//p")
    [ -n "$v" ] || { note "$bench_name: no $key in the output of: $*"; tail -n 15 "$tmp/out" >&2; return 0; }
    echo "$v" >>"$tmp/$name"
    grep '^RESULT' "$tmp/out" | tail -n 1 >"$tmp/$name.result"
    note "  $name: $v"
}

# busy: percent of all CPUs' time spent busy over the next 2 seconds (from /proc/stat).
busy() {
    if ! a=$(head -n 1 /proc/stat 2>/dev/null); then echo 0; return; fi
    sleep 2
    b=$(head -n 1 /proc/stat)
    echo "$a
$b" | awk '{ idle = $5 + $6; tot = 0; for (i = 2; i <= NF; i++) tot += $i; t[NR] = tot; d[NR] = idle }
        END { dt = t[2] - t[1]; if (dt <= 0) print 0; else printf "%.0f\n", 100 * (1 - (d[2] - d[1]) / dt) }'
}

# wait_idle: waits up to $BENCH_WAIT_IDLE seconds for idle CPUs; echoes the last busy percent.
wait_idle() {
    waited=0
    while :; do
        b=$(busy)
        if [ "$b" -lt 10 ] || [ "$waited" -ge "${BENCH_WAIT_IDLE:-0}" ]; then echo "$b"; return; fi
        sleep 8
        waited=$((waited + 10))
    done
}

reverse() { out=; for w in "$@"; do out="$w${out:+ $out}"; done; echo "$out"; }

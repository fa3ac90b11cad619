# shellcheck shell=sh disable=SC2034,SC2154 # its variables are set by and for the sourcing script
# What bench/run.sh and bench/dist.sh share (sourced after they set bench_name and srcdir):
# messages, finding the programs, a scratch folder, and medians and ratios of measurements.

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

# Lengths a newcomer can read (issue 32): no function of src/ over 100 lines, at most 8 over 60,
# no .c file over 800 lines.  A function is counted from its opening brace to its closing one,
# both at the start of a line (the house style); the longest are printed on failure.
: "${top_srcdir:?top_srcdir is not set}"
. "$top_srcdir/t/tap.sh"
export LC_ALL=C
tmp=t/3180-lengths.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1

(cd "$top_srcdir" && find src -name '*.c' | sort) >"$tmp/files"
[ -s "$tmp/files" ]
report $? "the sources of src/ are found"

# "LINES FILE:LINE SIGNATURE" for every function, longest first.
while read -r f; do
    awk -v F="$f" '
        /^[A-Za-z_].*\(/ && !/;[ \t]*$/ { sig = $0; at = NR }
        /^\{/ { start = NR; name = sig; nat = at }
        /^\}/ && start { printf "%d %s:%d %s\n", NR - start + 1, F, nat, name; start = 0 }
    ' "$top_srcdir/$f"
done <"$tmp/files" | sort -rn >"$tmp/functions"
[ "$(wc -l <"$tmp/functions")" -gt 500 ]
report $? "functions are found ($(wc -l <"$tmp/functions"))"

awk '$1 > 100' "$tmp/functions" >"$tmp/over100"
[ ! -s "$tmp/over100" ]
report $? "no function is over 100 lines ($(wc -l <"$tmp/over100") are)" "$tmp/over100"

awk '$1 > 60' "$tmp/functions" >"$tmp/over60"
[ "$(wc -l <"$tmp/over60")" -le 8 ]
report $? "at most 8 functions are over 60 lines ($(wc -l <"$tmp/over60") are)" "$tmp/over60"

(cd "$top_srcdir" && xargs wc -l) <"$tmp/files" | awk '$2 != "total" && $1 > 800' >"$tmp/long_files"
[ ! -s "$tmp/long_files" ]
report $? "no .c file of src/ is over 800 lines" "$tmp/long_files"

done_testing

# singa-tui's command line is one table (src/app/cli.c), as tmux's commands are: --help prints
# exactly the options of its rows, and no file of src/ compares an argument with an option's
# name but the table's lookup.  (t/3140 checks the man page's OPTIONS against --help, so
# against the table.)
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
. "$top_srcdir/t/tap.sh"
tmp=t/3145-cli-table.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1

"$SINGA_TUI" --help >"$tmp/help.txt" 2>&1
sed -n 's/^  \(-[-a-z]*\)\(, \(-[-a-z]*\)\)\{0,1\} .*/\1 \3/p' "$tmp/help.txt" | tr ' ' '\n' | sed '/^$/d' |
    sort -u >"$tmp/help.opts"
# A row: {"--name", "alias" or NULL, "ARG" or NULL, handler, ...
sed -nE 's/^    \{"(-[-a-z]*)", ("(-[-a-z]*)"|NULL), .*/\1 \3/p' "$top_srcdir/src/app/cli.c" 2>/dev/null |
    tr ' ' '\n' | sed '/^$/d' | sort -u >"$tmp/table.opts"
[ "$(wc -l <"$tmp/help.opts")" -ge 10 ] && diff "$tmp/help.opts" "$tmp/table.opts" >"$tmp/opts.diff"
report $? "--help prints exactly the options of src/app/cli.c's table ($(wc -l <"$tmp/table.opts") names)" \
    "$tmp/opts.diff"

grep -rnE 'strcmp\([^,]*argv[^,]*, *"-' "$top_srcdir/src" >"$tmp/chains"
[ ! -s "$tmp/chains" ]
report $? "no file of src/ compares an argument with an option's name ($(wc -l <"$tmp/chains") do)" "$tmp/chains"

[ $failed -eq 0 ] && rm -rf "$tmp"
done_testing

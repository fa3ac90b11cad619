# The manual, singa-tui(1) (docs/singa-tui.1, which make writes from docs/singa-tui.1.in): it
# renders without a warning, names every option --help prints and no other, every environment
# variable the program and its demos read, and --help points to it.
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
. "$top_srcdir/t/tap.sh"
tmp=t/3140-man.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
page=$(dirname "$SINGA_TUI")/docs/singa-tui.1

[ -f "$page" ] && ! grep -n '@[a-z]*@' "$page" >"$tmp/subst.out"
report $? "make wrote docs/singa-tui.1 with the folders and version filled in" "$tmp/subst.out"
if command -v groff >/dev/null 2>&1; then
    groff -man -ww -z -Tutf8 "$page" >"$tmp/groff.out" 2>&1 && [ ! -s "$tmp/groff.out" ]
    report $? "groff -man -ww -z -Tutf8 renders it without a warning" "$tmp/groff.out"
else
    skip "groff -man -ww renders it without a warning" "groff is not installed"
fi
if command -v man >/dev/null 2>&1; then
    MANWIDTH=80 man -l "$page" >"$tmp/man.txt" 2>"$tmp/man.err" && [ ! -s "$tmp/man.err" ] &&
        for s in NAME SYNOPSIS DESCRIPTION OPTIONS ENVIRONMENT FILES 'EXIT STATUS' EXAMPLES; do
            grep -q "^$s\$" "$tmp/man.txt" || { echo "no section $s" >>"$tmp/man.err"; false; } || break
        done
    report $? "man -l shows it, with NAME, SYNOPSIS, OPTIONS, ENVIRONMENT, FILES, EXIT STATUS, EXAMPLES" "$tmp/man.err"
else
    skip "man -l shows it" "man is not installed"
fi

# The options: the left column of --help, and the tags of the man page's OPTIONS items.
"$SINGA_TUI" --help >"$tmp/help.txt" 2>&1
sed -n 's/^  \(-[-a-z]*\)\(, \(-[-a-z]*\)\)\{0,1\} .*/\1 \3/p' "$tmp/help.txt" | tr ' ' '\n' | sed '/^$/d' |
    sort -u >"$tmp/help.opts"
awk '/^\.SH/ { sec = $2 } sec == "OPTIONS" && prev == ".TP" {
         gsub(/\\-/, "-"); gsub(/"/, "")
         for (i = 2; i <= NF; i++) if ($i ~ /^-/) { sub(/,$/, "", $i); print $i }
     } { prev = $1 }' "$page" | sort -u >"$tmp/man.opts"
[ "$(wc -l <"$tmp/help.opts")" -ge 10 ] && diff "$tmp/help.opts" "$tmp/man.opts" >"$tmp/opts.diff"
report $? "its OPTIONS are exactly those --help prints ($(tr '\n' ' ' <"$tmp/help.opts"))" "$tmp/opts.diff"
grep -q 'singa-tui(1) (man singa-tui)' "$tmp/help.txt"
report $? "--help points to singa-tui(1)" "$tmp/help.txt"

# The environment: every getenv of src/ and os.getenv of demos/ and lua/.
grep -rhoE '(os\.)?getenv\("[A-Z_0-9]+"\)' "$top_srcdir/src" "$top_srcdir/demos" "$top_srcdir/lua" \
    --include='*.c' --include='*.lua' | sed 's/.*("\(.*\)")/\1/' | sort -u >"$tmp/env.read"
awk '/^\.SH/ { sec = $2 } sec == "ENVIRONMENT" && prev == ".TP" {
         gsub(/"/, ""); for (i = 2; i <= NF; i++) { sub(/,$/, "", $i); print $i }
     } { prev = $1 }' "$page" | sort -u >"$tmp/env.man"
[ -s "$tmp/env.read" ] && comm -23 "$tmp/env.read" "$tmp/env.man" >"$tmp/env.missing" && [ ! -s "$tmp/env.missing" ]
report $? "its ENVIRONMENT names every variable the program and demos read ($(tr '\n' ' ' <"$tmp/env.read"))" \
    "$tmp/env.missing"

[ $failed -eq 0 ] && rm -rf "$tmp"
done_testing

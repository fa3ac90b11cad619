# The README's five-minute tour as a newcomer follows it: its first.lua and its commands, taken
# from README.md and run as written (the headless runs with 60 steps as first argument): the job
# trains, --summary and --test work on it, with the tour's cluster line it trains in 2 processes
# to the same accuracy, and the workbench opens it there and attaches to it headless.
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
tmp=t/3135-tour.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
TUI_TEST_SECONDS=240
. "$top_srcdir/t/tmux.sh"
trap 'kill_ours; cleanup' EXIT

tour() { awk '/^## A five-minute tour/ { on = 1 } /^## Read on/ { on = 0 } on' "$top_srcdir/README.md"; }
block() { tour | awk -v tag="<!-- tour: $1 -->" '$0 == tag { on = 1; next }
                                                  on && /^```lua$/ { code = 1; next } code && /^```$/ { exit } code'; }
block first.lua >"$tmp/first.lua"
block cluster >"$tmp/cluster.lua"
tour | sed -n 's|^    \./singa-tui |"$SINGA_TUI" |p' >"$tmp/commands"
grep -q 'singa.train(job)' "$tmp/first.lua" && grep -q 'procs = 2' "$tmp/cluster.lua" &&
    [ "$(wc -l <"$tmp/commands")" -eq 7 ]
report $? "the tour has first.lua, its cluster line and 7 commands" "$tmp/commands"
cmd() { sed -n "$1p" "$tmp/commands"; }
run() { # run N OUT [ARGS]: the tour's command N in $tmp, ARGS appended
    c="$(cmd "$1") $3"
    echo "# $c" >"$tmp/$2"
    (cd "$tmp" && eval "timeout 120 $c") >>"$tmp/$2" 2>&1
}
acc() { sed -n 's/^test accuracy \([0-9.]*\) after 60 steps$/\1/p' "$tmp/$1" | head -n 1; }

run 1 plain.out 60 && a=$(acc plain.out) && [ -n "$a" ] && [ -f "$tmp/ckpt/first/step000000060.ckpt" ]
report $? "step 1: $(cmd 1) 60 trains and leaves its checkpoint (test accuracy ${a:-none})" "$tmp/plain.out"
run 2 summary.out && grep -q '^total params: 101,770$' "$tmp/summary.out"
report $? "$(cmd 2) prints the net's summary" "$tmp/summary.out"
run 3 test.out && grep -q '^loaded ckpt/first/step000000060.ckpt (step 60)$' "$tmp/test.out" &&
    grep -q "^step 60 *test *loss [0-9.]* *accuracy $a\$" "$tmp/test.out"
report $? "$(cmd 3) tests that checkpoint: accuracy $a again" "$tmp/test.out"

# Step 2: the cluster line after checkpoint_path, then two processes.
sed "/checkpoint_path = /r $tmp/cluster.lua" "$tmp/first.lua" >"$tmp/two.lua" && mv "$tmp/two.lua" "$tmp/first.lua"
run 4 procs.out 60 && grep -q '^rank 1 of 2 ' "$tmp/procs.out" && [ "$(acc procs.out)" = "$a" ] &&
    [ -f "$tmp/ckpt/first/step000000060.s0.1.ckpt" ]
report $? "step 2: $(cmd 4) 60 trains in 2 processes to the same accuracy ($(acc procs.out))" "$tmp/procs.out"
run 3 test2.out && grep -q '^loaded ckpt/first/step000000060.\*.ckpt (step 60)$' "$tmp/test2.out" &&
    grep -q "^step 60 *test *loss [0-9.]* *accuracy $a\$" "$tmp/test2.out"
report $? "and $(cmd 3) tests its distributed checkpoint" "$tmp/test2.out"

# Step 3: the workbench, the job in 2 processes (60 steps), then attached to a headless run.
eval "set -- $(cmd 5 | sed 's|^"$SINGA_TUI" ||')"
start_tui TMPDIR="$PWD/$tmp" -- "$@" 60
wait_for 'process 1 on ' 30 && keys r && wait_for 'test accuracy [0-9.]* after 60 steps' 30
report $? "step 3: $(cmd 5) opens the job in 2 processes and r trains it" "$tmp/screen.txt"
keys q && restored 0
report $? "q quits" "$tmp/screen.txt"
port=$(free_port)
c=$(cmd 6 | sed "s|:7070 |:$port |; s| &\$||")
(cd "$tmp" && eval "timeout 120 $c") >"$tmp/listen.out" 2>&1 &
until_ok grep -q '^step 0 .*train' "$tmp/listen.out" # it listens once it trains
eval "set -- $(cmd 7 | sed 's|^"$SINGA_TUI" ||; s|:7070$|:'"$port"'|')"
start_tui -- "$@"
# The console's note stays on screen; the log's "attached to" line scrolls away within a second
# behind this fast job's progress lines.
wait_for 'console is off when attached' 30 && wait_for 'process 1 on ' 10
report $? "$(cmd 7) attaches to $(cmd 6)" "$tmp/screen.txt"
keys q && restored 0
report $? "q detaches" "$tmp/screen.txt"
tui_done

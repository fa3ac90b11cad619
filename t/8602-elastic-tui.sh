# The workbench on an elastic job (singa-tui --procs 3 --elastic 2 FILE, the workbench being
# rank 0): the Topology panel says the job is elastic; rank 2 killed, the workbench ends and
# starts again with the job on the 2 processes left, its Topology panel naming the restart, the
# rank lost and the processes, its log the step it resumed.  Prints TAP.
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
tmp=t/8602-elastic-tui.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
TUI_TEST_SECONDS=${TUI_TEST_SECONDS:-200}
. "$top_srcdir/t/tmux.sh"
tmp_abs=$(cd "$tmp" && pwd)
echo 'require("testdata").idx(arg[1], 480, 10, 12, 12, 4242)' >"$tmp/gen.lua"
timeout 60 "$SINGA_TUI" -e "$tmp/gen.lua" "$tmp/data" >"$tmp/gen.out" 2>&1
report $? "synthetic data written" "$tmp/gen.out"

# The pid of rank $1, a child of the launcher in the pane.
rank_pid() {
    for p in $(pgrep -P "$(tui_pid)"); do
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "SINGA_RANK=$1" && echo "$p"
    done
}
start_tui TMPDIR="$tmp_abs" -- --procs 3 --elastic 2 --run "$top_srcdir/t/elastic-job.lua" three "$tmp_abs/out.txt" \
    100000000 "$tmp_abs/ck" fresh 200
wait_for 'elastic: 3 processes (min 2)' 120 && grep -q 'no restart yet (at most 3)' "$tmp/screen.txt" && grep -q 'process 2 on ' "$tmp/screen.txt" &&
    wait_for 'ckpt   step [1-9]' 30
report $? "the Topology panel says the job is elastic, on 3 processes; a checkpoint is written" "$tmp/screen.txt"
kill -9 "$(rank_pid 2)"
# The log's line comes last (once the processes have met and read the checkpoint); under ASan on
# a loaded machine the ranks take a while to end and start again.
wait_for 'elastic restart 1 of 3: rank 2 lost, resuming step [1-9][0-9]* on 2 processes' 90 &&
    grep -q 'restart 1 of 3: rank 2 lost' "$tmp/screen.txt" && grep -q 'elastic: 2 processes (min 2)' "$tmp/screen.txt" &&
    grep -q 'process 1 on ' "$tmp/screen.txt" && ! grep -q 'process 2 on ' "$tmp/screen.txt"
report $? "rank 2 killed: the workbench starts again on 2 processes, naming the restart and the rank lost" "$tmp/screen.txt"
wait_for 'training  step' 20
keys q y
restored 0
report $? "q y quits the restarted job, exit 0" "$tmp/screen.txt"
tui_done

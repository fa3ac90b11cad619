# A script that works without a job of its own in the workbench: the panels say that no job
# has started (not "loading", not "step 0/0"), and demos/frameworks.lua, whose jobs train in
# child processes, prints each run's tests live into the log.  Run by `make check` with
# SINGA_TUI and top_srcdir set; prints TAP.
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
tmp=t/6160-tui-no-job.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/tmux.sh"

cat >"$tmp/nojob.lua" <<'LUA'
print("working without a job")
while true do os.execute("sleep 0.2") end
LUA
start_tui -- nojob.lua
wait_for 'working without a job' 20
report $? "the script runs" "$tmp/screen.txt"
sleep 0.5
screen >"$tmp/screen.txt"
grep -q 'running the script: no job yet' "$tmp/screen.txt" && ! grep -q 'loading\|step 0/0' "$tmp/screen.txt" &&
    grep -q 'the script has not started a job' "$tmp/screen.txt" && grep -q 'step   - (no job yet)' "$tmp/screen.txt"
report $? "the title, progress and plot say that no job has started" "$tmp/screen.txt"
keys q
restored 0
report $? "q quits" "$tmp/screen.txt"

fm=${FMNIST_DIR:-/usr/share/datasets/fashion-mnist/}
if [ -f "$fm/train-images-idx3-ubyte.gz" ]; then
    start_tui SINGA_TUI="$SINGA_TUI" -- "$top_srcdir/demos/frameworks.lua" 20 0.99 10
    wait_for 'Sandblaster: step 10/20, test accuracy' 120
    report $? "demos/frameworks.lua prints each run's tests live" "$tmp/screen.txt"
    grep -q '1 worker: [0-9]* images/s' "$tmp/screen.txt" || grep -q '^│ 1 worker  ' "$tmp/screen.txt"
    report $? "... and each run's images/s" "$tmp/screen.txt"
    wait_for 'Downpour: step 10/20, test accuracy' 120
    report $? "... also an asynchronous run's, whose records name the group" "$tmp/screen.txt"
    keys q
    restored 0
    report $? "q quits" "$tmp/screen.txt"
else
    for t in "frameworks.lua prints each run's tests live" "... and each run's images/s" "... also an asynchronous run's, whose records name the group" "q quits"; do
        skip "$t" "no Fashion-MNIST in $fm"
    done
fi
tui_done

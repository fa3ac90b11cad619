# A fresh run in the workbench never replaces an earlier run's checkpoints without asking:
# r (or --run) on a job whose checkpoint_path holds them opens a dialog; n leaves them and the
# job waiting, y trains and its first checkpoint replaces them.  Run by `make check` with
# SINGA_TUI and top_srcdir set; prints TAP.
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
tmp=t/6140-tui-ckpt-replace.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/tmux.sh"

cp "$top_srcdir/t/tui-tiny.lua" "$tmp/tiny.lua" || exit 1

# The earlier run: 120 steps, headless.
(cd "$tmp" && "$SINGA_TUI" -e tiny.lua 120 ckpt >run1.out 2>&1)
old="$tmp/ckpt/step000000120.ckpt"
[ -f "$old" ]
report $? "an earlier run leaves its checkpoint" "$tmp/run1.out"

start_tui -- tiny.lua "" ckpt
wait_for 'ready: r starts training' 30
report $? "the job waits for r" "$tmp/screen.txt"
keys r
wait_for "Replace an earlier run's checkpoints" 10 && grep -q 'ckpt holds 1 checkpoint of an earlier run' "$tmp/screen.txt" &&
    grep -q '(newest: step' "$tmp/screen.txt" && grep -q '120)' "$tmp/screen.txt"
report $? "r asks before a fresh run replaces the earlier run's checkpoint, naming the folder and step" "$tmp/screen.txt"
keys n
sleep 1
screen >"$tmp/screen.txt"
grep -q 'ready: r starts training' "$tmp/screen.txt" && ! grep -q "Replace an earlier" "$tmp/screen.txt" && [ -f "$old" ]
report $? "n: the job does not train and the checkpoint stays" "$tmp/screen.txt"
keys r
wait_for "Replace an earlier run's checkpoints" 10
keys y
wait_for 'step   [1-9][0-9]*/100000000' 30
report $? "y: the job trains" "$tmp/screen.txt"
keys q
wait_for 'Quit while training' 10
keys c
restored 0
report $? "q, c: a checkpoint, then the workbench quits" "$tmp/screen.txt"
nckpt=$(ls "$tmp"/ckpt/step*.ckpt 2>/dev/null | wc -l)
[ ! -f "$old" ] && [ "$nckpt" -ge 1 ]
report $? "... and, as agreed, the new checkpoint replaced the earlier run's ($nckpt files)"

# --run asks too, and q in the dialog quits leaving the checkpoints alone.
ls "$tmp"/ckpt/step*.ckpt >"$tmp/before.txt"
start_tui -- --run tiny.lua "" ckpt
wait_for "Replace an earlier run's checkpoints" 30
report $? "--run asks before replacing them too" "$tmp/screen.txt"
sleep 1
screen | grep -q 'step 0/100000000'
report $? "... and does not train meanwhile" "$tmp/screen.txt"
keys q
restored 0
report $? "q in the dialog quits" "$tmp/screen.txt"
ls "$tmp"/ckpt/step*.ckpt | cmp -s - "$tmp/before.txt"
report $? "... leaving the checkpoints as they were" "$tmp/before.txt"
tui_done

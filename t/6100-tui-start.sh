# The workbench (singa-tui without -e) under tmux: the start screen lists the demos and opens
# one, the Fashion-MNIST demo trains with step numbers and a falling loss, q asks while
# training and exits 0 with the terminal restored, and without a terminal a clear message
# suggests -e.  Run by `make check` with SINGA_TUI and top_srcdir set; prints TAP.
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
tmp=t/6100-tui-start.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/tmux.sh"

# Without a terminal
timeout 20 "$SINGA_TUI" "$top_srcdir/demos/fmnist_mlp.lua" </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -ne 0 ] && grep -q 'needs a terminal' "$tmp/err" && grep -q 'singa-tui -e .*fmnist_mlp.lua' "$tmp/err"
report $? "without a terminal: exit $rc and a message that suggests -e" "$tmp/err"
timeout 20 "$SINGA_TUI" >"$tmp/out" 2>"$tmp/err" </dev/null
[ $? -ne 0 ] && grep -q 'singa-tui -e FILE' "$tmp/err"
report $? "the start screen without a terminal: the same message" "$tmp/err"

# The start screen (a build outside the source tree has no demos/ beside the program)
[ -d "$(dirname "$SINGA_TUI")/demos" ] || export SINGA_DEMO_PATH="$top_srcdir/demos"
start_tui --
wait_for 'fmnist_mlp.lua' 20
report $? "the start screen lists the demos" "$tmp/screen.txt"
grep -q 'lenet.lua' "$tmp/screen.txt" && grep -q 'Small MLP on Fashion-MNIST\|small MLP on Fashion-MNIST' "$tmp/screen.txt"
report $? "... each with its first comment line" "$tmp/screen.txt"
for i in 1 2 3 4 5 6 7 8 9 10; do
    screen | grep -q '> fmnist_mlp.lua' && break
    keys Down
    sleep 0.2
done
keys Enter
wait_for 'ready: r starts training' 60
report $? "Enter opens the demo: the job is built and waits for r" "$tmp/screen.txt"
grep -q 'data  *kIDXData  *64x28x28  *0' "$tmp/screen.txt" && grep -q 'updater kSGD' "$tmp/screen.txt" &&
    grep -q 'worker 0, group 0: waiting' "$tmp/screen.txt"
report $? "... showing its net, updater and topology" "$tmp/screen.txt"

keys r
wait_for 'step   [1-9][0-9][0-9]*/12000' 60
report $? "r starts training: the step advances" "$tmp/screen.txt"
s1=$(step_now) l1=$(loss_now)
# a few hundred steps later (about a second; several under sanitizers)
i=0
while [ $i -lt 150 ]; do
    s2=$(step_now)
    [ "${s2:-0}" -ge $((s1 + 400)) ] && break
    sleep 0.2
    i=$((i + 1))
done
l2=$(loss_now)
screen >"$tmp/screen.txt"
[ "${s2:-0}" -gt "$s1" ]
report $? "the step number changes ($s1 -> $s2)" "$tmp/screen.txt"
awk -v a="$l1" -v b="$l2" 'BEGIN { exit !(a > 0 && b > 0 && b < a) }'
report $? "the loss falls ($l1 -> $l2)" "$tmp/screen.txt"
grep -q '⣀\|⠤\|⠒\|⠉' "$tmp/screen.txt" && grep -q 'loss' "$tmp/screen.txt" && grep -q 'train' "$tmp/screen.txt"
report $? "the loss plot draws braille lines with a legend" "$tmp/screen.txt"

keys q
wait_for 'Quit while training' 10
report $? "q while training asks first" "$tmp/screen.txt"
grep -q 'write a checkpoint, then quit' "$tmp/screen.txt"
report $? "... and offers a checkpoint" "$tmp/screen.txt"
keys y
restored 0
report $? "y quits: exit 0, the terminal restored (main screen, cursor, canonical mode, echo)" "$tmp/screen.txt"

# The demo is now a recent script.
start_tui --
wait_for 'Recently opened' 20 && grep -q "$(cd "$top_srcdir" && pwd)/demos/fmnist_mlp.lua" "$tmp/screen.txt"
report $? "the start screen lists it as recently opened" "$tmp/screen.txt"
keys q
restored 0
report $? "q on the start screen exits 0 with the terminal restored" "$tmp/screen.txt"

tui_done

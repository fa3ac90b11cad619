# The workbench's keys and console under tmux, on a tiny endless job: ? help, p pause and
# resume, c checkpoint, the Lua console (1+1, steering, errors in place, multi-line input), w
# export, l log scale, resizing to 80x24, output of the job in the log only, script errors,
# NO_COLOR, the ASCII fallback, and the terminal restored after q and after SIGTERM/SIGSEGV.
# Run by `make check` with SINGA_TUI and top_srcdir set; prints TAP.
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
tmp=t/6110-tui-keys.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/tmux.sh"

# 8x8 generated images (t/testdata.lua), a small MLP, as many steps as it likes.
cat >"$tmp/tiny.lua" <<'LUA'
-- A tiny endless job for the workbench's tests.
local singa = require "singa"
local td = require "testdata"
local img, lab = td.idx("data", 256, 4)
print("hello from the job")
io.stderr:write("a line on stderr\n")
singa.train{
  name = "tiny", seed = 1, train_steps = tonumber(arg[1]) or 100000000, disp_freq = 100000,
  test_freq = 1000000, test_steps = 2, checkpoint_path = "ckpt",
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = { layer = {
    { name = "data", type = "kIDXData", batchsize = 16, images = img, labels = lab },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 16 },
    { name = "relu", type = "kReLU", srclayer = "fc1" },
    { name = "fc2", type = "kInnerProduct", srclayer = "relu", num_output = 4 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc2", "label" } },
  } },
}
print("after training")
LUA

start_tui -- --run tiny.lua
wait_for 'a line on stderr' 30 && grep -q 'hello from the job' "$tmp/screen.txt"
report $? "what the script prints (stdout and stderr) shows in the log" "$tmp/screen.txt"
wait_for 'step   [1-9][0-9]*/100000000' 30
report $? "--run trains at once" "$tmp/screen.txt"

keys '?'
wait_for 'Keys (any key closes)' 10 && grep -q 'pause / resume training' "$tmp/screen.txt"
report $? "? opens the help with the keys" "$tmp/screen.txt"
keys x
sleep 0.3
! screen | grep -q 'Keys (any key closes)'
report $? "any key closes it"

keys p
wait_for 'state  paused' 10
report $? "p pauses" "$tmp/screen.txt"
wait_for 'paused before step' 5 # the log line may come a moment after the state
report $? "... and the log says where" "$tmp/screen.txt"
s1=$(step_now)
sleep 1
s2=$(step_now)
[ -n "$s1" ] && [ "$s1" = "$s2" ]
report $? "while paused the step stays ($s1, then $s2)"
keys c
i=0
while [ $i -lt 50 ] && ! ls "$tmp"/ckpt/step*.ckpt >/dev/null 2>&1; do sleep 0.2; i=$((i + 1)); done
[ -f "$tmp/ckpt/$(printf 'step%09d.ckpt' "$s1")" ]
report $? "c writes a checkpoint file (also while paused): step$s1" "$tmp/screen.txt"
wait_for "ckpt   step $s1" 10
report $? "the progress panel shows it" "$tmp/screen.txt"
keys p
sleep 1
s3=$(step_now)
[ "${s3:-0}" -gt "$s2" ] && screen | grep -q 'state  training'
report $? "p again resumes (step $s2 -> $s3)"

keys :
keys '1+1' Enter
wait_for '^│.*│ 2  *│$\|│ 2 ' 10
report $? "the console evaluates 1+1" "$tmp/screen.txt"
keys 'singa.lr_scale(0.5)' Enter
wait_for '0.5' 10 && wait_for 'lr 0.025' 10
report $? "singa.lr_scale(0.5) halves the learning rate" "$tmp/screen.txt"
keys 'nil + 1' Enter
wait_for 'attempt to perform arithmetic' 10
report $? "an error shows in place" "$tmp/screen.txt"
keys 'singa.train{}' Enter
wait_for 'singa.train cannot run from' 10
report $? "singa.train is refused in the console (it would block the workbench)" "$tmp/screen.txt"
keys 'for i = 1, 3 do' Enter 'print("line " .. i) end' Enter
wait_for 'line 3' 10 && grep -q '  >> ' "$tmp/screen.txt"
report $? "multi-line input continues with >> and print writes to the console" "$tmp/screen.txt"
keys 'singa.pause()' Enter
wait_for 'state  paused' 10
report $? "singa.pause() pauses" "$tmp/screen.txt"
keys 'singa.resume()' Enter
wait_for 'state  training' 10
report $? "singa.resume() resumes" "$tmp/screen.txt"
keys Up Up Enter
wait_for 'state  paused' 10
report $? "Up recalls the history (singa.pause() again)" "$tmp/screen.txt"
keys 'singa.resume()' Enter Escape

keys w
i=0
while [ $i -lt 25 ] && [ ! -s "$tmp/tiny-plot.txt" ]; do sleep 0.2; i=$((i + 1)); done
head -n 1 "$tmp/tiny-metrics.csv" | grep -q '^step,phase,group,loss,accuracy,steps$' &&
    grep -q '^[0-9]*,train,0,[0-9.e+-]*,' "$tmp/tiny-metrics.csv" && grep -q 'loss' "$tmp/tiny-plot.txt" &&
    ! LC_ALL=C grep -q '[^ -~]' "$tmp/tiny-plot.txt"
report $? "w writes the metrics as CSV and the plot as plain text" "$tmp/tiny-metrics.csv"
keys l
wait_for 'loss (log)' 5
report $? "l puts the loss on a log scale" "$tmp/screen.txt"
keys +
wait_for 'zoom 2x' 5
report $? "+ zooms the plot" "$tmp/screen.txt"
keys -

T resize-window -x 80 -y 24
sleep 0.6
screen >"$tmp/small.txt"
ok=0
for title in '1 Loss / accuracy' '2 Message traffic' '3 Topology' '4 Progress' '5 Log' '6 Lua console'; do
    grep -q "$title" "$tmp/small.txt" || ok=1
done
report $ok "at 80x24 every panel shows its title" "$tmp/small.txt"
grep -q 'step   [0-9]*/' "$tmp/small.txt" && grep -q 'loss   [0-9]' "$tmp/small.txt" &&
    grep -q 'no messages: the job has no cluster' "$tmp/small.txt" && grep -q 'server 0, group 0: running' "$tmp/small.txt" &&
    grep -q 'worker 0, group 0: running' "$tmp/small.txt" &&
    grep -q 'lua> ' "$tmp/small.txt" && grep -q '┤' "$tmp/small.txt" && grep -q 'q quit' "$tmp/small.txt"
report $? "... and its content: step, loss, plot axis, traffic, topology, console, keys" "$tmp/small.txt"
[ "$(wc -L <"$tmp/small.txt")" -le 80 ]
report $? "nothing is drawn beyond 80 columns" "$tmp/small.txt"
T resize-window -x 120 -y 40

keys q
wait_for 'Quit while training' 10
keys n
sleep 0.3
! screen | grep -q 'Quit while training' && screen | grep -q 'state  training'
report $? "n keeps training"
keys q
wait_for 'Quit while training' 10
keys c
restored 0
report $? "c in the quit dialog: exit 0, terminal restored" "$tmp/screen.txt"
n_ckpt=$(ls "$tmp"/ckpt/step*.ckpt | wc -l)
[ "$n_ckpt" -ge 2 ]
report $? "... after writing a checkpoint ($n_ckpt in ckpt/)"
! grep -q 'hello from the job\|after training' "$tmp/screen.txt"
report $? "nothing the job printed reached the terminal" "$tmp/screen.txt"

# From here on each --run starts with an empty ckpt/: one that holds an earlier run's
# checkpoints asks before training (t/6140).
start_fresh() { rm -rf "$tmp/ckpt"; start_tui "$@"; }

# A job that ends: the workbench stays, q quits at once.
start_fresh -- --run tiny.lua 300
wait_for 'finished' 60 && grep -q 'after training' "$tmp/screen.txt"
rc=$?
if [ $rc -ne 0 ]; then # it once drew nothing for 30 s under load: keep what was going on
    {
        echo "pane $(T display -p '#{pane_width}x#{pane_height} pid #{pane_pid} dead #{pane_dead}')"
        ps -o pid,stat,etime,time,args --ppid "$(T display -p '#{pane_pid}')" 2>&1
        uptime
    } >>"$tmp/screen.txt"
fi
report $rc "a job that ends shows finished; the script goes on after singa.train" "$tmp/screen.txt"
keys q
restored 0
report $? "q after the script ended exits 0 at once" "$tmp/screen.txt"

# Script errors: in the log, not a crash; the console still works; exit status 1.
printf 'print("before")\nlocal x = nil\nlocal y = x.field\n' >"$tmp/bad.lua"
start_tui -- bad.lua
wait_for 'bad.lua:3:' 20 && grep -q 'failed' "$tmp/screen.txt"
report $? "a script error shows in the log with file:line" "$tmp/screen.txt"
keys : '2*21' Enter
wait_for '│ 42 ' 10
report $? "the console still works after it" "$tmp/screen.txt"
keys Escape q
restored 1
report $? "q exits 1 (the script failed), the terminal restored" "$tmp/screen.txt"
grep -q 'singa-tui: .*bad.lua:3:' "$tmp/screen.txt"
report $? "... and the error is printed after the terminal is back" "$tmp/screen.txt"

# os.exit in the script ends the program, and the terminal is restored all the same.
printf 'print("bye")\nos.exit(3)\n' >"$tmp/exit3.lua"
start_tui -- exit3.lua
restored 3
report $? "a script's os.exit(3): exit 3, the terminal restored" "$tmp/screen.txt"

# Signals restore the terminal.
for sig in TERM SEGV; do
    start_fresh -- --run tiny.lua
    wait_for 'state  training' 30
    kill -s "$sig" "$(tui_pid)"
    num=15
    [ "$sig" = SEGV ] && num=11
    code=$((128 + num))
    restored "$code"
    report $? "SIG$sig: the terminal is restored, exit $code" "$tmp/screen.txt"
    grep -q "singa-tui: signal $num; the terminal is restored" "$tmp/screen.txt"
    report $? "... saying so" "$tmp/screen.txt"
done
rm -f "$tmp"/asan* # the sanitizer's report of the deliberate SIGSEGV

# NO_COLOR and the ASCII fallback
start_fresh -- --run tiny.lua
wait_for 'state  training' 30 && sleep 0.5
screen >"$tmp/screen-unicode.txt"
T capture-pane -p -e >"$tmp/color.txt"
grep -q "$(printf '\033')\[3[1-6]m\|$(printf '\033')\[3[1-6];" "$tmp/color.txt"
report $? "colours by default" "$tmp/color.txt"
keys q y
start_fresh NO_COLOR=1 -- --run tiny.lua
wait_for 'state  training' 30
T capture-pane -p -e >"$tmp/nocolor.txt"
! grep -q "$(printf '\033')\[3[0-7]m\|$(printf '\033')\[4[0-7]m\|38;5\|$(printf '\033')\[3[0-7];" "$tmp/nocolor.txt"
report $? "NO_COLOR: no colours" "$tmp/nocolor.txt"
keys q y
start_fresh LC_ALL=C -- --run tiny.lua
wait_for 'state  training' 30 && sleep 0.5 && screen >"$tmp/ascii.txt"
braille="$(printf '\342\240')\|$(printf '\342\241')\|$(printf '\342\242')\|$(printf '\342\243')"
! LC_ALL=C grep -q "$braille" "$tmp/ascii.txt" && LC_ALL=C grep -q "$braille" "$tmp/screen-unicode.txt" && grep -q "[-.'|]" "$tmp/ascii.txt" && grep -q 'step   [0-9]' "$tmp/ascii.txt"
report $? "without a UTF-8 locale the plot is ASCII" "$tmp/ascii.txt"
keys q y
restored 0
report $? "... and it quits cleanly" "$tmp/screen.txt"

tui_done

# The workbench at 80x24, under tmux: each panel shows its content (the Lua console five lines
# of output and its prompt, the Progress panel's last test step and learning rate whole, the
# plot both loss and accuracy); a plugin skipped at start is reported in the Log panel; `?`
# says what `w` writes; `--open` shows what a metrics file holds (its images/s) and leaves the
# rest (learning rate, batch, updater) blank, reading a CSV's columns by name.  Run by
# `make check` with SINGA_TUI and top_srcdir set; prints TAP.
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
tmp=t/6180-tui-80x24.tmp
rm -rf "$tmp" && mkdir -p "$tmp/plugins" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/tmux.sh"

cat >"$tmp/job.lua" <<'LUA'
local singa = require "singa"
local td = require "testdata"
local img, lab = td.idx("data", 64, 4)
singa.train{
  name = "small", seed = 1, train_steps = tonumber(arg[1]), disp_freq = 500, test_freq = 1500, test_steps = 1,
  updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.00018 } },
  neuralnet = { layer = {
    { name = "data", type = "kIDXData", batchsize = 16, images = img, labels = lab },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "fc", type = "kInnerProduct", srclayer = "image", num_output = 4 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc", "label" } },
  } },
}
LUA
echo 'not a shared object' >"$tmp/plugins/broken.so"

start_tui -x 80 -y 24 "SINGA_PLUGIN_PATH='$PWD/$tmp/plugins'" -- job.lua 3000
wait_for 'ready: r starts' 30 && wait_for 'broken.so' 5 && grep -q 'skipped' "$tmp/screen.txt"
report $? "the plugin skipped at start is reported in the Log panel" "$tmp/screen.txt"
keys r
wait_for 'finished  step 3000/3000' 60
report $? "the job trains its 3000 steps at 80x24" "$tmp/screen.txt"
# The Progress panel (the right column) shows the last test's step and the rate whole.
grep -q ' @3000 *│$' "$tmp/screen.txt" && grep -q 'lr 1\.8e-04 *│$' "$tmp/screen.txt"
report $? "the Progress panel shows @3000 and lr 1.8e-04 whole" "$tmp/screen.txt"
grep -q '└─loss' "$tmp/screen.txt" && grep -q '└─accuracy' "$tmp/screen.txt"
report $? "the plot shows the loss and the accuracy" "$tmp/screen.txt"

keys :
keys -l 'for i = 1, 5 do print("line " .. i) end'
keys Enter
wait_for '│ line 5 ' 10 && [ "$(grep -c '│ line [1-5]  *│$' "$tmp/screen.txt")" -eq 5 ] &&
    awk '/│ line 5  *│$/ { l5 = NR } /│ lua> *│$/ { p = NR } END { exit !(l5 && p == l5 + 1) }' "$tmp/screen.txt"
report $? "the console shows five lines printed and its prompt under them" "$tmp/screen.txt"
keys Escape
keys '?'
wait_for 'Keys (any key closes)' 10 && grep -q 'the plot (text and SVG)' "$tmp/screen.txt"
report $? "? says w writes the plot as text and SVG" "$tmp/screen.txt"
keys x
keys q
restored 0
report $? "q quits" "$tmp/screen.txt"

# --open: a headless run's file.
(cd "$tmp" && timeout 60 "$SINGA_TUI" --metrics run.jsonl -e job.lua 3000 >run.out 2>&1)
report $? "a headless run writes run.jsonl" "$tmp/run.out"
start_tui -x 80 -y 24 -- --open run.jsonl
wait_for 'a finished run' 20
report $? "--open run.jsonl opens at 80x24" "$tmp/screen.txt"
grep -q 'speed  *[0-9][0-9.]*[kMG]*\( img\)*/s  *lr - *│$' "$tmp/screen.txt" && ! grep -q 'speed  *0 ' "$tmp/screen.txt"
report $? "the Progress panel shows the file's images/s and no learning rate" "$tmp/screen.txt"
grep -q 'job run: 3000 steps *│' "$tmp/screen.txt" && ! grep -q 'batch 0\|updater *│' "$tmp/screen.txt"
report $? "the Topology panel says no batch 0 and no empty updater" "$tmp/screen.txt"
keys q
restored 0
report $? "q leaves" "$tmp/screen.txt"

# A CSV's columns are found by name; its seconds become the time.
printf '%s\n' step,phase,group,loss,accuracy,seconds,images_per_sec 0,train,0,1.2,0.5,0.5, \
    100,train,0,0.9,0.6,65.2,1234 100,test,0,0.95,0.55,66.0,0 >"$tmp/run.csv"
start_tui -x 80 -y 24 -- --open run.csv
wait_for 'a finished run' 20 && grep -q 'speed  1234 img/s  lr - *│$' "$tmp/screen.txt" &&
    grep -q 'time   1:05  ETA - *│$' "$tmp/screen.txt"
report $? "--open run.csv: images/s and seconds read by their header's names" "$tmp/screen.txt"
keys q
restored 0
report $? "q leaves" "$tmp/screen.txt"
tui_done

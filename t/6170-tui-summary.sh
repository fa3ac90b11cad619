# The net's summary in the workbench's Topology panel (layers, output shapes, param counts,
# the total) and singa.params() in the console while the job trains.  Run by `make check` with
# SINGA_TUI and top_srcdir set; prints TAP.
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
tmp=t/6170-tui-summary.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/tmux.sh"

cat >"$tmp/tiny.lua" <<'LUA'
local singa = require "singa"
local td = require "testdata"
local img, lab = td.idx("data", 64, 4)
singa.train{
  name = "tiny", seed = 1, train_steps = 100000000, disp_freq = 100000,
  updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = { layer = {
    { name = "data", type = "kIDXData", batchsize = 16, images = img, labels = lab },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "fc", type = "kInnerProduct", srclayer = "image", num_output = 4 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc", "label" } },
  } },
}
LUA

start_tui -y 60 -- tiny.lua # tall enough for the whole summary
wait_for 'ready: r starts' 30
grep -q '│   layer  *type  *output  *params' "$tmp/screen.txt" && grep -q '│   fc  *kInnerProduct  *16x4  *260 ' "$tmp/screen.txt" &&
    grep -q '│   total params: 260 ' "$tmp/screen.txt"
report $? "the Topology panel shows the net's summary: layer, type, output shape, params, total" "$tmp/screen.txt"

keys r
wait_for 'step   [1-9][0-9]*/' 30
keys : 'local n, k = 0, 0 for name, t in pairs(singa.params()) do n = n + t:numel() k = k + 1 end print("params " .. k .. " values " .. n)' Enter
wait_for 'params 2 values 260' 10
report $? "singa.params() in the console gives the running job's params as tensors" "$tmp/screen.txt"
keys Escape q
wait_for 'Quit while training' 10
keys y
restored 0
report $? "q y quits" "$tmp/screen.txt"
tui_done

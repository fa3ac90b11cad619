# The traffic and progress panels of a distributed job under tmux: a reply's two legs (server
# to stub, stub to workers) show the same bytes/s, long type names fit when the panel is wide,
# the log labels each worker group's lines, and while paused speed and ETA say so.  Run by
# `make check` with SINGA_TUI and top_srcdir set; prints TAP.
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
tmp=t/6150-tui-traffic.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/tmux.sh"

cat >"$tmp/dist.lua" <<'LUA'
-- dist.lua STEPS CLUSTER
local singa = require "singa"
local td = require "testdata"
local img, lab = td.idx("data", 256, 4)
local clusters = { sandblaster = singa.cluster.sandblaster{ workers = 2 }, downpour = singa.cluster.downpour{ groups = 2 } }
singa.train{
  name = "traffic", seed = 1, train_steps = tonumber(arg[1]), disp_freq = 20, checkpoint_path = "ckpt-" .. arg[2],
  cluster = clusters[arg[2]],
  updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = { layer = {
    { name = "data", type = "kIDXData", batchsize = 16, images = img, labels = lab },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 64 },
    { name = "relu", type = "kReLU", srclayer = "fc1" },
    { name = "fc2", type = "kInnerProduct", srclayer = "relu", num_output = 4 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc2", "label" } },
  } },
}
LUA

# Headless, two worker groups: every display line names its group.
(cd "$tmp" && timeout 120 "$SINGA_TUI" -e dist.lua 60 downpour >downpour.out 2>&1)
grep -q '^step 20 *train g0 *loss' "$tmp/downpour.out" && grep -q '^step 20 *train g1 *loss' "$tmp/downpour.out"
report $? "with two worker groups each display line says its group (train g0, train g1)" "$tmp/downpour.out"

start_tui -x 140 -y 100 -- --run dist.lua 100000000 sandblaster # tall: every traffic row shows
wait_for 'update-reply *worker 0\.1 ' 30
report $? "a Sandblaster job trains with a row per reply leg" "$tmp/screen.txt"
sleep 2.5
screen >"$tmp/traffic.txt"
# bytes/s of the update-reply rows: the server's, and the sum of the workers' (each worker is
# told of the values its group shares, so the workers' sum is twice the server's).
awk '
    function num(s) { m = 1; if (s ~ /k$/) m = 1e3; if (s ~ /M$/) m = 1e6; if (s ~ /G$/) m = 1e9; sub(/[kMG]$/, "", s); return s * m }
    /│ update-reply +server 0\.0 / { split($0, f, / +/); srv = num(f[6]) }
    /│ update-reply +worker 0\.[01] / { split($0, f, / +/); wrk += num(f[6]) }
    END { print srv, wrk; exit !(srv > 0 && wrk > 1.5 * srv && wrk < 2.5 * srv) }' "$tmp/traffic.txt" >"$tmp/rates.txt"
report $? "the server's and the workers' reply rows agree on bytes/s ($(cat "$tmp/rates.txt"))" "$tmp/traffic.txt"

keys c
wait_for '│ checkpoint-reply  *server 0\.0 ' 10
report $? "at 140 columns a long type name shows whole (checkpoint-reply)" "$tmp/screen.txt"

keys p
wait_for 'state  paused' 10 && sleep 0.5 && screen >"$tmp/screen.txt"
grep -q 'speed  paused' "$tmp/screen.txt" && grep -q 'ETA paused' "$tmp/screen.txt"
report $? "paused, speed and ETA say so instead of their last values" "$tmp/screen.txt"
keys p
wait_for 'img/s' 10 && ! grep -q 'ETA paused' "$tmp/screen.txt"
report $? "resumed, they come back" "$tmp/screen.txt"

keys q
wait_for 'Quit while training' 10
keys y
restored 0
report $? "q y quits" "$tmp/screen.txt"
tui_done

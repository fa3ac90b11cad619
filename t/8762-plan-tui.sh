# cluster.plan = "auto" in the workbench: a job planned over 2 processes (singa-tui --procs 2)
# shows in the Workers panel (7) its longest measured step against the predicted one.  Run by
# `make check` with SINGA_TUI and top_srcdir set; prints TAP.
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
tmp=t/8762-plan-tui.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
TUI_TEST_SECONDS=${TUI_TEST_SECONDS:-60}
. "$top_srcdir/t/tmux.sh"

cat >"$tmp/auto.lua" <<'LUA'
-- auto.lua STEPS: the test MLP, its cluster planned.
local singa = require "singa"
local td = require "testdata"
singa.train{ name = "auto", seed = 1, train_steps = tonumber(arg[1]), disp_freq = 20, cluster = { plan = "auto" },
  updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = td.mlp("data/images-idx3-ubyte", "data/labels-idx1-ubyte", 16) }
LUA
(cd "$tmp" && "$SINGA_TUI" -e /dev/stdin >/dev/null 2>&1 <<'LUA'
require("testdata").idx("data", 96, 10, 8, 8, 8762)
LUA
)

start_tui -- --procs 2 --run auto.lua 100000000
wait_for '7 Workers ([0-9.e-]* ms, plan [0-9.e-]* ms)' 30
report $? "the Workers panel shows the longest measured step against the predicted one" "$tmp/screen.txt"
keys q y
wait_for 'EXIT=0' 20
report $? "quitting ends both processes" "$tmp/screen.txt"
done_testing

# Stragglers across processes: worker 0.1 of an AllReduce group in 2 processes (singa-tui
# --procs 2) sleeps in every forward pass (t/plugins/slow.c).  Headless, rank 0's singa.stats()
# flags it, its times having come with rank 1's heartbeats; in the workbench the Workers panel
# (7) shows it flagged with the share of the step it costs, and the fast worker unflagged.  Run by `make check` with SINGA_TUI and top_srcdir set; prints TAP.
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
tmp=t/6310-tui-workers.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
TUI_TEST_SECONDS=${TUI_TEST_SECONDS:-90}
. "$top_srcdir/t/tmux.sh"
slow_so="$PWD/t/plugins/.libs/slow.so"

cat >"$tmp/slow.lua" <<'LUA'
-- slow.lua STEPS: worker 0.1 (in rank 1) sleeps 20 ms a step; rank 0 prints its workers' times.
local singa = require "singa"
local td = require "testdata"
singa.load_plugin(os.getenv("SLOW_SO"))
local net = td.mlp("data/images-idx3-ubyte", "data/labels-idx1-ubyte", 16)
for _, l in ipairs(net.layer) do if l.name == "fc2" then l.srclayer = "slow" end end
table.insert(net.layer, { name = "slow", type = "kSlow", srclayer = "act", sleep_ms = 20, worker = 1 })
local r = singa.train{ name = "slow", seed = 1, train_steps = tonumber(arg[1]), disp_freq = 20,
  cluster = singa.cluster.allreduce{ workers = 2, procs = 2, heartbeat_timeout = 1 },
  updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.05 } }, neuralnet = net }
for _, w in ipairs(singa.stats().workers) do
  print(string.format("worker %d.%d rank %d host %s straggler %s share %.2f window %d", w.group, w.id, w.rank,
                      w.host, tostring(w.straggler), w.share, w.window))
end
LUA
(cd "$tmp" && "$SINGA_TUI" -e /dev/stdin >/dev/null 2>&1 <<'LUA'
require("testdata").idx("data", 96, 10, 8, 8, 6310)
LUA
)

(cd "$tmp" && SLOW_SO="$slow_so" timeout 60 "$SINGA_TUI" --procs 2 --metrics run.jsonl -e slow.lua 60 >headless.out 2>&1)
grep -q '^worker 0\.1 rank 1 host [^ ]* straggler true share 0\.[0-9]* window 20$' "$tmp/headless.out" &&
    grep -q '^worker 0\.0 rank 0 host [^ ]* straggler false share 0\.00' "$tmp/headless.out"
report $? "--procs 2: rank 0's singa.stats() flags worker 0.1 of rank 1 (its times came with heartbeats)" \
    "$tmp/headless.out"

python3 -c '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
last = [r for r in recs if "workers" in r][-1]["workers"]
slow = [w for w in last if w["straggler"]]
sys.exit(not (len(recs) >= 6 and len(last) == 2 and len(slow) == 1 and (slow[0]["rank"], slow[0]["id"]) == (1, 1)))
' "$tmp/run.jsonl"
report $? "the metrics file has the workers' times beside each display, 0.1 flagged" "$tmp/run.jsonl"

start_tui SLOW_SO="$slow_so" -- --procs 2 --run slow.lua 100000000
wait_for '7 Workers (1 slow)' 30 &&
    grep -q '│ 0\.1  *1  *[0-9.]*  *[0-9.]*  *slow [ 0-9]*%' "$tmp/screen.txt" &&
    grep '│ 0\.0  *0 ' "$tmp/screen.txt" | grep -vq 'slow'
report $? "the Workers panel flags worker 0.1 in rank 1 with its share, not worker 0.0" "$tmp/screen.txt"
keys w
i=0
while [ $i -lt 25 ] && [ ! -s "$tmp/slow-plot.svg" ]; do sleep 0.2; i=$((i + 1)); done
python3 -c '
import sys, xml.etree.ElementTree as E
paths = list(E.parse(sys.argv[1]).getroot().iter("{http://www.w3.org/2000/svg}path"))
sys.exit(len(paths) != 2)
' "$tmp/slow-plot.svg"
report $? "w writes slow-plot.svg: valid XML, a path for the loss and one for the accuracy" "$tmp/slow-plot.svg"

keys q y
wait_for 'EXIT=0' 20
report $? "quitting ends both processes" "$tmp/screen.txt"
done_testing

# --trace FILE: a Chrome trace-event JSON of a job.  In 2 processes (singa-tui --procs 2) the file
# parses, with a track named per thread of each process (stub, server, worker) and spans on every
# worker thread of every process (each layer's forward and backward, sends, the wait for values)
# and the servers' updates; by default the last 50 steps only, with --trace-steps A:B those; a
# cut net's other location has its track; a plain job's checkpoints are spans too; the job field trace does the same from Lua; a path that
# cannot be written is refused before training.  Run by `make check`; prints TAP.
: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/6330-trace.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "${top_srcdir:-.}/t/tap.sh"

cat >"$tmp/job.lua" <<'LUA'
-- job.lua PROCS STEPS [TRACE]: an AllReduce group of 2 in PROCS processes, or a plain job (PROCS 0)
-- with checkpoints; TRACE: the job field trace.
local singa = require "singa"
local td = require "testdata"
local procs = tonumber(arg[1])
print("the script runs")
singa.train{ name = "tr", seed = 1, train_steps = tonumber(arg[2]), disp_freq = 0, trace = arg[3],
  checkpoint_path = procs == 0 and "ckpt" or nil, checkpoint_freq = procs == 0 and 30 or nil,
  cluster = procs > 0 and singa.cluster.allreduce{ workers = 2, procs = procs } or nil,
  updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = td.mlp("data/images-idx3-ubyte", "data/labels-idx1-ubyte", 16) }
LUA
(cd "$tmp" && "$SINGA_TUI" -e /dev/stdin >/dev/null 2>&1 <<'LUA'
require("testdata").idx("data", 96, 10, 8, 8, 6330)
LUA
)

# check.py FILE FIRST LAST [plain|short]: the trace's steps lie in FIRST..LAST; prints what it found.
# A worker whose values are in when it asks records no wait: in a window of a few steps (short)
# one worker may never wait, so there the waits of the group are asked for, not each worker's.
cat >"$tmp/check.py" <<'PY'
import collections, json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
cats = collections.defaultdict(set)
for e in ev:
    if e["ph"] == "X":
        cats[(e["pid"], e["tid"])].add(e["cat"])
steps = sorted({e["args"]["step"] for e in ev if e["ph"] == "X"})
print("tracks", sorted(names.values()), "pids", sorted({p for p, _ in names}), "steps", steps[0], steps[-1])
for k, n in sorted(names.items()):
    print(k, n, sorted(cats[k]))
workers = [k for k, n in names.items() if n.startswith("worker")]
mode = sys.argv[4] if len(sys.argv) > 4 else ""
want = {"forward", "backward"} | (set() if mode == "plain" else {"send"} if mode == "short" else {"send", "wait"})
ok = workers and all(want <= cats[k] for k in workers)
ok = ok and (mode != "short" or any("wait" in cats[k] for k in workers))
ok = ok and all("update" in cats[k] for k, n in names.items() if n.startswith("server"))
ok = ok and int(sys.argv[2]) <= steps[0] and steps[-1] <= int(sys.argv[3])
ok = ok and all(e["dur"] >= 0 and e["ts"] > 0 for e in ev if e["ph"] == "X")
sys.exit(not ok)
PY

(cd "$tmp" && timeout 60 "$SINGA_TUI" --procs 2 --trace two.json -e job.lua 2 80 >two.out 2>&1) &&
    python3 "$tmp/check.py" "$tmp/two.json" 31 80 >"$tmp/two.check" &&
    grep -q "pids \[0, 1\]" "$tmp/two.check" && [ "$(grep -c "^([01], [0-9]*) worker 0\.[01] " "$tmp/two.check")" -eq 2 ] &&
    [ "$(grep -c "^([01], [0-9]*) stub " "$tmp/two.check")" -eq 2 ] && ! ls "$tmp" | grep -q 'rank1\|tmp[0-9]'
report $? "--procs 2: one JSON file, a track per thread of both processes, spans on every worker thread, the last 50 steps" \
    "$tmp/two.check" "$tmp/two.out"

(cd "$tmp" && timeout 60 "$SINGA_TUI" --procs 2 --trace steps.json --trace-steps 5:9 -e job.lua 2 40 >steps.out 2>&1) &&
    python3 "$tmp/check.py" "$tmp/steps.json" 5 9 short >"$tmp/steps.check" && grep -q "steps 5 9$" "$tmp/steps.check"
report $? "--trace-steps 5:9: steps 5 to 9 only" "$tmp/steps.check" "$tmp/steps.out"

(cd "$tmp" && timeout 60 "$SINGA_TUI" -e job.lua 0 70 field.json >field.out 2>&1) &&
    python3 "$tmp/check.py" "$tmp/field.json" 20 70 plain >"$tmp/field.check" &&
    grep -q '"cat": "checkpoint", "name": "checkpoint", .*"step": 60}' "$tmp/field.json"
report $? "a plain job with the field trace: its thread's spans and its checkpoints" "$tmp/field.check" "$tmp/field.out"

cat >"$tmp/cut.lua" <<'LUA'
-- cut.lua: the MLP cut on its features between a Sandblaster group's 2 workers in this process.
local singa = require "singa"
local net = require("testdata").mlp("data/images-idx3-ubyte", "data/labels-idx1-ubyte", 16)
net.partition_dim = 1
singa.train{ name = "cut", seed = 1, train_steps = 20, disp_freq = 0, cluster = singa.cluster.sandblaster{ workers = 2 },
  updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.05 } }, neuralnet = net }
LUA
(cd "$tmp" && timeout 60 "$SINGA_TUI" --trace cut.json --trace-steps 10:12 -e cut.lua >cut.out 2>&1) &&
    python3 "$tmp/check.py" "$tmp/cut.json" 10 12 plain >"$tmp/cut.check" &&
    grep -q "^(0, [0-9]*) worker 0\.1 \['backward', 'forward'\]" "$tmp/cut.check" && grep -q "steps 10 12$" "$tmp/cut.check"
report $? "a net cut between 2 workers: the other location's thread has a track with its layers' spans" "$tmp/cut.check" \
    "$tmp/cut.out"

(cd "$tmp" && "$SINGA_TUI" --trace no/such/dir/t.json -e job.lua 0 10 >bad.out 2>&1)
[ $? -eq 2 ] && grep -q 'cannot write no/such/dir/t.json' "$tmp/bad.out" && ! grep -q 'the script runs' "$tmp/bad.out"
report $? "--trace to an unwritable path: refused before the script runs" "$tmp/bad.out"

(cd "$tmp" && "$SINGA_TUI" -e job.lua 0 10 no/such/t.json >badfield.out 2>&1)
[ $? -eq 1 ] && grep -q 'trace: cannot write no/such/t.json' "$tmp/badfield.out" && ! grep -q 'checkpoint written' "$tmp/badfield.out"
report $? "the field trace to an unwritable path: singa.train refuses the job" "$tmp/badfield.out"

(cd "$tmp" && "$SINGA_TUI" --trace x.json --trace-steps 9:5 -e job.lua 0 10 >range.out 2>&1)
[ $? -eq 2 ] && grep -q "trace_steps: '9:5' is not A:B" "$tmp/range.out"
report $? "--trace-steps 9:5 is refused" "$tmp/range.out"
done_testing

# Pipelined model parallelism (neuralnet.micro_batches): an MLP cut by location over the 2
# workers of a group (fc1 on worker 0, fc2 and the loss on worker 1), each step's batch run as 4
# micro-batches in a 1F1B schedule, gives the unpartitioned net's loss at each of 50 steps (to
# 1e-4 relative) and ends with its params, as do workers that feed each other, cuts on the
# features and hybrid, a chain of 4 workers over 2 processes and the first cut over 2 processes;
# micro_batches = 1 changes nothing; a resumed pipeline ends where it would have; the trace has
# each micro-batch's forward and backward on both workers, and the Workers panel a row per
# stage with its waits; bad values and nets are refused naming the field.  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/2860-pipeline.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

cat >"$tmp/job.lua" <<'LUA'
-- job.lua OUT WORKERS MICRO [PROCS [TRACE [HALF]]]: the MLP, cut by location when WORKERS is 2,
-- with neuralnet.micro_batches = MICRO ("-": unset); writes the params to OUT (rank 0).  TRACE
-- "-": none.  HALF "first": the first 25 steps, checkpointed; "resume": the rest, from there.
-- WORKERS 2loop: fc1 and fc2 on worker 1, the rest on 0 (the workers feed each other); 2feature:
-- the net cut on the features; 2hybrid: the same with fc1 cut on the batch (its params replicated); 2zero: every layer placed on worker 0; 2bn: a batch normalisation
-- (kBM) after fc1.  WORKERS 4chain: the data on worker 0, fc1 on 1, its tanh on 2, fc2 and the
-- loss on 3 (in PROCS 3: 2 processes of 2 workers, the servers in a third).
local singa = require "singa"
local td = require "testdata"
local out, workers, micro, procs, trace, half = arg[1], tonumber(arg[2]:match("%d+")), arg[3], tonumber(arg[4] or 1), arg[5], arg[6]
local scheme = arg[2]:match("%a+") or "location"
if trace == "-" then trace = nil end
local dir = out:match("^(.*)/")
local net = td.mlp(dir .. "/data/images-idx3-ubyte", dir .. "/data/labels-idx1-ubyte")
net.micro_batches = micro ~= "-" and (tonumber(micro) or micro) or nil
local on1 = { location = { fc2 = true, loss = true }, loop = { fc1 = true, act = true, fc2 = true }, zero = {},
  bn = { fc2 = true, loss = true } }
if scheme == "chain" then
  local at = { fc1 = 1, act = 2, fc2 = 3, loss = 3 }
  for _, l in ipairs(net.layer) do l.location = at[l.name] or 0 end
end
if scheme == "bn" then
  table.insert(net.layer, 5, { name = "bn", type = "kBM", srclayer = "fc1" })
  net.layer[6].srclayer = "bn"
end
if workers > 1 and (scheme == "feature" or scheme == "hybrid") then net.partition_dim = 1 end
if scheme == "hybrid" then net.layer[4].partition_dim = 0 end
if workers > 1 and on1[scheme] then
  for _, l in ipairs(net.layer) do l.location = on1[scheme][l.name] and 1 or 0 end
end
local cluster = workers == 1 and singa.cluster.sandblaster{ workers = 1, servers = 1 }
  or workers == 4 and singa.cluster.sandblaster{ workers = 4, servers = 2, procs = procs > 1 and procs or nil }
  or procs > 1 and singa.cluster.allreduce{ workers = 2, procs = 2 }
  or singa.cluster.sandblaster{ workers = 2, servers = 2 }
local r = singa.train{
  name = "pipe", seed = 7, train_steps = half == "first" and 25 or 50, disp_freq = 1, test_steps = 2, test_freq = 25,
  checkpoint_path = half and dir .. "/ckpt" or nil, checkpoint_freq = half and 25 or nil, resume = half == "resume",
  trace = trace, cluster = cluster, neuralnet = net,
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.05 } },
}
if singa.rank() == 0 then
  local f = assert(io.open(out, "w"))
  td.write_params(f, r.params)
  f:close()
end
-- the Workers panel's rows: each stage's steps, work and waits on bridges
local f = assert(io.open(out .. ".workers" .. singa.rank(), "w"))
for _, w in ipairs(r.stats.workers) do
  f:write(string.format("%d.%d %d %.6f %.6f\n", w.group, w.id, w.steps, w.work, w.bridge))
end
f:close()
LUA

gen_data

# run NAME WORKERS MICRO [PROCS [TRACE [HALF]]]: the job, its per-step losses in $tmp/NAME.csv
run() {
    timeout 120 "$SINGA_TUI" --procs "${4:-1}" --metrics "$tmp/$1.csv" -e "$tmp/job.lua" "$tmp/$1.txt" "$2" "$3" \
        "${4:-1}" ${5:--} $6 >"$tmp/$1.out" 2>&1
}

run ref 1 -
report $? "the MLP unpartitioned on one worker (the reference)" "$tmp/ref.out"

run m4 2 4 1 "$tmp/m4.trace.json" && same m4 ref
report $? "cut by location over 2 workers, micro_batches = 4: the loss of the unpartitioned net at each step, and its params" "$tmp/m4.out"

run m1 2 1 && same m1 ref && run cut 2 - && cmp -s "$tmp/m1.txt" "$tmp/cut.txt" &&
    cut -d, -f1-5 "$tmp/m1.csv" >"$tmp/m1.losses" && cut -d, -f1-5 "$tmp/cut.csv" >"$tmp/cut.losses" &&
    cmp -s "$tmp/m1.losses" "$tmp/cut.losses"
report $? "micro_batches = 1 is the cut net unpipelined: the same losses and params, to every digit" "$tmp/m1.out"

# Other cuts: workers that feed each other (the loss back on the data's worker), in 3 micro-batches;
# the net cut on its features, in 2; hybrid, in 4.
run loop 2loop 3 && same loop ref
report $? "fc1 and fc2 on worker 1, the loss on worker 0, micro_batches = 3: the unpartitioned net's losses and params" "$tmp/loop.out"
run feature 2feature 2 && same feature ref
report $? "cut on the features, micro_batches = 2: the unpartitioned net's losses and params" "$tmp/feature.out"
run hybrid 2hybrid 4 && same hybrid ref
report $? "fc1 cut on the batch, fc2 on the features, micro_batches = 4: the unpartitioned net's losses and params" "$tmp/hybrid.out"

# Stopped at a checkpoint and resumed (its first step is 25), the pipeline ends where it would
# have: every micro-batch's input layer continues from where it was.
run first 2 4 1 - first && run resumed 2 4 1 - resume &&
    [ "$(awk -F, '$2 == "train" { print $1; exit }' "$tmp/resumed.csv")" = 25 ] && params_close "$tmp/resumed.txt" "$tmp/m4.txt"
report $? "checkpointed after 25 steps and resumed, the pipeline ends with the params of 50 steps" "$tmp/resumed.out"

# The trace: every step's 4 forwards and 4 backwards on each worker's track, so the bubbles show.
python3 - "$tmp/m4.trace.json" <<'PY' >"$tmp/spans.out" 2>&1
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("name") == "thread_name"}
spans = {}
for e in ev:
    if e.get("ph") == "X" and e.get("cat") == "micro-batch":
        spans.setdefault(tracks[(e["pid"], e["tid"])], {}).setdefault(e["args"]["step"], []).append(e["name"])
want = sorted(["forward %d" % j for j in range(4)] + ["backward %d" % j for j in range(4)])
ok = len(spans) == 2 and all(sorted(v) == want for t in spans.values() for v in t.values())
for t, steps in sorted(spans.items()):
    print("# %s: %d steps, the first: %s" % (t, len(steps), ", ".join(next(iter(steps.values())))))
sys.exit(0 if ok else 1)
PY
rc=$?
cat "$tmp/spans.out"
report $rc "the trace shows each micro-batch's forward and backward on both workers" "$tmp/spans.out"

# The Workers panel: a row per stage, each timed at every step, with the time it waits.
sed 's/^/# group.worker steps work wait: /' "$tmp/m4.txt.workers0"
awk '$3 > 0 && $4 > 0 { ok[$1] = $2 >= 49 } END { exit !(ok["0.0"] && ok["0.1"]) }' "$tmp/m4.txt.workers0"
report $? "the Workers panel has a row per stage, with the time each waits" "$tmp/m4.txt.workers0"

# refused NAME WORKERS MICRO PATTERN: the job fails before training with a message matching PATTERN.
refused() {
    run "$1" "$2" "$3"
    local rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "$4" "$tmp/$1.out" && ! grep -q "step 1 " "$tmp/$1.out"
}
refused bad-divide 2 5 "micro_batches = 5 does not divide the batch: layer 'data' reads batchsize 24 (micro_batches may be one of 1, 2, 3, 4, 6, 8, 12, 24)"
report $? "micro_batches = 5 with batchsize 24: refused, naming the field, the batch and the allowed values" "$tmp/bad-divide.out"
# The hybrid cut's data layer splits its batch over the 2 workers: each micro-batch of 24 / 8 rows
# would split again, so 8 is refused and the allowed values are those of 12.
refused bad-split 2hybrid 8 "micro_batches = 8 does not divide the batch: layer 'data' reads batchsize 24 split over 2 workers (micro_batches may be one of 1, 2, 3, 4, 6, 12)"
report $? "micro_batches = 8 with batchsize 24 split over 2 workers: refused before the data layer, with the allowed values" "$tmp/bad-split.out"
refused bad-zero 2 0 "field 'micro_batches' must be a positive integer"
report $? "micro_batches = 0: refused, naming the field" "$tmp/bad-zero.out"
refused bad-text 2 two "field 'micro_batches' must be a positive integer"
report $? "micro_batches = \"two\": refused, naming the field" "$tmp/bad-text.out"
refused bad-uncut 1 4 "micro_batches = 4 pipelines a net whose layers are placed on several workers, but no layer is placed off worker 0"
report $? "micro_batches = 4 on a net not cut among workers: refused (nothing to pipeline)" "$tmp/bad-uncut.out"
refused bad-zero-loc 2zero 4 "micro_batches = 4 pipelines a net whose layers are placed on several workers, but no layer is placed off worker 0 (give layers a 'location' other than 0: the group's workers are 0 to 1)"
report $? "micro_batches = 4 with every layer placed on worker 0: refused (nothing to pipeline)" "$tmp/bad-zero-loc.out"
refused bad-bn 2bn 4 "micro_batches = 4: layer 'bn' (kBM) works on the whole batch"
report $? "micro_batches = 4 with a batch normalisation: refused, naming the layer" "$tmp/bad-bn.out"

run procs 2 4 2 && same procs ref
report $? "the same cut over 2 processes, micro_batches = 4: the loss of the unpartitioned net at each step, and its params" "$tmp/procs.out"
run chain 4chain 4 3 && same chain ref
report $? "a chain of 4 workers in 2 processes (and the servers in a third), micro_batches = 4: the unpartitioned net's losses and params" "$tmp/chain.out"

done_testing

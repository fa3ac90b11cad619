# A net cut among the workers of a group, trained by the runtime: each worker computes its parts
# in a thread of its own and bridges carry features and gradients between them.  On 2 and 4
# workers, on the features, by location and hybrid, an MLP and a small convnet give the loss of
# one worker at every one of 50 steps (to 1e-4 relative, from --metrics) and end with its params,
# through servers that slice the params (Sandblaster) and without (AllReduce); asynchronous groups
# each cut among their workers converge (t/2840: groups across processes).  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/2820-partition-group.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

cat >"$tmp/job.lua" <<'LUA'
-- job.lua NET SCHEME WORKERS FRAMEWORK OUT [HALF]: trains NET (mlp, conv) partitioned by SCHEME
-- (none, feature, location, hybrid) over WORKERS workers of a FRAMEWORK cluster; writes the params
-- to OUT.  HALF "first": the first 25 steps, checkpointed; "resume": the rest, from there.
local singa = require "singa"
local td = require "testdata"
local netname, scheme, workers, framework, out, half = arg[1], arg[2], tonumber(arg[3]), arg[4], arg[5], arg[6]
local dir = out:match("^(.*)/")
local images, labels = dir .. "/data/images-idx3-ubyte", dir .. "/data/labels-idx1-ubyte"
local net = td.mlp(images, labels)
if netname == "conv" then
  net.layer[4] = { name = "conv", type = "kConvolution", srclayer = "image", num_filters = 4, kernel = 3 }
  table.insert(net.layer, 5, { name = "pool", type = "kPooling", srclayer = "conv", pool = "MAX", kernel = 2, stride = 2 })
  table.insert(net.layer, 6, { name = "fc1", type = "kInnerProduct", srclayer = "pool", num_output = 40 })
end
local by = {}
for _, l in ipairs(net.layer) do by[l.name] = l end
if scheme == "feature" or scheme == "hybrid" then net.partition_dim = 1 end
if scheme == "hybrid" then by.conv.partition_dim = 0; by.pool.partition_dim = 0 end
if scheme == "location" then
  by.fc1.location = workers - 1
  by.fc2.location = 1
  by.loss.location = 0
end
local clusters = {
  sandblaster = workers > 1 and singa.cluster.sandblaster{ workers = workers, servers = 2 } or nil,
  allreduce = workers > 1 and singa.cluster.allreduce{ workers = workers } or nil,
  downpour = singa.cluster.downpour{ groups = 2 },
}
local cluster = clusters[framework]
if framework == "downpour" then cluster.nworkers_per_group = workers end
local r = singa.train{
  name = "cut", seed = 7, train_steps = framework == "downpour" and 200 or half == "first" and 25 or 50,
  disp_freq = 1, test_steps = 4, profile = true,
  checkpoint_path = half and dir .. "/ckpt" or nil, checkpoint_freq = half and 25 or nil, resume = half == "resume",
  cluster = cluster, neuralnet = net,
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.05 } },
}
local f = assert(io.open(out, "w"))
td.write_params(f, r.params)
f:write(string.format("accuracy %.6f\n", r.test.accuracy))
f:close()
-- r.profile: which workers' parts it lists, and whether every part was timed
local seen, workers, timed = {}, 0, true
for _, row in ipairs(r.profile) do
  local w = row.worker or 0
  if not seen[w] then seen[w], workers = true, workers + 1 end
  timed = timed and row.forward_ms > 0
end
f = assert(io.open(out .. ".profile", "w"))
f:write(string.format("%d workers %s\n", workers, timed and "timed" or "untimed"))
f:close()
LUA

gen_data

# run NAME NET SCHEME WORKERS FRAMEWORK [HALF]: the job, its per-step losses in $tmp/NAME.csv
run() {
    timeout 120 "$SINGA_TUI" --metrics "$tmp/$1.csv" -e "$tmp/job.lua" "$2" "$3" "$4" "$5" "$tmp/$1.txt" $6 \
        >"$tmp/$1.out" 2>&1
}

for net in mlp conv; do
    run "$net-ref" $net none 1 none
    report $? "$net: one worker trains (the reference)" "$tmp/$net-ref.out"
    for scheme in feature location hybrid; do
        [ $net = mlp ] && [ $scheme = hybrid ] && continue
        for workers in 2 4; do
            for fw in sandblaster allreduce; do
                [ $workers = 4 ] && [ $fw = allreduce ] && continue
                name=$net-$scheme-$workers-$fw
                run $name $net $scheme $workers $fw && same $name $net-ref
                report $? "$net cut among $workers workers ($scheme, $fw): the loss of one worker at each step, and its params" "$tmp/$name.out"
            done
        done
    done
done

grep -qx '4 workers timed' "$tmp/conv-hybrid-4-sandblaster.txt.profile"
report $? "r.profile times every worker's parts ($(cat "$tmp/conv-hybrid-4-sandblaster.txt.profile"))" "$tmp/conv-hybrid-4-sandblaster.out"

# Stopped at a checkpoint and resumed (its first step is 25), a cut net ends where it would have:
# every worker's data layers continue from where they were.
run first conv hybrid 2 sandblaster first && run resumed conv hybrid 2 sandblaster resume &&
    [ "$(awk -F, '$2 == "train" { print $1; exit }' "$tmp/resumed.csv")" = 25 ] &&
    d=$(timeout 30 "$SINGA_TUI" -e "$top_srcdir/t/paramdiff.lua" "$tmp/resumed.txt" "$tmp/conv-hybrid-2-sandblaster.txt" 2>&1) &&
    echo "# relative difference $d" && awk -v d="$d" 'BEGIN { exit !(d + 0 == d && d < 1e-6) }'
report $? "checkpointed after 25 steps and resumed, a cut net ends with the params of 50 steps" "$tmp/resumed.out"

# Asynchronous groups, each cut among 2 workers, converge.
run downpour conv hybrid 2 downpour && awk '$1 == "accuracy" { exit !($2 > 0.9) }' "$tmp/downpour.txt"
report $? "Downpour: 2 groups, each cut among 2 workers, converge ($(awk '$1 == "accuracy" { print $2 }' "$tmp/downpour.txt" 2>/dev/null))" "$tmp/downpour.out"

done_testing

# singa-tui --plan on a small MLP: the ranked table, --plan-out's JSON lines with their fields,
# --simulate's rows with the term that dominates each, cluster.plan = "auto" in one process and
# over 2 (the "plan: " line, then training with the choice), and bad input: a net that admits
# no distributed configuration (kBM), a profile that cannot run (no data), --hosts repeated or
# unreachable, fewer --procs than hosts, a plan other than "auto"; and --procs 4 spread over 2
# --hosts.  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8761-plan.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
tmp=$(cd "$tmp" && pwd)
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT
gen_data

cat >"$tmp/job.lua" <<'EOF'
-- job.lua DATA [CLUSTER [NET]]: the test MLP for 20 steps; CLUSTER "auto" sets cluster.plan,
-- "bad" a plan that is not one; NET "bm" puts a kBM layer after fc1.
local singa = require "singa"
local td = require "testdata"
local data, cluster, net = arg[1], arg[2], arg[3]
local nn = td.mlp(data .. "/images-idx3-ubyte", data .. "/labels-idx1-ubyte")
if net == "bm" then
  table.insert(nn.layer, 5, { name = "bm", type = "kBM", srclayer = "fc1" })
  nn.layer[6].srclayer = "bm"
end
local r = singa.train{
  name = "plan", seed = 7, train_steps = 20, disp_freq = 0,
  cluster = cluster == "auto" and { plan = "auto" } or cluster == "bad" and { plan = "fast" } or nil,
  updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = nn,
}
print(string.format("trained %d steps, loss %.4f, predicted step %s", r.steps, r.train.loss,
                    r.stats and r.stats.predicted_step and "> 0" or "none"))
EOF

# The table: a header naming the processes and link, the ranked rows, the Lua of each.
timeout 120 "$SINGA_TUI" --plan --procs 2 "$tmp/job.lua" "$tmp/data" >"$tmp/plan.out" 2>&1
rc=$?
grep -q '^plan for 2 processes, link local' "$tmp/plan.out" && grep -q '^1    ' "$tmp/plan.out" &&
    grep -q 'allreduce fp16' "$tmp/plan.out" && grep -q 'feature cut' "$tmp/plan.out" &&
    grep -q '^cluster = singa.cluster.allreduce{ workers = 2, procs = 2, compress = "fp16" }' "$tmp/plan.out" &&
    grep -q '^cluster = singa.cluster.allreduce{ workers = 2, procs = 2, compress = { topk = 0.01, error_feedback = true, values = "int8" } }' "$tmp/plan.out" &&
    grep -q '^neuralnet.micro_batches = ' "$tmp/plan.out" && ! grep -q '^trained' "$tmp/plan.out"
report $(( rc != 0 || $? )) "--plan --procs 2 prints the ranked configurations and their Lua, and trains nothing (status $rc)" "$tmp/plan.out"

# The feature cut timed among 2 threads here (this machine has 2 cores or more), and its row's
# step at least that: the compute its prediction starts from.
awk '/^the feature cut timed among 2 workers of one process: [0-9.]+ ms a step$/ { cut = $(NF - 3) }
     /^[0-9]+ +feature cut / { row = $4 }
     END { if (cut > 0 && row >= cut) print "ok", cut, row; else { print "cut", cut, "row", row; exit 1 } }' \
    "$tmp/plan.out" >"$tmp/cut.out" 2>&1
report $? "--plan times the feature cut among 2 workers of one process and predicts its row from that step" "$tmp/cut.out"
# ... also in a process a launcher started (rank 0 of cluster.plan = "auto" times it so)
SINGA_RANK=0 SINGA_SIZE=2 SINGA_COORDINATOR=tcp://127.0.0.1:1 timeout 120 "$SINGA_TUI" --plan --procs 2 \
    "$tmp/job.lua" "$tmp/data" >"$tmp/cutrank.out" 2>&1
rc=$?
grep -qE '^the feature cut timed among 2 workers of one process: [0-9.]+ ms a step$' "$tmp/cutrank.out"
report $(( rc != 0 || $? )) "the cut is timed in this process under a launcher's rank too (status $rc)" "$tmp/cutrank.out"

# --plan-out: one JSON record per row of the table, with the issue's fields.
timeout 120 "$SINGA_TUI" --plan --plan-link 1gbit --plan-out "$tmp/plan.jsonl" -e "$tmp/job.lua" "$tmp/data" >"$tmp/out.out" 2>&1
rc=$?
rows=$(grep -c '^[0-9][0-9]* ' "$tmp/out.out")
python3 - "$tmp/plan.jsonl" "$rows" >"$tmp/json.out" 2>&1 <<'EOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) == int(sys.argv[2]) and len(recs) >= 8, (len(recs), sys.argv[2])
for r in recs:
    for k in ("cluster", "images_per_sec", "step_seconds", "wire_bytes", "memory_bytes"):
        assert k in r, (k, r)
    assert r["cluster"].startswith("cluster = "), r
    assert r["images_per_sec"] > 0 and r["step_seconds"] > 0 and r["memory_bytes"] > 0, r
    assert abs(r["images_per_sec"] * r["step_seconds"] - (48 if "hogwild" in r["cluster"] else 24)) < 1e-3 * 48, r
speeds = [r["images_per_sec"] for r in recs]
# ranked by speed, but for ties (within 3%), where the row that compresses less goes first
assert all(speeds[i] >= 0.97 * speeds[j] for i in range(len(speeds)) for j in range(i + 1, len(speeds))), speeds
assert recs[0]["link"] == "1gbit"
print("ok", len(recs))
EOF
report $(( rc != 0 || $? )) "--plan-out writes a ranked JSON record per configuration with cluster, images_per_sec, step_seconds, wire_bytes, memory_bytes" "$tmp/json.out"

# --simulate: the same table for 8 processes, each row naming its dominant term.
timeout 120 "$SINGA_TUI" --plan --simulate 8 "$tmp/job.lua" "$tmp/data" >"$tmp/sim.out" 2>&1
rc=$?
grep -q '^plan for 8 processes' "$tmp/sim.out" && grep -q 'workers = 8, procs = 8' "$tmp/sim.out" &&
    [ "$(grep -cE '^[0-9]+ .* (compute|transfer|bubble|codec|stub)$' "$tmp/sim.out")" -ge 8 ]
report $(( rc != 0 || $? )) "--simulate 8 ranks 8-process configurations, each with the term that dominates it" "$tmp/sim.out"
[ "$(nproc)" -lt 8 ] && grep -q 'timed among 8' "$tmp/sim.out"
report $(( $? == 0 )) "--simulate 8 on $(nproc) cores times no cut among 8 threads" "$tmp/sim.out"

# cluster.plan = "auto": one process, then two processes agreeing on rank 0's choice.
timeout 120 "$SINGA_TUI" -e "$tmp/job.lua" "$tmp/data" auto >"$tmp/auto1.out" 2>&1
rc=$?
grep -qE '^plan: one process \(no cluster\), predicted [0-9]+ images/s$' "$tmp/auto1.out" &&
    grep -q '^trained 20 steps' "$tmp/auto1.out"
report $(( rc != 0 || $? )) "cluster.plan = \"auto\" in one process logs its plan and trains" "$tmp/auto1.out"
mkdir -p "$tmp/tmpdir"
TMPDIR=$tmp/tmpdir timeout 120 "$SINGA_TUI" --procs 2 -e "$tmp/job.lua" "$tmp/data" auto >"$tmp/auto2.out" 2>&1
rc=$?
[ "$(grep -cE '^plan: .* over 2 processes \(link local\), predicted [0-9]+ images/s$' "$tmp/auto2.out")" = 2 ] &&
    [ "$(grep '^plan: ' "$tmp/auto2.out" | sed 's/ over .*//' | sort -u | wc -l)" = 1 ] &&
    [ "$(grep -c '^trained 20 steps, .*, predicted step > 0$' "$tmp/auto2.out")" = 2 ] && [ -z "$(ls "$tmp/tmpdir")" ]
report $(( rc != 0 || $? )) "cluster.plan = \"auto\" over --procs 2: both processes run rank 0's choice and train, r.stats.predicted_step set" "$tmp/auto2.out"

# Bad input.
timeout 120 "$SINGA_TUI" --plan --procs 2 "$tmp/job.lua" "$tmp/data" none bm >"$tmp/bm.out" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "admits no distributed configuration over 2 processes: layer 'bm' (kBM) needs the whole batch" "$tmp/bm.out"
report $? "--plan: a net that admits no distributed configuration is named, status 1 (got $rc)" "$tmp/bm.out"
timeout 120 "$SINGA_TUI" --plan "$tmp/job.lua" "$tmp/nodata" >"$tmp/nodata.out" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "singa-tui --plan: .*nodata/images-idx3-ubyte.*(the profile trains a few steps" "$tmp/nodata.out"
report $? "--plan: a profile that cannot run (no data) names the file, status 1 (got $rc)" "$tmp/nodata.out"
timeout 120 "$SINGA_TUI" -e "$tmp/job.lua" "$tmp/nodata" auto >"$tmp/autonodata.out" 2>&1
rc=$?
[ $rc = 1 ] && grep -q '^plan: the profile cannot run (.*nodata/images-idx3-ubyte.*): the job runs with its own cluster fields' "$tmp/autonodata.out"
report $? "cluster.plan = \"auto\" falls back to the job's own fields when the profile cannot run, saying so (status $rc)" "$tmp/autonodata.out"
TMPDIR=$tmp/tmpdir timeout 60 "$SINGA_TUI" --procs 2 -e "$tmp/job.lua" "$tmp/data" auto bm >"$tmp/autobm.out" 2>&1
rc=$?
[ $rc != 0 ] && [ $rc != 124 ] &&
    grep -q "^plan: no configuration of 2 processes to run (layer 'bm' (kBM) needs the whole batch in one net of one process): the job runs with its own cluster fields" "$tmp/autobm.out" &&
    grep -q "^plan: no configuration of 2 processes to run (rank 0 found none): the job runs with its own cluster fields" "$tmp/autobm.out"
report $? "cluster.plan = \"auto\" over --procs 2 with no configuration: rank 0 falls back saying why, and the others with it (status $rc)" "$tmp/autobm.out"
timeout 60 "$SINGA_TUI" --plan --hosts localhost,127.0.0.1,localhost "$tmp/job.lua" "$tmp/data" >"$tmp/dup.out" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "^singa-tui: --hosts names 'localhost' twice" "$tmp/dup.out"
report $? "--hosts naming a host twice is refused, status 2 (got $rc)" "$tmp/dup.out"
timeout 120 "$SINGA_TUI" --plan --procs 4 --hosts localhost,127.0.0.1 --plan-cores 1 "$tmp/job.lua" "$tmp/data" >"$tmp/spread.out" 2>&1
rc=$?
grep -q '^plan for 4 processes, link 1gbit' "$tmp/spread.out" &&
    grep -q '^2 processes a host over 2 hosts (--hosts), 1 core a host; within a host link local' "$tmp/spread.out" &&
    grep -q 'workers = 4, procs = 4' "$tmp/spread.out"
report $(( rc != 0 || $? )) "--procs 4 --hosts A,B --plan-cores 1 plans 4 processes, 2 a host of 1 core" "$tmp/spread.out"
timeout 60 "$SINGA_TUI" --plan --procs 1 --hosts localhost,127.0.0.1 "$tmp/job.lua" "$tmp/data" >"$tmp/few.out" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "^singa-tui: --plan --procs 1 over 2 hosts (--hosts 'localhost,127.0.0.1'): fewer processes than hosts" "$tmp/few.out"
report $? "--procs fewer than the --hosts is refused, status 2 (got $rc)" "$tmp/few.out"
timeout 60 "$SINGA_TUI" --plan --hosts localhost,nosuchhost.invalid "$tmp/job.lua" "$tmp/data" >"$tmp/unreach.out" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "^singa-tui: --hosts: host 'nosuchhost.invalid' is unreachable" "$tmp/unreach.out"
report $? "--hosts naming an unreachable host is refused, status 2 (got $rc)" "$tmp/unreach.out"
timeout 60 "$SINGA_TUI" -e "$tmp/job.lua" "$tmp/data" bad >"$tmp/bad.out" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "cluster: field 'plan' is \"auto\" (the planner picks the configuration), got 'fast'" "$tmp/bad.out"
report $? "cluster.plan other than \"auto\" is refused naming it (status $rc)" "$tmp/bad.out"
timeout 60 "$SINGA_TUI" --plan --plan-link 5furlongs "$tmp/job.lua" "$tmp/data" >"$tmp/link.out" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "singa-tui --plan: --plan-link '5furlongs': a link is local, <N>gbit or <N>mbit" "$tmp/link.out"
report $? "--plan-link that names no link is refused naming it (status $rc)" "$tmp/link.out"
SINGA_PLAN_LINK=5furlongs timeout 60 "$SINGA_TUI" -e "$tmp/job.lua" "$tmp/data" auto >"$tmp/envlink.out" 2>&1
rc=$?
[ $rc = 0 ] && grep -q "^plan: \$SINGA_PLAN_LINK (--plan-link '5furlongs': a link is local, .*): the job runs with its own cluster fields" "$tmp/envlink.out"
report $? "cluster.plan = \"auto\" with a \$SINGA_PLAN_LINK that names no link falls back naming it (status $rc)" "$tmp/envlink.out"
timeout 60 "$SINGA_TUI" --simulate 8 -e "$tmp/job.lua" "$tmp/data" >"$tmp/nosim.out" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "go with --plan" "$tmp/nosim.out"
report $? "--simulate without --plan is refused (status $rc)" "$tmp/nosim.out"

done_testing

# cluster.shard_params: each process of a group cut across processes holds only its elements of
# each param (its workers' rows and its servers' slices), never the whole model.  A wide MLP cut
# on the features over 2 processes trains as without sharding (the same loss at each step), while
# each process's peak memory stays below what the model's values and gradients take, and in a
# memory cgroup of that budget it trains where unsharded it is killed; r.params leaves out the
# params a process holds in part; what sharding cannot do yet is refused.  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
. "$top_srcdir/t/tap.sh"
tmp=t/2850-partition-shard.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/procs.sh"
cgroups= # the memory cgroups the test made, removed once their processes are gone
drop_cgroups() {
    for cg in $cgroups; do rmdir "$cg" 2>/dev/null; done
}
trap 'kill_ours; sleep 0.2; drop_cgroups' EXIT
gen_data

cat >"$tmp/job.lua" <<'LUA'
-- job.lua DATA HIDDEN STEPS SHARD WS [EXTRA]: an MLP of 144 inputs, hidden layers of HIDDEN
-- units ("64" or "6144,6144") and 10 outputs, cut on the features between the 2 workers of
-- singa.cluster.allreduce{ workers = 2, procs = 2 } (SHARD: shard_params), STEPS steps; each
-- process's log in WS; EXTRA (test, downpour, separate) breaks a rule of sharding.  Rank r writes
-- the names in its r.params to WS/params<r>.
local singa = require "singa"
local data, hidden, steps, shard, ws, extra = arg[1], arg[2], tonumber(arg[3]), arg[4] == "true", arg[5], arg[6]
local cluster = singa.cluster.allreduce{ workers = 2, procs = 2, shard_params = shard, workspace = ws }
-- A 6144-wide net takes its processes a while to build under a sanitizer on a busy machine, all
-- before they meet.
cluster.join_timeout = 120
if extra == "downpour" then
  cluster = singa.cluster.downpour{ groups = 2, procs = 3, shard_params = true }
elseif extra == "separate" then
  cluster = { nworkers_per_group = 2, nworkers_per_procs = 2, server_worker_separate = true, shard_params = true }
end
local layers = {
  { name = "data", type = "kIDXData", batchsize = 32, shuffle = true, partition_dim = 0,
    images = data .. "/images-idx3-ubyte", labels = data .. "/labels-idx1-ubyte" },
  { name = "mnist", type = "kMnist", srclayer = "data", norm_a = 255, partition_dim = 0 },
  { name = "label", type = "kLabel", srclayer = "data", partition_dim = 0 },
}
local src = "mnist"
for width in hidden:gmatch("%d+") do
  local i = #layers
  layers[#layers + 1] = { name = "ip" .. i, type = "kInnerProduct", srclayer = src, num_output = tonumber(width) }
  layers[#layers + 1] = { name = "relu" .. i, type = "kReLU", srclayer = "ip" .. i }
  src = "relu" .. i
end
layers[#layers + 1] = { name = "out", type = "kInnerProduct", srclayer = src, num_output = 10 }
layers[#layers + 1] = { name = "loss", type = "kSoftmaxLoss", srclayer = { "out", "label" }, partition_dim = 0 }
local r = singa.train{
  name = "shard", seed = 3, train_steps = steps, disp_freq = 1, test_steps = extra == "test" and 1 or 0,
  test_freq = 10, cluster = cluster, neuralnet = { partition_dim = 1, layer = layers },
  updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.01 } },
}
local names = {}
for name in pairs(r.params) do names[#names + 1] = name end
table.sort(names)
local f = assert(io.open(ws .. "/params" .. singa.rank(), "w"))
f:write(table.concat(names, " "), "\n")
f:close()
LUA

# run NAME HIDDEN STEPS SHARD [EXTRA]: the job over 2 processes (3 for downpour); its losses in
# $tmp/NAME.csv, its logs in $tmp/NAME/ (their ends also in $tmp/NAME.out when it fails)
run() {
    mkdir -p "$tmp/$1"
    timeout 300 "$SINGA_TUI" --procs $([ "$5" = downpour ] && echo 3 || echo 2) --metrics "$tmp/$1.csv" \
        -e "$tmp/job.lua" "$tmp/data" "$2" "$3" "$4" "$tmp/$1" $5 >"$tmp/$1.out" 2>&1 ||
        { rc=$?; echo "exit status $rc" >>"$tmp/$1.out"; tail -n 4 "$tmp/$1"/rank*.log >>"$tmp/$1.out" 2>/dev/null; return $rc; }
}
# peak NAME RANK: that process's peak resident memory in MB, from its log
peak() {
    sed -n 's/.*rank [0-9]*: peak resident memory \([0-9.]*\) MB$/\1/p' "$tmp/$1/rank$2.log" | tail -1
}
# same_loss NAME REF STEPS: NAME's train loss at each of STEPS steps within 1e-5 relative of REF's
same_loss() {
    awk -F, 'FNR == 1 { file++ }
        $2 == "train" { if (file == 1) ref[$1] = $4; else got[$1] = $4 }
        END { n = 0; worst = 0
            for (s in ref) { n++; if (!(s in got)) { worst = 1; break }
                d = (got[s] - ref[s]) / ref[s]; if (d < 0) d = -d; if (d > worst) worst = d }
            printf "# %d steps, worst relative loss difference %.2g\n", n, worst
            exit !(n == steps && worst <= 1e-5) }' steps="$3" "$tmp/$2.csv" "$tmp/$1.csv"
}

# 64 hidden units: the same loss at every step with and without sharding.
run small 64 30 false
report $? "an MLP cut on the features over 2 processes trains (the reference)" "$tmp/small.out"
run small-shard 64 30 true && same_loss small-shard small 30
report $? "sharded, it has the same loss at each of 30 steps" "$tmp/small-shard.out"

# ip3 and out are cut on the features, so each process holds half of each: r.params holds
# neither, in either process; unsharded, both hold all four params.
for r in 0 1; do echo "# rank $r: sharded r.params: $(cat "$tmp/small-shard/params$r"); unsharded: $(cat "$tmp/small/params$r")"; done
[ "$(cat "$tmp/small-shard/params0")" = "" ] && [ "$(cat "$tmp/small-shard/params1")" = "" ] &&
    [ "$(cat "$tmp/small/params1")" = "ip3_bias ip3_weight out_bias out_weight" ]
report $? "r.params leaves out the params a process holds in part" "$tmp/small-shard/params0"

# Two hidden layers of 6144 units: ip5's weight is 144 MB, and the model's values and gradients
# take 295 MB (of 2^20 bytes, as the peaks), what one worker training it alone needs at least.
# Sharded, each process holds half of them (its server's slice lies in the same memory, and it
# updates from its worker's gradient in place): each process's peak stays below the whole model's
# values and gradients, and below 0.8x its peak unsharded.  (Under the sanitizers, whose allocators hold memory of their
# own, the peaks are not compared.)
whole=295
run wide 6144,6144 8 false
report $? "an MLP of two 6144-wide layers cut over 2 processes trains unsharded" "$tmp/wide.out"
run wide-shard 6144,6144 8 true && same_loss wide-shard wide 8
report $? "and sharded, with the same loss at each of 8 steps" "$tmp/wide-shard.out"
for r in 0 1; do
    echo "# rank $r: peak resident memory $(peak wide $r) MB unsharded, $(peak wide-shard $r) MB sharded; the model's values and gradients $whole MB"
done
name="sharded, each process's peak memory stays below the model's values and gradients, and 0.8x its peak unsharded"
if [ -n "${ASAN_OPTIONS:-}${SINGA_TEST_TSAN:-}" ]; then
    skip "$name" "under a sanitizer"
else
    awk -v a="$(peak wide-shard 0)" -v b="$(peak wide-shard 1)" -v c="$(peak wide 0)" -v d="$(peak wide 1)" -v w=$whole \
        'BEGIN { exit !(a > 0 && b > 0 && a < w && b < w && a < 0.8 * c && b < 0.8 * d) }'
    report $? "$name" "$tmp/wide-shard/rank1.log"
fi

# A real budget: each process in a memory cgroup of its own limited to 250 MB, less than the
# model's values and gradients.  Sharded, the job trains to the end with the same losses;
# unsharded, the kernel kills rank 1 as it builds its nets (rank 0 is then stopped by the test,
# which would otherwise wait join_timeout for it).  Needs root and a cgroup v1 memory controller.
budget=250
own=$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup 2>/dev/null)
cgroot=/sys/fs/cgroup/memory$own
# budget_run NAME SHARD: the wide job, each rank started in its own limited cgroup as a launcher
# would start it; sets rc0 and rc1 to the ranks' exit statuses
budget_run() {
    port=$(free_port)
    mkdir -p "$tmp/$1"
    for r in 1 0; do
        cg=$cgroot/singa-2850-$$-$1-$r
        mkdir "$cg" && echo $((budget * 1048576)) >"$cg/memory.limit_in_bytes" || return 1
        cgroups="$cgroups $cg"
        sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg" \
            env SINGA_RANK=$r SINGA_SIZE=2 SINGA_COORDINATOR=tcp://127.0.0.1:$port timeout 120 "$SINGA_TUI" \
            --metrics "$tmp/$1.csv" -e "$tmp/job.lua" "$tmp/data" 6144,6144 8 "$2" "$tmp/$1" >"$tmp/$1/out$r" 2>&1 &
        eval "task$r=\$!"
    done
    wait "$task1"
    rc1=$?
    [ $rc1 -ne 0 ] && kill "$task0" 2>/dev/null
    wait "$task0"
    rc0=$?
}
if [ -n "${ASAN_OPTIONS:-}${SINGA_TEST_TSAN:-}" ]; then
    skip "a $budget MB budget per process: the sharded job trains" "under a sanitizer"
    skip "a $budget MB budget per process: unsharded, rank 1 is killed" "under a sanitizer"
elif [ "$(id -u)" -ne 0 ] || [ ! -w "$cgroot" ]; then
    skip "a $budget MB budget per process: the sharded job trains" "needs root and a cgroup v1 memory controller"
    skip "a $budget MB budget per process: unsharded, rank 1 is killed" "needs root and a cgroup v1 memory controller"
else
    budget_run budget-shard true && [ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] && same_loss budget-shard wide 8
    report $? "a $budget MB budget per process: the sharded job trains, with the same losses" "$tmp/budget-shard/out0"
    for cg in $cgroups; do echo "# $(basename "$cg"): at most $(($(cat "$cg/memory.max_usage_in_bytes") / 1048576)) MB"; done
    budget_run budget-whole false
    echo "# unsharded: rank 0 exited $rc0, rank 1 $rc1"
    [ $rc1 -eq 137 ] && [ "$(cat "$cgroot/singa-2850-$$-budget-whole-1/memory.failcnt")" -gt 0 ]
    report $? "a $budget MB budget per process: unsharded, rank 1 is killed" "$tmp/budget-whole/out1"
fi

# What sharding cannot do (yet) is refused, naming the field.
run refuse-test 64 30 true test
[ $? -ne 0 ] && grep -q "shard_params: test_steps and validate_steps must be 0" "$tmp/refuse-test.out"
report $? "shard_params with test_steps is refused: a test needs the whole model" "$tmp/refuse-test.out"
run refuse-groups 64 30 true downpour
[ $? -ne 0 ] && grep -q "shard_params holds the params of one worker group among its processes: nworker_groups and nserver_groups must be 1, got 2" "$tmp/refuse-groups.out"
report $? "shard_params with 2 worker groups is refused" "$tmp/refuse-groups.out"
run refuse-separate 64 30 true separate
[ $? -ne 0 ] && grep -q "shard_params needs a worker in every server's process, but server 0.0 is alone in process 1" "$tmp/refuse-separate.out"
report $? "shard_params with a server alone in its process is refused" "$tmp/refuse-separate.out"

[ "$failed" -eq 0 ] && rm -rf "$tmp"
done_testing

# Two processes on two "machines": network namespaces joined by a veth pair, each rank listening
# on its own address.  They train together; then the link goes down, and both find the other
# silent within heartbeat_timeout and end, naming it.  Needs root (skipped otherwise).  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8400-netns.tmp
if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null 2>&1; then
    echo "1..0 # SKIP needs root and iproute2 to make network namespaces"
    exit 0
fi
a=singa-$$-a b=singa-$$-b
if ! ip netns add "$a" 2>/dev/null; then
    echo "1..0 # SKIP cannot make a network namespace here"
    exit 0
fi
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
cleanup() {
    kill_ours
    ip netns del "$a" 2>/dev/null
    ip netns del "$b" 2>/dev/null
}
trap cleanup EXIT

# 10.231.N.1 in one namespace, .2 in the other.
net=10.231.$(($$ % 250))
ip netns add "$b" && ip link add "va$$" type veth peer name "vb$$" &&
    ip link set "va$$" netns "$a" && ip link set "vb$$" netns "$b" &&
    ip -n "$a" addr add "$net.1/24" dev "va$$" && ip -n "$b" addr add "$net.2/24" dev "vb$$" &&
    ip -n "$a" link set "va$$" up && ip -n "$b" link set "vb$$" up &&
    ip -n "$a" link set lo up && ip -n "$b" link set lo up
report $? "two namespaces joined by a veth pair ($net.1 and $net.2)"

cat >"$tmp/job.lua" <<'EOF'
local singa = require "singa"
local td = require "testdata"
local dir, steps = arg[1], tonumber(arg[2])
local img, lab = dir .. "/data/images-idx3-ubyte", dir .. "/data/labels-idx1-ubyte"
if singa.rank() == 0 and steps == 0 then td.idx(dir .. "/data", 480, 10, 12, 12, 4242) return end
local r = singa.train{
  name = "netns", seed = 7, train_steps = steps, disp_freq = 50, test_steps = 4,
  cluster = singa.cluster.sandblaster{ workers = 1, servers = 1, procs = 2, heartbeat_timeout = 2,
                                       join_timeout = 20 },
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = { layer = {
    { name = "data", type = "kIDXData", batchsize = 24, images = img, labels = lab },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 10 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc1", "label" } },
  } },
}
print(string.format("rank %d: %d steps, test accuracy %.4f", singa.rank(), r.steps, r.test.accuracy))
EOF
timeout 30 "$SINGA_TUI" -e "$tmp/job.lua" "$tmp" 0 >"$tmp/gen.out" 2>&1
report $? "synthetic data written" "$tmp/gen.out"

# rank R STEPS: rank R of the job in its namespace, listening on its own address.
rank() {
    ns=$a
    [ "$1" -eq 1 ] && ns=$b
    ip netns exec "$ns" env SINGA_RANK="$1" SINGA_SIZE=2 SINGA_COORDINATOR="tcp://$net.1:5555" \
        SINGA_BIND="$net.$(($1 + 1))" timeout 90 "$SINGA_TUI" -e "$tmp/job.lua" "$tmp" "$2" >"$tmp/rank$1.out" 2>&1
}

rank 0 300 &
r0=$!
rank 1 300
rc1=$?
wait $r0
rc0=$?
[ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] && grep -q "rank 1 of 2 (pid [0-9]*, SINGA_RANK) at tcp://$net.2:[0-9]*: servers 0.0" "$tmp/rank1.out" &&
    grep -q 'rank 0: 300 steps, test accuracy' "$tmp/rank0.out"
report $? "the worker in one namespace and the server in the other train together" "$tmp/rank0.out"

rank 0 100000000 &
r0=$!
rank 1 100000000 &
r1=$!
for _ in $(seq 200); do grep -q '^step ' "$tmp/rank0.out" && break; sleep 0.05; done
t0=$(date +%s.%N)
ip -n "$a" link set "va$$" down
wait $r0
rc0=$?
wait $r1
rc1=$?
took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
echo "# both ranks ended $took s after the link went down"
[ $rc0 -ne 0 ] && [ $rc0 -ne 124 ] && [ $rc1 -ne 0 ] && [ $rc1 -ne 124 ] &&
    awk -v t="$took" 'BEGIN { exit !(t <= 6) }' &&
    grep -q "rank 1 (servers 0.0) at tcp://$net.2:[0-9]* sent nothing for 2 s" "$tmp/rank0.out" &&
    grep -q "rank 0 (workers 0.0) at tcp://$net.1:5555 sent nothing for 2 s" "$tmp/rank1.out"
report $? "the link down: each side finds the other silent within the bound and ends, naming it" "$tmp/rank0.out"

# The end of a job over a slow link: rank 0 hands its final values (2.4 MB) to each process, which
# take about a second to cross 20 Mbit/s; rank 1, beside rank 0, has them at once and closes.
# Rank 2 must not count that close, nor rank 0's before its values are in, as a loss.
ip -n "$a" link set "va$$" up &&
    tc -n "$a" qdisc add dev "va$$" root tbf rate 20mbit burst 32kb latency 400ms &&
    tc -n "$b" qdisc add dev "vb$$" root tbf rate 20mbit burst 32kb latency 400ms
report $? "the link up again, shaped to 20 Mbit/s with tbf"
cat >"$tmp/wide.lua" <<'EOF'
local singa = require "singa"
local td = require "testdata"
local dir = arg[1]
local r = singa.train{
  name = "wide", seed = 7, train_steps = 2, disp_freq = 1,
  cluster = singa.cluster.allreduce{ workers = 3, procs = 3, heartbeat_timeout = 30, join_timeout = 20 },
  neuralnet = td.mlp(dir .. "/data/images-idx3-ubyte", dir .. "/data/labels-idx1-ubyte", 4000),
  updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.05 } },
}
print(string.format("rank %d: %d steps", singa.rank(), r.steps))
EOF
# wide R: rank R of 3, ranks 0 and 1 in one namespace, 2 in the other.
wide() {
    ns=$a host=1
    [ "$1" -eq 2 ] && ns=$b host=2
    ip netns exec "$ns" env SINGA_RANK="$1" SINGA_SIZE=3 SINGA_COORDINATOR="tcp://$net.1:5556" SINGA_BIND="$net.$host" \
        timeout 90 "$SINGA_TUI" -e "$tmp/wide.lua" "$tmp" >"$tmp/wide$1.out" 2>&1
}
wide 1 &
w1=$!
wide 2 &
w2=$!
wide 0
rc0=$?
wait $w1
rc1=$?
wait $w2
rc2=$?
echo "# statuses $rc0 $rc1 $rc2"
[ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && grep -q "^rank 2: 2 steps$" "$tmp/wide2.out"
report $? "over 20 Mbit/s, the final values reach the far process though its neighbour closed first: all end 0" "$tmp/wide2.out"

[ "$failed" -eq 0 ] && rm -rf "$tmp"
done_testing

# A net cut among the workers of a group that lives in several processes: the bridges between
# processes are messages through the stubs, and the servers sum the processes' parts of the
# group's gradient.  The Fashion-MNIST MLP and LeNet, on the batch, the features, by location and
# hybrid, on 2 processes of one worker each and on 2 processes of 2 workers each, give the loss of
# one worker at each of 50 steps (to 1e-4 relative) and end with its params; killing one process
# of a cut group ends the other, naming it.  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
. "$top_srcdir/t/tap.sh"
fm=${FMNIST_DIR:-/usr/share/datasets/fashion-mnist}
if [ ! -r "$fm/train-images-idx3-ubyte.gz" ]; then
    echo "1..0 # SKIP no Fashion-MNIST in $fm (Debian: dataset-fashion-mnist)"
    exit 0
fi
tmp=t/2840-partition-procs.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

cat >"$tmp/job.lua" <<'LUA'
-- job.lua NET SCHEME TOPOLOGY OUT [STEPS]: NET (mlp, lenet) on Fashion-MNIST, partitioned by
-- SCHEME (none, batch, feature, location, hybrid) over the workers of TOPOLOGY: one (a worker),
-- two (AllReduce: 2 processes of a worker and a server), four (Sandblaster: 2 processes of 2
-- workers, the 2 servers in a third).  Rank 0 writes the params to OUT.
local singa = require "singa"
local td = require "testdata"
local netname, scheme, topology, out = arg[1], arg[2], arg[3], arg[4]
local fm = os.getenv("FMNIST_DIR") or "/usr/share/datasets/fashion-mnist"
local clusters = {
  two = singa.cluster.allreduce{ workers = 2, procs = 2 },
  four = singa.cluster.sandblaster{ workers = 4, servers = 2, procs = 3 },
}
local workers = topology == "four" and 4 or topology == "two" and 2 or 1
local layers = {
  { name = "data", type = "kIDXData", batchsize = 64, shuffle = true,
    images = fm .. "/train-images-idx3-ubyte.gz", labels = fm .. "/train-labels-idx1-ubyte.gz" },
  { name = "mnist", type = "kMnist", srclayer = "data", norm_a = 255 },
  { name = "label", type = "kLabel", srclayer = "data" },
}
local function add(l) layers[#layers + 1] = l; return l end
local conv = {}
if netname == "lenet" then
  conv[#conv + 1] = add{ name = "conv1", type = "kConvolution", srclayer = "mnist", num_filters = 8, kernel = 5 }
  conv[#conv + 1] = add{ name = "pool1", type = "kPooling", srclayer = "conv1", pool = "MAX", kernel = 2, stride = 2 }
  conv[#conv + 1] = add{ name = "conv2", type = "kConvolution", srclayer = "pool1", num_filters = 16, kernel = 5 }
  conv[#conv + 1] = add{ name = "pool2", type = "kPooling", srclayer = "conv2", pool = "MAX", kernel = 2, stride = 2 }
end
local fc = {
  add{ name = "ip1", type = "kInnerProduct", srclayer = #conv > 0 and "pool2" or "mnist", num_output = 64 },
  add{ name = "relu1", type = "kReLU", srclayer = "ip1" },
}
local ip2 = add{ name = "ip2", type = "kInnerProduct", srclayer = "relu1", num_output = 10 }
local loss = add{ name = "loss", type = "kSoftmaxLoss", srclayer = { "ip2", "label" } }
local net = { layer = layers }
if scheme == "feature" or scheme == "hybrid" then net.partition_dim = 1 end
if scheme == "hybrid" then for _, l in ipairs(conv) do l.partition_dim = 0 end end
if scheme == "location" then
  for i = 1, 3 do layers[i].location = 0 end
  for _, l in ipairs(conv) do l.location = 1 end
  for _, l in ipairs(fc) do l.location = workers - 1 end
  ip2.location, loss.location = workers - 1, 0
end
local r = singa.train{
  name = "cut", seed = 5, train_steps = tonumber(arg[5]) or 50, disp_freq = 1,
  cluster = clusters[topology], neuralnet = net,
  updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.05 } },
}
if singa.rank() == 0 then
  local f = assert(io.open(out, "w"))
  td.write_params(f, r.params)
  f:close()
  f = assert(io.open(out .. ".stats", "w")) -- rank 0's own bridge rows: type, peer, messages
  for _, row in ipairs(r.stats.traffic) do
    if row.rank == 0 and row.type:match("^bridge") then
      f:write(string.format("%s\t%s\t%d\t%d\n", row.type, row.peer, row.sent, row.received))
    end
  end
  f:close()
end
LUA

# run NAME NET SCHEME TOPOLOGY: the job, its per-step losses in $tmp/NAME.csv
run() {
    local procs=1
    case $4 in two) procs=2 ;; four) procs=3 ;; esac
    timeout 300 "$SINGA_TUI" --procs $procs --metrics "$tmp/$1.csv" -e "$tmp/job.lua" "$2" "$3" "$4" "$tmp/$1.txt" \
        >"$tmp/$1.out" 2>&1
}

nets="mlp lenet"
[ -n "${SINGA_TEST_TSAN:-}" ] && nets=mlp # under ThreadSanitizer, the MLP's runs only
for net in $nets; do
    run "$net-ref" $net none one
    report $? "$net: one worker trains (the reference)" "$tmp/$net-ref.out"
    for scheme in batch feature location hybrid; do
        [ $net = mlp ] && [ $scheme = hybrid ] && continue
        for topology in two four; do
            name=$net-$scheme-$topology
            run $name $net $scheme $topology && same $name $net-ref
            report $? "$net on the $scheme, $topology: the loss of one worker at each step, and its params" "$tmp/$name.out"
        done
    done
done

# What crossed between the processes, as rank 0's stub counted it: features and gradients both
# ways, and rank 1's metrics of each of the 50 forward passes.
st="$tmp/mlp-feature-four.txt.stats"
sed 's/^/# /' "$st"
awk -F'\t' '$2 == "worker 0.2 (rank 1)" { n[$1 " " ($3 > 0) ($4 > 0)]++; if ($1 == "bridge-metrics") m = $4 }
    END { exit !(n["bridge 11"] && n["bridge-grad 11"] && m == 50) }' "$st"
report $? "the MLP on the features, 2 processes of 2 workers: features and gradients cross both ways, and rank 1's metrics of every step" "$st"

# Killing a process of a cut group ends the other, which may be waiting at a bridge, naming it.
out="$tmp/kill.out"
timeout 90 "$SINGA_TUI" --procs 2 -e "$tmp/job.lua" mlp feature two "$tmp/kill.txt" 1000000 >"$out" 2>&1 &
launcher=$!
for _ in $(seq 300); do grep -q '^step ' "$out" && break; sleep 0.1; done
kill -9 "$(rank_pid 1)"
t0=$(date +%s)
wait "$launcher"
rc=$?
took=$(($(date +%s) - t0))
echo "# rank 0 ended $took s after rank 1 was killed"
[ $rc -ne 0 ] && [ $took -le 8 ] && grep -q 'rank 1 (workers 0.1; servers 0.1) at tcp://127.0.0.1:[0-9]* sent nothing' "$out"
report $? "rank 1 of a cut group killed: rank 0 ends within 8 s, naming it" "$out"

[ "$failed" -eq 0 ] && rm -rf "$tmp"
done_testing

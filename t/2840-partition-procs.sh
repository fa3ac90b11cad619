# A net cut among the workers of a group that lives in several processes: the bridges between
# processes are messages through the stubs, and the servers sum the processes' parts of the
# group's gradient.  The Fashion-MNIST MLP and LeNet, on the batch, the features, by location
# (also with the loss and its labels away from the data) and hybrid, on 2 processes of one worker each and on 2 processes of 2 workers each, give the loss of
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
-- SCHEME (none, batch, feature, location, far-loss, hybrid) over the workers of TOPOLOGY: one (a worker),
-- two (AllReduce: 2 processes of a worker and a server), four (Sandblaster: 2 processes of 2
-- workers, the 2 servers in a third).  Rank 0 writes the params to OUT, rank r > 0 to
-- OUT.rank<r>.
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
if scheme == "location" or scheme == "far-loss" then -- far-loss: the labels cross to the loss
  for i = 1, 3 do layers[i].location = 0 end
  for _, l in ipairs(conv) do l.location = 1 end
  for _, l in ipairs(fc) do l.location = workers - 1 end
  ip2.location, loss.location = workers - 1, scheme == "far-loss" and workers - 1 or 0
  if scheme == "far-loss" then layers[3].location = workers - 1 end
end
local r = singa.train{
  name = "cut", seed = 5, train_steps = tonumber(arg[5]) or 50, disp_freq = 1, test_steps = 2, test_freq = 20,
  profile = true,
  cluster = clusters[topology], neuralnet = net,
  updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.05 } },
}
local f = assert(io.open(singa.rank() == 0 and out or out .. ".rank" .. singa.rank(), "w"))
td.write_params(f, r.params)
f:close()
if singa.rank() == 0 then -- the layers' mean times per step: worker, type, forward and backward ms
  f = assert(io.open(out .. ".profile", "w"))
  for _, row in ipairs(r.profile) do
    f:write(string.format("%s\t%s\t%s\t%.6f\t%.6f\n", row.worker, row.name, row.type, row.forward_ms, row.backward_ms))
  end
  f:close()
end
-- each process's own bridge and update rows: type, peer, messages and bytes sent and received
f = assert(io.open(out .. ".stats" .. singa.rank(), "w"))
for _, row in ipairs(r.stats.traffic) do
  if row.rank == singa.rank() and (row.type:match("^bridge") or row.type:match("^update")) then
    f:write(string.format("%s\t%s\t%d\t%d\t%d\t%d\n", row.type, row.peer, row.sent, row.received,
                          row.bytes_sent, row.bytes_received))
  end
end
f:close()
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
    for scheme in batch feature location far-loss hybrid; do
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
st="$tmp/mlp-feature-four.txt.stats0"
sed 's/^/# /' "$st"
awk -F'\t' '$2 == "worker 0.2 (rank 1)" { n[$1 " " ($3 > 0) ($4 > 0)]++; if ($1 == "bridge-metrics") m = $4 }
    END { exit !(n["bridge 11"] && n["bridge-grad 11"] && m == 50) }' "$st"
report $? "the MLP on the features, 2 processes of 2 workers: features and gradients cross both ways, and rank 1's metrics of every step" "$st"

# Each process sends the servers the part of the gradient its workers compute, not the zeros of
# the others' part, and gets back the new values of that part (worker 0.0 fetches all of them for
# its tests).  Rank 0 computes ip1's rows 0-31 of 64, rank 1 rows 32-63, and each all of ip2 (whose
# 10 outputs do not divide among 4 workers, so it is cut on the batch): per step 4 x (32 x 784 +
# 32 + 10 x 64 + 10) bytes each way, in 5 messages of a 56-byte header (ip1's weight spans both
# servers; rank 0's rows lie on the first, and the second hears that there is nothing).
st1="$tmp/mlp-feature-four.txt.stats1"
sed 's/^/# rank 1: /' "$st1"
part=$((50 * (4 * (32 * 784 + 32 + 10 * 64 + 10) + 5 * 56))) all=$((50 * (4 * (784 * 64 + 64 + 64 * 10 + 10) + 5 * 56)))
bytes() { # FILE TYPE COLUMN: the bytes of TYPE between the process and the servers (rank 2)
    awk -F'\t' -v t="$2" -v c="$3" '$1 == t && $2 ~ /^server .* \(rank 2\)$/ { b += $c } END { print b + 0 }' "$1"
}
u0=$(bytes "$st" update 5) v0=$(bytes "$st" update-reply 6) u1=$(bytes "$st1" update 5) v1=$(bytes "$st1" update-reply 6)
echo "# bytes to and from the servers in 50 steps: rank 0 $u0 and $v0, rank 1 $u1 and $v1 (a part $part, all $all)"
[ "$u0" = "$part" ] && [ "$u1" = "$part" ] && [ "$v0" = "$part" ] && [ "$v1" = "$part" ]
report $? "the MLP on the features, 2 processes of 2 workers: each process sends the servers only its part of the gradient, and gets its part back" "$st"

# Worker 0.0's tests at steps 0, 20 and 40 and the final one see the whole model, though its
# process keeps only its part fresh while it trains: the test loss of one worker each time.
awk -F, '$2 == "test" { if (FNR == NR) ref[$1] = $4; else { n++; d = ($4 - ref[$1]) / ref[$1]; d = d < 0 ? -d : d
        if (!($1 in ref) || d > 1e-4) bad++ } }
    END { printf "# %d tests, %d off\n", n, bad; exit !(n == 4 && !bad) }' "$tmp/mlp-ref.csv" "$tmp/mlp-feature-four.csv"
report $? "the MLP on the features, 2 processes of 2 workers: worker 0.0's tests see the whole model" "$tmp/mlp-feature-four.csv"

# r.profile in rank 0 times every worker's parts, those of rank 1's workers (2 and 3) too, which
# rank 1 sends at the end.
pf=$tmp/mlp-feature-four.txt.profile
sed 's/^/# /' "$pf"
awk -F'\t' '$3 == "kInnerProduct" && $4 > 0 && $5 > 0 { n[$1]++ } END { exit !(n[0] && n[1] && n[2] && n[3]) }' "$pf"
report $? "the MLP on the features, 2 processes of 2 workers: rank 0's r.profile times the parts of all 4 workers" "$pf"

# Every process's script sees the final params, which rank 0 hands the others at the end.
p=$tmp/mlp-feature-four.txt
cmp "$p" "$p.rank1" && cmp "$p" "$p.rank2"
report $? "the MLP on the features, 3 processes: each one's result holds the final params" "$p"

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
[ $rc -ne 0 ] && [ $took -le 8 ] && grep -q 'rank 1 (workers 0.1; servers 0.1) at tcp://127.0.0.1:[0-9]* died: its connection closed' "$out"
report $? "rank 1 of a cut group killed: rank 0 ends within 8 s, naming it" "$out"

[ "$failed" -eq 0 ] && rm -rf "$tmp"
done_testing

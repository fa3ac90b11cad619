# A param's round trip between processes without copies (src/runtime/msg.h: frames passed on,
# buffers lent): Sandblaster with the worker in rank 0 and the server in rank 1, and AllReduce
# over 2 processes, end with exactly the params of one worker, and each process counts every
# update and answer once, with its bytes, on the rows of the peers it went between.  The net's
# params come as frames above and below ZeroMQ's 8 KB batch (a lone update in a small frame may
# be unaligned and is summed; a big one is applied in place).  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8500-dist-zerocopy.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

steps=200
cat >"$tmp/job.lua" <<'EOF'
-- job.lua MODE OUT STEPS: trains on the test's data with the cluster of MODE; rank 0 writes every
-- param value to OUT, and every rank writes its own traffic rows to OUT.rank<r>.
local singa = require "singa"
local td = require "testdata"
local mode, out, steps = arg[1], arg[2], tonumber(arg[3])
local dir = out:match("^(.*)/")
local clusters = {
  sandblaster = singa.cluster.sandblaster{ workers = 1, servers = 1, procs = 2 },
  allreduce = singa.cluster.allreduce{ workers = 2, procs = 2 },
}
local cluster = clusters[mode]
if cluster then cluster.workspace = dir .. "/ws-" .. mode end
local r = singa.train{
  name = "zerocopy", seed = 3, train_steps = steps, disp_freq = 0, test_steps = 0,
  cluster = cluster,
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = td.mlp(dir .. "/data/images-idx3-ubyte", dir .. "/data/labels-idx1-ubyte", 200),
}
local rank = singa.rank()
if rank == 0 then
  local f = assert(io.open(out, "w"))
  td.write_params(f, r.params)
  f:write(string.format("dropped %d\n", r.stats.dropped))
  f:close()
end
local f = assert(io.open(out .. ".rank" .. rank, "w"))
for _, t in ipairs(r.stats.traffic) do
  if t.rank == rank then
    f:write(string.format("%s|%s|%d|%d|%d|%d\n", t.type, t.peer, t.sent, t.received, t.bytes_sent, t.bytes_received))
  end
end
f:close()
EOF

gen_data

timeout 120 "$SINGA_TUI" -e "$tmp/job.lua" plain "$tmp/plain.txt" $steps >"$tmp/plain.out" 2>&1
report $? "one worker trains $steps steps (the reference)" "$tmp/plain.out"

exact() { params_close "$1" "$tmp/plain.txt" && grep -qx 'dropped 0' "$1"; }

# row FILE TYPE PEER: "sent received bytes_sent bytes_received" of that row (empty: none)
row() {
    awk -F'|' -v t="$2" -v p="$3" '$1 == t && $2 == p { print $3, $4, $5, $6 }' "$1"
}

for mode in sandblaster allreduce; do
    timeout 120 "$SINGA_TUI" --procs 2 -e "$tmp/job.lua" $mode "$tmp/$mode.txt" $steps >"$tmp/$mode.out" 2>&1
    report $? "--procs 2: $mode trains $steps steps" "$tmp/$mode.out"
    exact "$tmp/$mode.txt"
    report $? "$mode in 2 processes ends with the params of one worker, nothing dropped" "$tmp/$mode.out"
done

# Sandblaster, the server alone in rank 1: per step 4 updates (fc1 and fc2, weights and biases)
# and 4 answers, each a 56-byte header and its values; 4 x (144 x 200 + 200 + 200 x 10 + 10) bytes.
count=$((4 * steps)) bytes=$((4 * steps * 56 + steps * 4 * (144 * 200 + 200 + 200 * 10 + 10)))
r0=$tmp/sandblaster.txt.rank0 r1=$tmp/sandblaster.txt.rank1
: >"$tmp/rows.out"
check_row() { # FILE TYPE PEER EXPECTED
    got=$(row "$1" "$2" "$3")
    echo "$1: $2 / $3: '$got', expected '$4'" >>"$tmp/rows.out"
    [ "$got" = "$4" ]
}
check_row "$r0" update "server 0.0 (rank 1)" "$count 0 $bytes 0" &&
    check_row "$r0" update-reply "server 0.0 (rank 1)" "0 $count 0 $bytes"
report $? "rank 0 counts every update sent and answer received, with its bytes ($count, $bytes)" "$tmp/rows.out"
check_row "$r1" update "rank 0" "0 $count 0 $bytes" && check_row "$r1" update "server 0.0" "$count 0 $bytes 0" &&
    check_row "$r1" update-reply "server 0.0" "0 $count 0 $bytes" &&
    check_row "$r1" update-reply "rank 0" "$count 0 $bytes 0"
report $? "rank 1's stub counts each update and answer it passes on, in and out, with its bytes" "$tmp/rows.out"

done_testing

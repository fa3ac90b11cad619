# Placement of the servers' slices: a net cut on the features over 2 processes has each
# process's part of every param (and its updater state) served in that process, so only empty
# words go between processes to the servers, and rank 0's log says so with the bytes a step
# moves; data-parallel, a net cut partly on the batch, and servers in a process of their own say
# what they move instead.  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
. "$top_srcdir/t/tap.sh"
tmp=t/8720-placement.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/procs.sh"
trap 'kill_ours' EXIT
gen_data

cat >"$tmp/job.lua" <<'LUA'
-- job.lua DATA WS DIM [separate|mixed]: an MLP 144-32-10 over 2 processes, the net cut on DIM
-- (mixed: ip1 on the batch); rank r writes WS/updates<r>: per update row with a server in the
-- other process, its bytes per message, then the bytes per message of the requests for values.
local singa = require "singa"
local data, ws, dim, extra = arg[1], arg[2], tonumber(arg[3]), arg[4]
local cluster = singa.cluster.allreduce{ workers = 2, procs = 2, workspace = ws }
if extra == "separate" then
  cluster = { nworkers_per_group = 2, nservers_per_group = 1, server_worker_separate = true, workspace = ws }
end
local r = singa.train{
  name = "place", seed = 3, train_steps = 20, disp_freq = 1, cluster = cluster,
  neuralnet = { partition_dim = dim, layer = {
    { name = "data", type = "kIDXData", batchsize = 32, partition_dim = 0,
      images = data .. "/images-idx3-ubyte", labels = data .. "/labels-idx1-ubyte" },
    { name = "mnist", type = "kMnist", srclayer = "data", norm_a = 255, partition_dim = 0 },
    { name = "label", type = "kLabel", srclayer = "data", partition_dim = 0 },
    { name = "ip1", type = "kInnerProduct", srclayer = "mnist", num_output = 32,
      partition_dim = extra == "mixed" and 0 or nil },
    { name = "relu1", type = "kReLU", srclayer = "ip1" },
    { name = "out", type = "kInnerProduct", srclayer = "relu1", num_output = 10 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "out", "label" }, partition_dim = 0 },
  } },
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.01 } },
}
for _, l in ipairs(r.stats.links) do
  print(string.format("link %d %d %d %d %d %.0f", l.rank, l.peer, l.bytes_sent, l.bytes_received, l.steps,
                      l.bytes_per_step or -1)) -- none in a process that hears of no step
end
local f = assert(io.open(ws .. "/updates" .. singa.rank(), "w"))
local get
for _, t in ipairs(r.stats.traffic) do
  if t.peer:find("^server .*%(rank") and t.sent > 0 then
    if t.type == "update" then f:write(t.bytes_sent / t.sent, "\n") end
    if t.type == "get" then get = t.bytes_sent / t.sent end
  end
end
f:write("get ", get or "none", "\n")
f:close()
LUA

# run NAME DIM [EXTRA]: the job over 2 processes (3 with separate servers); rank 0's log line on
# placement in $tmp/NAME.place
run() {
    mkdir -p "$tmp/$1"
    timeout 60 "$SINGA_TUI" --procs $([ "${3:-}" = separate ] && echo 3 || echo 2) \
        -e "$tmp/job.lua" "$tmp/data" "$tmp/$1" "$2" "${3:-}" >"$tmp/$1.out" 2>&1 &&
        sed -n 's/.*\(placement: .*\)/\1/p' "$tmp/$1/rank0.log" >"$tmp/$1.place" && cat "$tmp/$1.place" >>"$tmp/$1.out"
}

# The ip1 and out params: 144 * 32 + 32 + 32 * 10 + 10 = 4970 floats.  Data-parallel, each process
# sends the half of each gradient the other's server holds, and gets its values back: 2 * 2 *
# 2485 * 4 bytes a step.
run batch 0 && grep -qx 'placement: 0.04 MB of gradients and values cross between processes to the servers a step' "$tmp/batch.place"
report $? "data-parallel over 2 processes: the log says 0.04 MB cross to the servers a step" "$tmp/batch.out"
# singa.stats().links: each rank's bytes to and from the other, per step over its 20 steps: the
# 39760 bytes of gradients and values, and the headers, the first values and the last.
awk '$1 == "link" { n++; if ($3 != 1 - $2 || $6 != 20 || $7 < 39760 || $7 > 1.5 * 39760) bad = 1 }
     END { exit !(n == 2 && !bad) }' "$tmp/batch.out"
report $? "... and singa.stats().links gives each rank's bytes a step to the other, 1 to 1.5x that" "$tmp/batch.out"

run feature 1 &&
    grep -qx "placement: each process's part of every param lies with a server in that process: 0.00 MB of gradients and values cross between processes to the servers a step" "$tmp/feature.place"
report $? "cut on the features: every param's parts lie with the servers of their processes, 0 MB a step" "$tmp/feature.out"

# What its updates to the other process's server carry: the header alone, as a request for values.
for r in 0 1; do echo "# rank $r: bytes per update message to the other's server, then per get: $(tr '\n' ' ' <"$tmp/feature/updates$r")"; done
ok=0
for r in 0 1; do
    get=$(sed -n 's/^get //p' "$tmp/feature/updates$r")
    [ "$(grep -vc '^get' "$tmp/feature/updates$r")" -ge 1 ] && [ "$get" != none ] &&
        [ -z "$(grep -v '^get' "$tmp/feature/updates$r" | grep -vx "$get")" ] || ok=1
done
report $ok "... and its updates to the other process's server carry no values: no more bytes than a request for values"

run mixed 1 mixed &&
    grep -q "placement: the parts of 2 of 4 params lie with a server in the process computing them (the others are computed whole in several processes): 0.0[1-9] MB" "$tmp/mixed.place"
report $? "ip1 on the batch, out on the features: out's parts are placed, ip1's move" "$tmp/mixed.out"

run separate 1 separate &&
    grep -q "placement: the servers cannot lie with the parts of the cut net (a process computing a part holds no server): 0.0[1-9] MB" "$tmp/separate.place"
report $? "servers in a process of their own: the log says they cannot lie with the parts, and what moves" "$tmp/separate.out"

done_testing

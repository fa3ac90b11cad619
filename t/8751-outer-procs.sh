# cluster.outer over 2 Hogwild processes: the rounds make a run independent of timing and of
# where the groups live, so 2 processes end with the params of the same job in one process bit for
# bit; with compress = "fp16" the deltas cross as halves (half the sync bytes), the groups still
# end with the same values (both shards of the final checkpoint), near the float32 run's params.
# Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8751-outer-procs.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
tmp=$(cd "$tmp" && pwd)
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

cat >"$tmp/job.lua" <<'EOF'
-- job.lua PROCS COMPRESS OUT: Hogwild, 2 groups syncing every 5 updates with an outer kNesterov,
-- 20 steps, in PROCS processes, cluster.compress COMPRESS (none, fp16); rank 0 writes the params
-- to OUT and the sync bytes it sent to rank 1 to OUT.bytes; checkpoints in OUT.ck.
local singa = require "singa"
local td = require "testdata"
local procs, mode, out = tonumber(arg[1]), arg[2], arg[3]
local dir = out:match("^(.*)/")
local r = singa.train{
  name = "outer", seed = 7, train_steps = 20, disp_freq = 0, checkpoint_path = out .. ".ck", checkpoint_freq = 20,
  cluster = singa.cluster.hogwild{ groups = 2, procs = procs, sync_freq = 5, compress = mode ~= "none" and mode or nil,
    outer = { type = "kNesterov", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.7 } } },
  updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = td.mlp(dir .. "/data/images-idx3-ubyte", dir .. "/data/labels-idx1-ubyte"),
}
if singa.rank() == 0 and r.params then
  local f = assert(io.open(out, "w"))
  td.write_params(f, r.params)
  f:close()
  local sync = 0
  for _, row in ipairs(r.stats.traffic) do
    if row.peer:match("%(rank 1%)") and row.type == "sync" then sync = sync + row.bytes_sent end
  end
  f = assert(io.open(out .. ".bytes", "w"))
  f:write(string.format("sync %d\n", sync))
  f:close()
end
EOF

cat >"$tmp/agree.lua" <<'EOF'
-- agree.lua DIR: both server groups' shards of step 20 hold the same values.
local td = require "testdata"
local a = td.read_ckpt(arg[1] .. "/step000000020.s0.0.ckpt") or {}
local b = td.read_ckpt(arg[1] .. "/step000000020.s1.0.ckpt") or {}
local n = 0
for name, v in pairs(a) do
  if name:match("^param/") then
    n = n + 1
    for i = 1, #v do if not b[name] or v[i] ~= b[name][i] then os.exit(1) end end
  end
end
os.exit(n == 4 and 0 or 1)
EOF

# run NAME PROCS COMPRESS: NAME.txt, NAME.txt.bytes, NAME.txt.ck/, NAME.out
run() {
    p=
    [ "$2" -gt 1 ] && p="--procs $2"
    timeout 60 "$SINGA_TUI" $p -e "$tmp/job.lua" "$2" "$3" "$tmp/$1.txt" >"$tmp/$1.out" 2>&1
}
sync_bytes() { awk '$1 == "sync" { print $2 }' "$tmp/$1.txt.bytes"; }

gen_data

run one 1 none
report $? "one process, 2 server groups with an outer kNesterov: 20 steps" "$tmp/one.out"
run two 2 none && cmp -s "$tmp/one.txt" "$tmp/two.txt"
report $? "2 processes: the params of the one-process run bit for bit" "$tmp/two.out"
run fp16 2 fp16
report $? "2 processes, compress = fp16" "$tmp/fp16.out"
a=$(sync_bytes fp16) b=$(sync_bytes two)
echo "# sync bytes to rank 1: fp16 $a, float32 $b"
awk -v a="$a" -v b="$b" 'BEGIN { exit !(a > 0 && b > 0 && a <= 0.55 * b) }'
report $? "fp16: the deltas take half the sync bytes"
timeout 30 "$SINGA_TUI" -e "$tmp/agree.lua" "$tmp/fp16.txt.ck"
report $? "fp16: both groups end with the same values bit for bit"
d=$(timeout 30 "$SINGA_TUI" -e "$top_srcdir/t/paramdiff.lua" "$tmp/fp16.txt" "$tmp/two.txt" 2>&1)
echo "# relative difference to float32 deltas $d"
awk -v d="$d" 'BEGIN { exit !(d + 0 == d && d > 0 && d < 1e-3) }'
report $? "fp16: near the float32 run's params, not the same"

done_testing

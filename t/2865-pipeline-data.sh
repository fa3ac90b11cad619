# A pipeline's micro-batch copies read the data set once (neuralnet.micro_batches): with
# micro_batches = 4 each input layer type that can sit in a pipeline (kIDXData, kCSVInput,
# kShardData, kRecordInput, kRGBImage) opens its data file as often as with micro_batches = 1
# (strace counts the opens; before, every copy loaded the whole set again), and the losses of 10
# steps are the same (to 1e-4 relative), shuffled where the layer shuffles.  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/2865-pipeline-data.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

if ! command -v strace >/dev/null || ! strace -f -e trace=openat -o /dev/null true 2>/dev/null; then
    echo "1..0 # SKIP strace is missing or not allowed here"
    exit 0
fi

cat >"$tmp/data.lua" <<'LUA'
-- data.lua DIR: the IDX set as testdata writes it, and the same records as CSV text, a v0.1
-- DataShard, a v0.3 KVFile; and a CIFAR-10 format file.
local td, sh = require "testdata", require "shard"
local dir = arg[1]
local img, lab = td.idx(dir, 480, 10, 12, 12, 4242)
sh.from_idx("v01", img, lab, dir .. "/shard")
sh.from_idx("v03", img, lab, dir .. "/kv.bin")
local s, l = td.read(img), td.read(lab)
local csv = assert(io.open(dir .. "/data.csv", "w"))
for i = 0, 479 do
  local row = { l:byte(9 + i) }
  for k = 1, 144 do row[#row + 1] = s:byte(16 + i * 144 + k) end
  csv:write(table.concat(row, ","), "\n")
end
csv:close()
local rgb, x = {}, 7
for i = 0, 95 do
  local rec = { string.char(i % 10) }
  for _ = 1, 3072 do x = (x * 1103515245 + 12345) % 2147483648; rec[#rec + 1] = string.char(x // 8388608) end
  rgb[#rgb + 1] = table.concat(rec)
end
td.write(dir .. "/rgb.bin", table.concat(rgb))
LUA

cat >"$tmp/job.lua" <<'LUA'
-- job.lua DIR TYPE MICRO: an MLP over input layer TYPE, cut by location over 2 workers (fc2 and
-- the loss on worker 1), neuralnet.micro_batches = MICRO, 10 steps.
local singa = require "singa"
local dir, kind, micro = arg[1], arg[2], tonumber(arg[3])
local data = ({
  idx = { type = "kIDXData", images = dir .. "/images-idx3-ubyte", labels = dir .. "/labels-idx1-ubyte", shuffle = true },
  csv = { type = "kCSVInput", path = dir .. "/data.csv", shuffle = true },
  shard = { type = "kShardData", path = dir .. "/shard" },
  kv = { type = "kRecordInput", backend = "kvfile", path = dir .. "/kv.bin" },
  rgb = { type = "kRGBImage", path = dir .. "/rgb.bin", shuffle = true, scale = 1 / 255 },
})[kind]
data.name, data.batchsize = "data", 24
local parsed = (kind == "shard" or kind == "kv") and "image" or "data"
local net = { micro_batches = micro, layer = {
  data,
  { name = "label", type = "kLabel", srclayer = "data" },
  { name = "fc1", type = "kInnerProduct", srclayer = parsed, num_output = 20 },
  { name = "act", type = "kTanh", srclayer = "fc1" },
  { name = "fc2", type = "kInnerProduct", srclayer = "act", num_output = 10, location = 1 },
  { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc2", "label" }, location = 1 },
} }
if parsed == "image" then table.insert(net.layer, 2, { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 }) end
singa.train{
  name = "pipe-data", seed = 7, train_steps = 10, disp_freq = 1, neuralnet = net,
  cluster = singa.cluster.sandblaster{ workers = 2, servers = 1 },
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.05 } },
}
LUA

timeout 60 "$SINGA_TUI" -e "$tmp/data.lua" "$tmp" >"$tmp/gen.out" 2>&1
report $? "the data written as IDX, CSV, DataShard, KVFile and CIFAR-10 files" "$tmp/gen.out"

# run TYPE MICRO FILE: the job under strace; prints how often FILE was opened.
run() {
    # LeakSanitizer cannot run under ptrace (make check-asan).
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" timeout 120 strace -f -qq -e trace=openat,open -o "$tmp/$1-$2.strace" \
        "$SINGA_TUI" --metrics "$tmp/$1-$2.csv" -e "$tmp/job.lua" "$tmp" "$1" "$2" >"$tmp/$1-$2.out" 2>&1 &&
        grep -c "\"$tmp/$3\"" "$tmp/$1-$2.strace"
}
# losses_same TYPE: micro_batches = 4's train loss at each of the 10 steps is micro_batches = 1's.
losses_same() {
    awk -F, 'FNR == 1 { file++ } $2 == "train" { if (file == 1) ref[$1] = $4; else got[$1] = $4 }
        END { worst = 0; n = 0
              for (s in ref) { n++; if (!(s in got)) { worst = 1; break }
                  d = (got[s] - ref[s]) / ref[s]; if (d < 0) d = -d; if (d > worst) worst = d }
              printf "# %d steps, worst relative loss difference %.2g\n", n, worst
              exit !(n == 10 && worst <= 1e-4) }' "$tmp/$1-1.csv" "$tmp/$1-4.csv"
}

for t in "idx kIDXData images-idx3-ubyte" "csv kCSVInput data.csv" "shard kShardData shard/shard.dat" \
         "kv kRecordInput kv.bin" "rgb kRGBImage rgb.bin"; do
    set -- $t
    one=$(run "$1" 1 "$3") && four=$(run "$1" 4 "$3")
    rc=$?
    echo "# $2: the file opened $one times with micro_batches = 1, $four with 4"
    [ $rc -eq 0 ] && [ "$one" -ge 1 ] && [ "$four" = "$one" ]
    report $? "$2, micro_batches = 4: its data file read as often as with 1 (once per net, not per micro-batch)" "$tmp/$1-4.out"
    losses_same "$1"
    report $? "$2, micro_batches = 4: the losses of micro_batches = 1" "$tmp/$1-4.out"
done

done_testing

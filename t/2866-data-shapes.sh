# A net built only for its layers' shapes (the graph of a cut net, a plan's candidates, --dot)
# loads no data set: a job cut by location over 2 workers (micro_batches unset, and 1) reads the
# IDX images file once, as the uncut job does (strace totals the bytes read from it: before, the
# graph's whole net read the set a second time), and --dot reads only its header (kIDXData) or
# first line (kCSVInput).  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/2866-data-shapes.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"

if ! command -v strace >/dev/null || ! strace -f -y -e trace=read -o /dev/null true 2>/dev/null; then
    echo "1..0 # SKIP strace is missing or not allowed here"
    exit 0
fi

cat >"$tmp/job.lua" <<'LUA'
-- job.lua DIR CUT MICRO: an MLP over kIDXData; CUT "cut": fc2 and the loss on worker 1 of 2, the rest on 0;
-- MICRO "-": micro_batches unset; MICRO "csv": kCSVInput reads DIR/data.csv.  With CUT "gen":
-- writes the data set (480 records), as IDX files and as CSV text.
local singa, td = require "singa", require "testdata"
local dir, cut, micro = arg[1], arg[2] == "cut", tonumber(arg[3])
if arg[2] == "gen" then
  local img, lab = td.idx(dir, 480, 10, 12, 12, 4242)
  local px, l, csv = td.read(img), td.read(lab), assert(io.open(dir .. "/data.csv", "w"))
  for i = 0, 479 do
    local row = { l:byte(9 + i) }
    for k = 1, 144 do row[#row + 1] = px:byte(16 + i * 144 + k) end
    csv:write(table.concat(row, ","), "\n")
  end
  return csv:close()
end
local at, home = cut and 1 or nil, cut and 0 or nil
singa.train{
  name = "shapes", seed = 7, train_steps = 10, disp_freq = 1,
  cluster = singa.cluster.sandblaster{ workers = cut and 2 or 1, servers = 1 },
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = { micro_batches = micro, layer = {
    arg[3] == "csv" and { name = "data", type = "kCSVInput", path = dir .. "/data.csv", batchsize = 24, location = home } or
    { name = "data", type = "kIDXData", images = dir .. "/images-idx3-ubyte", labels = dir .. "/labels-idx1-ubyte",
      batchsize = 24, shuffle = true, location = home },
    { name = "label", type = "kLabel", srclayer = "data", location = home },
    { name = "fc1", type = "kInnerProduct", srclayer = "data", num_output = 20, location = home },
    { name = "act", type = "kTanh", srclayer = "fc1", location = home },
    { name = "fc2", type = "kInnerProduct", srclayer = "act", num_output = 10, location = at },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc2", "label" }, location = at },
  } },
}
LUA

timeout 60 "$SINGA_TUI" -e "$tmp/job.lua" "$tmp" gen >"$tmp/gen.out" 2>&1
report $? "the IDX data set written" "$tmp/gen.out"

# bytes NAME [OPTION...] -- ARGS: singa-tui under strace; prints the bytes it read from the images file.
bytes() {
    local name=$1 opts=()
    shift
    while [ "$1" != -- ]; do opts+=("$1"); shift; done
    shift
    # LeakSanitizer cannot run under ptrace (make check-asan).
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" timeout 60 strace -f -qq -y -e trace=read -o "$tmp/$name.strace" \
        "$SINGA_TUI" "${opts[@]}" "$tmp/job.lua" "$tmp" "$@" >"$tmp/$name.out" 2>&1 &&
        awk -v f="${file:-images-idx3-ubyte}" 'index($0, "/" f ">") && /^[0-9]+ +read\(/ && $NF ~ /^[0-9]+$/ { n += $NF } END { print n + 0 }' "$tmp/$name.strace"
}
size=$(wc -c <"$tmp/images-idx3-ubyte")

for t in "whole uncut -" "cut cut -" "cut1 cut 1"; do
    set -- $t
    got=$(bytes "$1" --metrics "$tmp/$1.csv" -e -- "$2" "$3")
    rc=$?
    echo "# $2 net, micro_batches $3: read $got bytes of the $size-byte images file"
    [ $rc -eq 0 ] && [ "$got" -ge "$size" ] && [ "$got" -lt $((size * 3 / 2)) ]
    report $? "$2 net, micro_batches $3: the images file read once" "$tmp/$1.out"
done

# --dot builds the graph only: the file's header is all it needs.
got=$(bytes dot --dot -- cut -)
rc=$?
echo "# --dot: read $got bytes of the $size-byte images file"
[ $rc -eq 0 ] && [ "$got" -lt $((size / 2)) ]
report $? "--dot reads the images file's header, not its records" "$tmp/dot.out"

size=$(wc -c <"$tmp/data.csv")
got=$(file=data.csv bytes dot-csv --dot -- cut csv)
rc=$?
echo "# --dot over kCSVInput: read $got bytes of the $size-byte CSV file"
[ $rc -eq 0 ] && [ "$got" -lt $((size / 2)) ]
report $? "--dot over kCSVInput reads the CSV file's first line, not its records" "$tmp/dot-csv.out"

done_testing

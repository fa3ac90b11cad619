# The singa-tui command line: help, version, exit codes, error reports, arg, --metrics.
# Run by `make check` with SINGA_TUI (the program) and top_srcdir set; prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
tmp=t/3100-cli.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1

. "$top_srcdir/t/tap.sh"
# run ARGS...: runs singa-tui with a hard timeout; stdout in $tmp/out, stderr in $tmp/err, status in $rc.
run() {
    timeout 60 "$SINGA_TUI" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

# --help, --version, no arguments
run --help
report $rc "--help exits 0"
grep -q -- '-e FILE' "$tmp/out" && grep -- '-e FILE' "$tmp/out" | grep -qi 'run'
report $? "--help says that -e runs a FILE" "$tmp/out"
grep -q -- '--metrics' "$tmp/out"
report $? "--help mentions --metrics" "$tmp/out"

version=$(sed -n 's/^AC_INIT(\[singa-tui\], *\[\([^]]*\)\].*/\1/p' "$top_srcdir/configure.ac")
run --version
[ $rc -eq 0 ] && [ -n "$version" ] && grep -q "singa-tui $version" "$tmp/out"
report $? "--version exits 0 and prints 'singa-tui $version'" "$tmp/out"
# OpenBLAS falls back to its SSE3 kernels (Prescott) on a CPU newer than its tables: singa-tui
# then starts again with the kernels the CPU can run, unless the user chose some.
grep -q '^flags.* avx2 .*' /proc/cpuinfo && grep -q '^flags.* fma ' /proc/cpuinfo && generic=yes || generic=
(env -u OPENBLAS_CORETYPE "$SINGA_TUI" --version) >"$tmp/core.out" 2>&1
core=$(sed -n 's/.*OpenBLAS \([A-Za-z0-9]*\))$/\1/p' "$tmp/core.out")
[ -n "$core" ] && { [ -z "$generic" ] || ! echo "$core" | grep -qix 'prescott\|core2\|penryn\|dunnington\|nehalem\|atom\|sandybridge\|unknown'; }
report $? "--version names OpenBLAS's kernels ($core), not generic ones on a CPU with AVX2" "$tmp/core.out"
OPENBLAS_CORETYPE=Prescott "$SINGA_TUI" --version >"$tmp/core.out" 2>&1
grep -q 'OpenBLAS Prescott)$' "$tmp/core.out"
report $? "the kernels a user set with OPENBLAS_CORETYPE are kept" "$tmp/core.out"

run
[ $rc -ne 0 ] && grep -q 'usage' "$tmp/err"
report $? "no arguments: non-zero exit and usage on stderr" "$tmp/err"

run --no-such-option
[ $rc -ne 0 ] && grep -q -- '--no-such-option' "$tmp/err"
report $? "an unknown option is refused by name" "$tmp/err"

run -e
[ $rc -ne 0 ]
report $? "-e without a file exits non-zero"

run -e "$tmp/does-not-exist.lua"
[ $rc -ne 0 ] && grep -q 'does-not-exist.lua' "$tmp/err"
report $? "a missing script exits non-zero naming it" "$tmp/err"

# Script errors
cat >"$tmp/lua-error.lua" <<'EOF'
local t = nil

local y = t.field
EOF
run -e "$tmp/lua-error.lua"
[ $rc -ne 0 ]
report $? "a Lua error exits non-zero"
grep -q 'lua-error.lua:3:' "$tmp/err"
report $? "the Lua error shows file:line" "$tmp/err"
grep -q 'stack traceback' "$tmp/err"
report $? "the Lua error shows a stack traceback" "$tmp/err"

printf 'local x = = 1\n' >"$tmp/syntax.lua"
run -e "$tmp/syntax.lua"
[ $rc -ne 0 ] && grep -q 'syntax.lua:1:' "$tmp/err"
report $? "a syntax error exits non-zero with file:line" "$tmp/err"

printf 'error({ code = 1 })\n' >"$tmp/table-error.lua"
run -e "$tmp/table-error.lua"
[ $rc -ne 0 ] && [ -s "$tmp/err" ]
report $? "an error with a non-string value exits non-zero with a message" "$tmp/err"

printf 'os.exit(3)\n' >"$tmp/exit3.lua"
run -e "$tmp/exit3.lua"
[ $rc -eq 3 ]
report $? "os.exit(3) gives exit status 3 (got $rc)"

cat >"$tmp/bad-job.lua" <<'EOF'
local singa = require "singa"

-- a typo in a job field
singa.train{ train_step = 5 }
EOF
run -e "$tmp/bad-job.lua"
[ $rc -ne 0 ]
report $? "a script whose job is bad exits non-zero"
grep -q 'bad-job.lua:4:.*train_step' "$tmp/err"
report $? "the job error names the script line and the field" "$tmp/err"
grep -q "did you mean 'train_steps'" "$tmp/err"
report $? "the job error carries the suggestion" "$tmp/err"

# arg
cat >"$tmp/args.lua" <<'EOF'
local a, b = ...
print(string.format("arg0=%s arg1=%s arg2=%s n=%d dots=%s,%s", arg[0], arg[1], arg[2], #arg, a, b))
EOF
run -e "$tmp/args.lua" a "b c"
[ $rc -eq 0 ] && grep -q "arg0=$tmp/args.lua arg1=a arg2=b c n=2 dots=a,b c" "$tmp/out"
report $? "the script sees arg[0], arg[1], arg[2] and ..." "$tmp/out"

run -e "$tmp/args.lua" --metrics x.csv
[ $rc -eq 0 ] && grep -q "arg1=--metrics arg2=x.csv" "$tmp/out" && [ ! -e x.csv ]
report $? "options after the script belong to the script" "$tmp/out"

# --metrics
cat >"$tmp/job.lua" <<'EOF'
-- 20 steps: train records at steps 0, 5, 10, 15; test records at 0, 10 and the final test at 20.
local singa = require "singa"
local td = require "testdata"
local dir = assert(arg[1])
local img, lab = td.idx(dir, 64, 4)
local lr = tonumber(arg[2] or "0.1")
local euclid = arg[3] == "euclid"
local layers = {
  { name = "data", type = "kIDXData", batchsize = 8, images = img, labels = lab },
  { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
  { name = "label", type = "kLabel", srclayer = "data" },
  { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 4 },
  { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc1", "label" } },
}
if euclid then
  layers[3] = { name = "fc0", type = "kInnerProduct", srclayer = "image", num_output = 4 }
  layers[5] = { name = "loss", type = "kEuclideanLoss", srclayer = { "fc1", "fc0" } }
end
local r = singa.train{ seed = 1, train_steps = 20, disp_freq = 5, test_freq = 10, test_steps = 2,
  stop_on_nonfinite = not euclid, updater = { learning_rate = { base_lr = lr } }, neuralnet = { layer = layers } }
print(string.format("final loss %.17g", r.train.loss))
EOF
run --metrics "$tmp/m.csv" -e "$tmp/job.lua" "$tmp/data"
report $rc "a job run with --metrics FILE.csv succeeds" "$tmp/err"
[ "$(head -n 1 "$tmp/m.csv")" = "step,phase,group,loss,accuracy,images_per_sec,seconds" ]
report $? "the CSV starts with its header" "$tmp/m.csv"
[ "$(grep -c ',train,' "$tmp/m.csv")" -eq 4 ] && [ "$(grep -c ',test,' "$tmp/m.csv")" -eq 3 ] &&
    [ "$(wc -l <"$tmp/m.csv")" -eq 8 ]
report $? "the CSV holds 4 train and 3 test records" "$tmp/m.csv"
awk -F, 'NR > 1 && (NF != 7 || $1 !~ /^[0-9]+$/ || $4 !~ /^[0-9.e+-]+$/) { bad = 1 } END { exit bad }' "$tmp/m.csv"
report $? "every CSV record has 7 fields, an integer step and a numeric loss" "$tmp/m.csv"
grep -q '^15,train,0,' "$tmp/m.csv" && grep -q '^20,test,0,' "$tmp/m.csv"
report $? "the CSV records carry their steps" "$tmp/m.csv"
if LC_ALL=C grep -q "$(printf '\033')" "$tmp/out"; then false; else true; fi
report $? "no progress-line escapes when stdout is not a terminal" "$tmp/out"

run --metrics "$tmp/m.jsonl" -e "$tmp/job.lua" "$tmp/data"
report $rc "a job run with --metrics FILE.jsonl succeeds" "$tmp/err"
[ "$(wc -l <"$tmp/m.jsonl")" -eq 7 ] && [ "$(grep -c '^{.*}$' "$tmp/m.jsonl")" -eq 7 ]
report $? "the JSON lines file holds 7 one-line objects" "$tmp/m.jsonl"
if command -v python3 >/dev/null 2>&1 && python3 -c 'import json' 2>/dev/null; then
    python3 - "$tmp/m.jsonl" <<'EOF'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
assert all(set(r) >= {"step", "phase", "loss", "accuracy"} for r in rows), rows
assert [r["phase"] for r in rows].count("train") == 4, rows
assert all(isinstance(r["loss"], float) or isinstance(r["loss"], int) for r in rows), rows
EOF
    report $? "every JSON line parses (python3 json.loads) with step, phase, loss and accuracy" "$tmp/m.jsonl"
else
    grep -q '"step": 15, "phase": "train"' "$tmp/m.jsonl"
    report $? "the JSON lines carry step and phase (python3 not available)" "$tmp/m.jsonl"
fi

# A diverging run told to go on (stop_on_nonfinite = false): losses become NaN; the JSON must stay
# JSON (NaN is not a JSON number).
run --metrics "$tmp/nan.jsonl" -e "$tmp/job.lua" "$tmp/data" 1e30 euclid
report $rc "a diverging job with stop_on_nonfinite = false still runs to the end" "$tmp/err"
if command -v python3 >/dev/null 2>&1; then
    python3 -c '
import json, sys
for line in open(sys.argv[1]):
    json.loads(line)
' "$tmp/nan.jsonl" 2>"$tmp/py-err"
else
    ! grep -qi 'nan\|inf' "$tmp/nan.jsonl"
fi
report $? "--metrics JSON lines stay valid JSON when the loss is NaN" "$tmp/nan.jsonl"

run --metrics "$tmp/no/such/dir/m.csv" -e "$tmp/args.lua"
[ $rc -ne 0 ] && grep -q "$tmp/no/such/dir/m.csv" "$tmp/err"
report $? "an unwritable --metrics file is refused by name" "$tmp/err"

[ $failed -eq 0 ] && rm -rf "$tmp"
done_testing

# Every record --metrics writes (train, test, validation; JSON lines and CSV; one process and a
# --procs 2 job, whose records of rank 1 reach rank 0) carries "seconds": wall-clock seconds
# since training started, numeric and never decreasing down the file.  The first display record
# (step 0, a single warm-up step) has no images/s: null in the file, none on its line.  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/3125-metrics-seconds.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

gen_data
cat >"$tmp/job.lua" <<'EOF'
local singa = require "singa"
local td = require "testdata"
local dir = arg[1]
singa.train{
  name = "seconds", seed = 7, train_steps = 30, disp_freq = 10, test_freq = 10, test_steps = 2,
  validate_freq = 15, validate_steps = 1,
  cluster = arg[2] and singa.cluster.allreduce{ workers = 2, procs = 2 } or nil,
  updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = td.mlp(dir .. "/data/images-idx3-ubyte", dir .. "/data/labels-idx1-ubyte"),
}
EOF
abs=$(cd "$tmp" && pwd)

# seconds FILE: every record has a numeric seconds, none smaller than the one before, and there
# are train, test and validation records.
seconds() {
    awk '
        /"phase"/ {
            if (!match($0, /"seconds": [0-9.e+-]+[,}]/)) { print "no seconds: " $0; bad = 1; next }
            v = substr($0, RSTART + 11, RLENGTH - 12) + 0
            if (n++ && v < last) { print "seconds decrease: " $0; bad = 1 }
            last = v
            match($0, /"phase": "[a-z]*"/); seen[substr($0, RSTART + 10, RLENGTH - 11)] = 1
        }
        END { if (!seen["train"] || !seen["test"] || !seen["validation"]) { print "a phase is missing"; bad = 1 }
              exit bad }' "$1"
}

timeout 60 "$SINGA_TUI" --metrics "$tmp/m.jsonl" -e "$tmp/job.lua" "$abs" >"$tmp/out" 2>&1
report $? "a job with --metrics FILE.jsonl runs" "$tmp/out"
seconds "$tmp/m.jsonl" >"$tmp/why" 2>&1
report $? "every JSON record has a numeric, non-decreasing seconds" "$tmp/why"
grep -q '"step": 0, "phase": "train",.*"images_per_sec": null' "$tmp/m.jsonl" &&
    grep -q '"step": 10, "phase": "train",.*"images_per_sec": [0-9]' "$tmp/m.jsonl"
report $? "step 0's record (one warm-up step) has no images_per_sec, step 10's has" "$tmp/m.jsonl"
grep -q '^step 0 .*train .*loss' "$tmp/out" && ! grep -q '^step 0 .*train.*images/s' "$tmp/out" &&
    grep -q '^step 10 .*train.*images/s' "$tmp/out"
report $? "... and its line prints none" "$tmp/out"

timeout 60 "$SINGA_TUI" --metrics "$tmp/m.csv" -e "$tmp/job.lua" "$abs" >"$tmp/out" 2>&1
report $? "a job with --metrics FILE.csv runs" "$tmp/out"
[ "$(head -n 1 "$tmp/m.csv")" = "step,phase,group,loss,accuracy,images_per_sec,seconds" ] &&
    awk -F, 'NR > 1 { if (NF != 7 || $7 !~ /^[0-9.]+$/ || (NR > 2 && $7 < last)) bad = 1; last = $7 }
             END { exit bad }' "$tmp/m.csv"
report $? "the CSV's seconds column: numeric, non-decreasing" "$tmp/m.csv"

timeout 90 "$SINGA_TUI" --procs 2 --metrics "$tmp/p.jsonl" -e "$tmp/job.lua" "$abs" procs >"$tmp/procs.out" 2>&1
report $? "a --procs 2 job with --metrics runs" "$tmp/procs.out"
seconds "$tmp/p.jsonl" >"$tmp/why" 2>&1
report $? "every record of the 2-process job has a numeric, non-decreasing seconds" "$tmp/why"

[ $failed -eq 0 ] && rm -rf "$tmp"
done_testing

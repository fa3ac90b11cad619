# One model, any topology: a 2-worker, 2-server checkpoint resumes as a plain job, as 4 workers
# with 3 servers and as a feature-partitioned group, each with the loss of the run that went on
# (the first step and, the momentum carried, the second); an AllReduce checkpoint gives --test
# the run's own final test and singa.predict the outputs of the run's params; --ckpt-info,
# singa.load and --ckpt-gather read plain and distributed checkpoints; corrupt and mismatched
# checkpoints are refused naming the file, the param and both shapes.  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/4500-reshard.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
tmp=$(cd "$tmp" && pwd)
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

cat >"$tmp/job.lua" <<'EOF'
-- job.lua MODE OUT STEPS CKDIR fresh|resume FREQ [HIDDEN [INIT]]: trains with the cluster of
-- MODE, checkpointing to CKDIR every FREQ steps (a fresh run's params from checkpoint INIT);
-- rank 0 writes every param value to OUT.
local singa = require "singa"
local td = require "testdata"
local mode, out, steps, ckdir, resume, freq = arg[1], arg[2], tonumber(arg[3]), arg[4], arg[5] == "resume", tonumber(arg[6])
local dir = out:match("^(.*)/")
local clusters = {
  sb22 = singa.cluster.sandblaster{ workers = 2, servers = 2 },
  sb43 = singa.cluster.sandblaster{ workers = 4, servers = 3 },
  cut = singa.cluster.sandblaster{ workers = 2, servers = 2 },
  ar2 = singa.cluster.allreduce{ workers = 2 },
  procs = singa.cluster.sandblaster{ workers = 2, servers = 2, procs = 2 },
}
local net = td.mlp(dir .. "/data/images-idx3-ubyte", dir .. "/data/labels-idx1-ubyte", tonumber(arg[7]))
if mode == "cut" then net.partition_dim = 1 end
local r = singa.train{
  name = "reshard", seed = 7, train_steps = steps, disp_freq = 1, test_steps = 4,
  checkpoint_path = arg[8] and { ckdir, arg[8] } or ckdir, checkpoint_freq = freq, resume = resume,
  cluster = clusters[mode],
  updater = { type = "kSGD", momentum = 0.9, weight_decay = 1e-4,
              learning_rate = { type = "kStep", base_lr = 0.05, gamma = 0.5, change_freq = 20 } },
  neuralnet = net,
}
local rank = singa.rank()
if rank == 0 and r.params then
  local f = assert(io.open(out, "w"))
  td.write_params(f, r.params)
  f:close()
end
EOF

# run NAME MODE STEPS CKDIR fresh|resume FREQ [HIDDEN]: output in NAME.out, params in NAME.txt,
# records in NAME.csv.
run() {
    r_name=$1 r_mode=$2
    shift 2
    procs=
    [ "$r_mode" = procs ] && procs="--procs 2"
    timeout 120 "$SINGA_TUI" $procs --metrics "$tmp/$r_name.csv" -e "$tmp/job.lua" "$r_mode" "$tmp/$r_name.txt" "$@" \
        >"$tmp/$r_name.out" 2>&1
}
# losses NAME REF: NAME's train loss at steps 10 and 11 within 1e-5 relative of REF's.
losses() {
    awk -F, '
        FNR == 1 { file++ }
        $2 == "train" && ($1 == 10 || $1 == 11) { if (file == 1) ref[$1] = $4; else got[$1] = $4 }
        END {
            worst = 0
            for (s = 10; s <= 11; s++) { if (!(s in ref) || !(s in got)) exit 1
                d = (got[s] - ref[s]) / ref[s]; if (d < 0) d = -d; if (d > worst) worst = d }
            printf "# steps 10 and 11: worst relative loss difference %.2g\n", worst
            exit !(worst <= 1e-5)
        }' "$tmp/$2.csv" "$tmp/$1.csv"
}

gen_data

# 1. Resharding a 2-worker, 2-server checkpoint of step 10.
run ref sb22 12 "$tmp/ref" fresh 100
report $? "2 workers, 2 servers: 12 steps without a checkpoint (the reference)" "$tmp/ref.out"
run ck sb22 10 "$tmp/ck" fresh 10 && [ "$(ls "$tmp/ck" | wc -l)" -eq 4 ]
report $? "2 workers, 2 servers: 10 steps, a checkpoint of 4 files" "$tmp/ck.out"
for mode in plain sb43 cut; do
    cp -r "$tmp/ck" "$tmp/ck-$mode"
    # The servers' topology of a cut group is the checkpoint's: only its cursors are renamed.
    run "$mode" "$mode" 12 "$tmp/ck-$mode" resume 100 && grep -q "^resumed from .*step000000010\.\*\.ckpt (step 10)" "$tmp/$mode.out" &&
        { [ $mode = cut ] || grep -q "^resume: resharded .*step000000010\.\*\.ckpt" "$tmp/$mode.out"; } &&
        losses "$mode" ref >"$tmp/$mode.cmp" && params_close "$tmp/$mode.txt" "$tmp/ref.txt" >>"$tmp/$mode.cmp"
    r=$?
    cat "$tmp/$mode.cmp"
    report $r "resumed as $mode: the loss of steps 10 and 11 (momentum carried) and the params of the run that went on" "$tmp/$mode.out"
done
grep -q "^resume: resharded .*, written by 1 worker group of 2 workers and 1 server group of 2 servers .*, for 1 worker group of 4 workers and 1 server group of 3 servers .*: params and updater state are exact; re-derived: the random generators" "$tmp/sb43.out"
report $? "the log names what was resharded, what is exact and what is re-derived" "$tmp/sb43.out"
cp -r "$tmp/ck" "$tmp/ck-procs"
run procs procs 12 "$tmp/ck-procs" resume 100 && losses procs ref && params_close "$tmp/procs.txt" "$tmp/ref.txt"
report $? "resumed by 2 processes: the loss and params of the run that went on" "$tmp/procs.out"

# 2. An AllReduce checkpoint: --test and singa.predict.
run ar ar2 12 "$tmp/ar" fresh 6 && run arplain plain 12 "$tmp/arplain" fresh 6 && params_close "$tmp/ar.txt" "$tmp/arplain.txt"
report $? "AllReduce over 2 workers and one worker: 12 steps, checkpoints, the same params" "$tmp/ar.out"
timeout 60 "$SINGA_TUI" --test -e "$tmp/job.lua" ar2 "$tmp/artest.txt" 12 "$tmp/ar" resume 6 >"$tmp/artest.out" 2>&1 &&
    grep -q "^loaded $tmp/ar/step000000012\.\*\.ckpt (step 12)" "$tmp/artest.out" &&
    [ "$(grep ' test ' "$tmp/ar.out" | tail -1)" = "$(grep ' test ' "$tmp/artest.out" | tail -1)" ]
report $? "--test on the AllReduce checkpoint: the run's own final test" "$tmp/artest.out"
cat >"$tmp/predict.lua" <<'EOF'
-- predict.lua DIR CKDIR REF: the outputs of the checkpoint in CKDIR and of REF (a plain run's,
-- whose params are the run's r.params) on every image; prints the largest difference.
local singa = require "singa"
local td = require "testdata"
local dir, ck, ref = arg[1], arg[2], arg[3]
local function job(path)
  return { name = "reshard", checkpoint_path = path, test_steps = 4,
           neuralnet = td.mlp(dir .. "/data/images-idx3-ubyte", dir .. "/data/labels-idx1-ubyte") }
end
local images = singa.read_idx(dir .. "/data/images-idx3-ubyte")
local a, b = singa.predict(job(ck), images), singa.predict(job(ref), images)
local ta, tb, worst = a:totable(), b:totable(), 0
for i = 1, #ta do for j = 1, #ta[i] do worst = math.max(worst, math.abs(ta[i][j] - tb[i][j])) end end
local t = singa.test(job(ck))
print(string.format("rows %d, largest difference %.3g, step %d", #ta, worst, t.step))
assert(#ta == 480 and worst <= 1e-6 and t.step == 12)
EOF
timeout 60 "$SINGA_TUI" -e "$tmp/predict.lua" "$tmp" "$tmp/ar" "$tmp/arplain" >"$tmp/predict.out" 2>&1
report $? "singa.predict and singa.test on the AllReduce checkpoint: the outputs of the run's params (1e-6)" "$tmp/predict.out"

# 3. --ckpt-info, singa.load, --ckpt-gather.
"$SINGA_TUI" --ckpt-info "$tmp/ck" >"$tmp/info.out" 2>&1 &&
    grep -q "^step 10$" "$tmp/info.out" &&
    grep -q "^topology 1 worker group of 2 workers and 1 server group of 2 servers" "$tmp/info.out" &&
    grep -qE "^  fc1_weight +40x144$" "$tmp/info.out" && grep -qE "^  fc2_bias/history +10$" "$tmp/info.out" &&
    [ "$(grep -c ': CRC ok$' "$tmp/info.out")" -eq 4 ]
report $? "--ckpt-info on a distributed checkpoint: step, topology, params with shapes, updater slots, every file verified" "$tmp/info.out"
"$SINGA_TUI" --ckpt-info "$tmp/arplain/step000000012.ckpt" >"$tmp/info-plain.out" 2>&1 &&
    grep -q "^topology plain" "$tmp/info-plain.out" && grep -qE "^  fc1_weight +40x144$" "$tmp/info-plain.out"
report $? "--ckpt-info on a plain checkpoint file" "$tmp/info-plain.out"
"$SINGA_TUI" --ckpt-info "$tmp/ck/step000000010.w0.1.ckpt" >"$tmp/info-one.out" 2>&1 &&
    [ "$(grep -c ': CRC ok$' "$tmp/info-one.out")" -eq 4 ]
report $? "--ckpt-info on one file of a distributed step: that step" "$tmp/info-one.out"
# The plain name of a step no plain file has (an imported SINGA conf's checkpoint_path entry)
# names the distributed step; a step with no files at all is still "No such file".
"$SINGA_TUI" --ckpt-info "$tmp/ck/step000000010.ckpt" >"$tmp/info-name.out" 2>&1 &&
    [ "$(grep -c ': CRC ok$' "$tmp/info-name.out")" -eq 4 ] &&
    ! "$SINGA_TUI" --ckpt-info "$tmp/ck/step000000011.ckpt" >"$tmp/info-none.out" 2>&1 &&
    grep -q "step000000011.ckpt': No such file" "$tmp/info-none.out"
report $? "--ckpt-info on stepS.ckpt where only distributed files of step S are: that step" "$tmp/info-name.out"
cat >"$tmp/load.lua" <<'EOF'
-- load.lua CKDIR REF: singa.load of a distributed and of a plain checkpoint hold the same model.
local singa = require "singa"
local a, b = singa.load(arg[1]), singa.load(arg[2])
local n, worst = 0, 0
for name, t in pairs(b.params) do
  n = n + 1
  local x, y = a.params[name]:totable(), t:totable()
  local function walk(p, q) for i = 1, #p do
    if type(p[i]) == "table" then walk(p[i], q[i]) else worst = math.max(worst, math.abs(p[i] - q[i])) end end end
  walk(x, y)
end
local h = a.updater.fc1_weight.history:shape()
print(string.format("step %d, %d params, largest difference %.3g, history %dx%d", a.step, n, worst, h[1], h[2]))
assert(a.step == 12 and b.step == 12 and n == 4 and worst <= 1e-6 and h[1] == 40 and h[2] == 144)
assert(b.updater.fc2_bias.history and a.topology:match("^1 worker group of 2 workers") and b.topology:match("^plain"))
EOF
timeout 60 "$SINGA_TUI" -e "$tmp/load.lua" "$tmp/ar" "$tmp/arplain" >"$tmp/load.out" 2>&1
report $? "singa.load: a distributed and a plain checkpoint of the same params, updater state by param and slot" "$tmp/load.out"
mkdir -p "$tmp/gathered" && "$SINGA_TUI" --ckpt-gather "$tmp/ck" "$tmp/gathered/step000000010.ckpt" >"$tmp/gather.out" 2>&1 &&
    ls "$tmp/gathered" >>"$tmp/gather.out" && [ "$(ls "$tmp/gathered")" = step000000010.ckpt ] &&
    run gathered plain 12 "$tmp/gathered" resume 100 && ! grep -q "resharded" "$tmp/gathered.out" &&
    losses gathered ref && params_close "$tmp/gathered.txt" "$tmp/ref.txt"
report $? "--ckpt-gather: one plain file that a plain job resumes from exactly" "$tmp/gather.out"

run init plain 2 "$tmp/init" fresh 100 "" "$tmp/ck" &&
    grep -q "^checkpoint_path: 4 params from $tmp/ck/step000000010\.\*\.ckpt (step 10): " "$tmp/init.out"
report $? "checkpoint_path: a fresh plain job's params from a distributed checkpoint" "$tmp/init.out"

# 4. Refusals.
cp -r "$tmp/ck" "$tmp/bad"
f=$tmp/bad/step000000010.s0.1.ckpt
size=$(wc -c <"$f")
printf '\377' | dd of="$f" bs=1 seek=$((size - 20)) conv=notrunc 2>/dev/null
"$SINGA_TUI" --ckpt-info "$tmp/bad" >"$tmp/bad.out" 2>&1
[ $? -eq 1 ] && grep -q "refused checkpoint '$f': .*CRC mismatch" "$tmp/bad.out"
report $? "--ckpt-info on a corrupt checkpoint: exit 1, naming the file" "$tmp/bad.out"
"$SINGA_TUI" --ckpt-gather "$tmp/bad" "$tmp/bad.ckpt" >"$tmp/badg.out" 2>&1
[ $? -eq 1 ] && [ ! -e "$tmp/bad.ckpt" ] && grep -q "'$f'" "$tmp/badg.out"
report $? "--ckpt-gather of a corrupt checkpoint: exit 1, naming the file, nothing written" "$tmp/badg.out"
cp -r "$tmp/ck" "$tmp/wide-sb" && cp -r "$tmp/ck" "$tmp/wide-plain"
run wide-sb sb22 12 "$tmp/wide-sb" resume 100 20
[ $? -ne 0 ] && grep -q "checkpoint '$tmp/wide-sb/step000000010\.\*\.ckpt': param 'fc1_weight' has shape 40x144 there but 20x144 in this job (layer 'fc1')" "$tmp/wide-sb.out"
report $? "a distributed job of another net: refused naming the checkpoint, the param and both shapes" "$tmp/wide-sb.out"
run wide-plain plain 12 "$tmp/wide-plain" resume 100 20
[ $? -ne 0 ] && grep -q "checkpoint '$tmp/wide-plain/step000000010\.\*\.ckpt': tensor 'param/fc1_weight' has shape 40x144 in the file but 20x144 in the job" "$tmp/wide-plain.out"
report $? "a plain job of another net: refused naming the checkpoint, the param and both shapes" "$tmp/wide-plain.out"

run init-wide sb22 2 "$tmp/init-wide" fresh 100 20 "$tmp/ck"
[ $? -ne 0 ] && grep -q "checkpoint_path: param 'fc1_bias' has shape 40 in '$tmp/ck/step000000010\.\*\.ckpt' but 20 in this job (layer 'fc1')" "$tmp/init-wide.out"
report $? "checkpoint_path of another net: refused naming the param, both shapes and the checkpoint" "$tmp/init-wide.out"

done_testing

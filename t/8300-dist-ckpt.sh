# Distributed checkpoints (Sandblaster: 2 workers, 2 servers; in one process and in 3): a run
# resumed from its checkpoint ends with exactly the params of a run in one go; every process
# killed with SIGKILL, it resumes from the newest whole checkpoint and finishes exactly; a
# truncated, corrupt or missing file of the newest checkpoint makes resume fall back, naming it;
# SIGKILL in the middle of a write leaves no partial file under a checkpoint's name and the
# previous checkpoint whole; another topology and a plain job's checkpoints reshard (and a plain
# job resumes from a distributed one's), exactly; a fresh run over an earlier run's checkpoints
# and processes that see different checkpoints are refused clearly.
# Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8300-dist-ckpt.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
tmp=$(cd "$tmp" && pwd) # absolute: some runs below start elsewhere
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

cat >"$tmp/job.lua" <<'EOF'
-- job.lua MODE OUT STEPS CKDIR fresh|resume|overwrite FREQ [HIDDEN]: trains on the test's data with the
-- cluster of MODE, checkpointing to CKDIR every FREQ steps; rank 0 writes every param value to OUT.
local singa = require "singa"
local td = require "testdata"
local mode, out, steps, ckdir, resume, freq = arg[1], arg[2], tonumber(arg[3]), arg[4], arg[5] == "resume", tonumber(arg[6])
local dir = out:match("^(.*)/")
local clusters = {
  one = singa.cluster.sandblaster{ workers = 2, servers = 2 },
  procs = singa.cluster.sandblaster{ workers = 2, servers = 2, procs = 3 },
  three = singa.cluster.sandblaster{ workers = 2, servers = 3 },
}
local cluster = clusters[mode]
if cluster then cluster.heartbeat_timeout = 10 end -- no test of heartbeats here: slack for a loaded machine
local r = singa.train{
  name = "dist-ckpt", seed = 7, train_steps = steps, disp_freq = 1000, test_steps = 4,
  checkpoint_path = ckdir, checkpoint_freq = freq, resume = resume, overwrite = arg[5] == "overwrite",
  cluster = cluster,
  updater = { type = "kSGD", momentum = 0.9, weight_decay = 1e-4,
              learning_rate = { type = "kStep", base_lr = 0.05, gamma = 0.5, change_freq = 20 } },
  neuralnet = td.mlp(dir .. "/data/images-idx3-ubyte", dir .. "/data/labels-idx1-ubyte", tonumber(arg[7])),
}
local rank, size = singa.rank()
if rank == 0 then
  local f = assert(io.open(out, "w"))
  td.write_params(f, r.params)
  f:close()
end
print(string.format("rank %d of %d: %d steps", rank, size, r.steps))
EOF

# Checks every file named as a checkpoint in a folder against the format (checkpoint.h): the
# header, every entry's CRC, the trailer's CRC of all before it, nothing after; prints the bad.
cat >"$tmp/verify.py" <<'EOF'
import os, struct, sys, zlib
bad = 0
for name in sorted(os.listdir(sys.argv[1])):
    if not name.endswith(".ckpt"):
        continue
    b = open(os.path.join(sys.argv[1], name), "rb").read()
    try:
        assert b[:8] == b"SINGACKP", "magic"
        version, count, step = struct.unpack_from("<IIQ", b, 8)
        off = 24
        for _ in range(count):
            (nlen,) = struct.unpack_from("<H", b, off); off += 2 + nlen
            dtype, ndim = b[off], b[off + 1]; off += 2 + 4 * ndim
            nbytes, crc = struct.unpack_from("<QI", b, off); off += 12
            assert off + nbytes <= len(b), "truncated"
            assert zlib.crc32(b[off:off + nbytes]) == crc, "entry CRC"
            off += nbytes
        assert b[off:off + 8] == b"SINGAEND", "trailer"
        (total,) = struct.unpack_from("<I", b, off + 8)
        assert zlib.crc32(b[:off]) == total and off + 12 == len(b), "file CRC"
    except (AssertionError, struct.error, IndexError) as e:
        print("bad %s: %s" % (name, e)); bad += 1
print("%d bad" % bad)
sys.exit(1 if bad else 0)
EOF

# The newest step of folder $1 with all 4 files of this topology (servers 0.0, 0.1, workers
# 0.0, 0.1), or nothing.
newest_whole() {
    ls "$1" | sed -n 's/^step\([0-9]*\)\.[sw]0\.[01]\.ckpt$/\1/p' | sort | uniq -c |
        awk '$1 == 4 { print $2 + 0 }' | sort -n | tail -1
}
# The step a run's output says it resumed from.
resumed_step() { sed -n 's/^resumed from .* (step \([0-9]*\))$/\1/p' "$1" | head -1; }
# run NAME MODE STEPS CKDIR fresh|resume|overwrite FREQ [HIDDEN]: trains, output in NAME.out, params in NAME.txt.
run() {
    r_name=$1 r_mode=$2
    shift 2
    procs=
    [ "$r_mode" = procs ] && procs="--procs 3"
    timeout 300 "$SINGA_TUI" $procs -e "$tmp/job.lua" "$r_mode" "$tmp/$r_name.txt" "$@" >"$tmp/$r_name.out" 2>&1
}

gen_data

# 1. Checkpoints change nothing, and 50 steps then 50 more resumed end exactly where 100 steps
# in one go do, in one process and in three.
run nockpt plain 100
report $? "one worker trains 100 steps without checkpoints (the reference)" "$tmp/nockpt.out"
for mode in one procs; do
    run "$mode-whole" $mode 100 "$tmp/$mode-whole" fresh 10 && params_close "$tmp/$mode-whole.txt" "$tmp/nockpt.txt"
    report $? "$mode: 100 steps in one go, checkpointing every 10, end with the reference's params" "$tmp/$mode-whole.out"
    ls "$tmp/$mode-whole" >"$tmp/$mode-whole.ls"
    [ "$(cat "$tmp/$mode-whole.ls" | tr '\n' ' ')" = "step000000080.s0.0.ckpt step000000080.s0.1.ckpt \
step000000080.w0.0.ckpt step000000080.w0.1.ckpt step000000090.s0.0.ckpt step000000090.s0.1.ckpt \
step000000090.w0.0.ckpt step000000090.w0.1.ckpt step000000100.s0.0.ckpt step000000100.s0.1.ckpt \
step000000100.w0.0.ckpt step000000100.w0.1.ckpt " ] && python3 "$tmp/verify.py" "$tmp/$mode-whole" >>"$tmp/$mode-whole.ls"
    report $? "$mode: a shard per server and a state per worker for the newest 3 steps, each verifies" "$tmp/$mode-whole.ls"
    run "$mode-half" $mode 50 "$tmp/$mode-split" fresh 10 &&
        run "$mode-resumed" $mode 100 "$tmp/$mode-split" resume 10 &&
        [ "$(resumed_step "$tmp/$mode-resumed.out")" = 50 ] && params_close "$tmp/$mode-resumed.txt" "$tmp/$mode-whole.txt"
    report $? "$mode: 50 steps, then resumed from step 50 to 100: the params of 100 steps in one go" "$tmp/$mode-resumed.out"
done
grep -q '^rank 1 of 3: 100 steps$' "$tmp/procs-resumed.out" && grep -q '^rank 2 of 3: 100 steps$' "$tmp/procs-resumed.out"
report $? "procs: every process resumes and finishes" "$tmp/procs-resumed.out"

# A server's range of a big param is cut into slices of at most 2 MB: with 8000 hidden units
# (fc1_weight: 144 x 8000 floats, 1,152,000) each server holds two slices of fc1_weight, the
# second named by its offset in the shard.  Exact, and it resumes exactly.
run wide-ref plain 30 "$tmp/wide-ref" fresh 100 8000
report $? "8000 hidden units: one worker trains 30 steps (the reference)" "$tmp/wide-ref.out"
for mode in one procs; do
    run "$mode-wide" $mode 15 "$tmp/$mode-wide" fresh 5 8000 && run "$mode-wide-resumed" $mode 30 "$tmp/$mode-wide" resume 5 8000 &&
        [ "$(resumed_step "$tmp/$mode-wide-resumed.out")" = 15 ] && params_close "$tmp/$mode-wide-resumed.txt" "$tmp/wide-ref.txt" &&
        grep -qa 'param/fc1_weight@524288' "$tmp/$mode-wide/step000000030.s0.0.ckpt" &&
        grep -qa 'param/fc1_weight@1144293' "$tmp/$mode-wide/step000000030.s0.1.ckpt"
    report $? "$mode: fc1_weight in slices of 2 MB or less, 15 steps then 15 resumed: the reference's params" "$tmp/$mode-wide-resumed.out"
done

# 3. A bad newest checkpoint: resume falls back to the previous one that verifies on every file,
# names each file it refused, and still ends exactly.
cp -r "$tmp/one-whole" "$tmp/trunc"
f100=$tmp/trunc/step000000100.s0.1.ckpt
head -c 1000 "$f100" >"$f100.x" && mv "$f100.x" "$f100"
run trunc one 100 "$tmp/trunc" resume 10 &&
    grep -q "^refused checkpoint '$f100': .*truncated" "$tmp/trunc.out" && [ "$(resumed_step "$tmp/trunc.out")" = 90 ] &&
    params_close "$tmp/trunc.txt" "$tmp/one-whole.txt"
report $? "a truncated newest shard: refused by name, resumed from step 90, exact" "$tmp/trunc.out"

cp -r "$tmp/procs-whole" "$tmp/corrupt"
rm "$tmp/corrupt/step000000100.w0.1.ckpt"
f90=$tmp/corrupt/step000000090.s0.0.ckpt
size=$(wc -c <"$f90")
printf '\377' | dd of="$f90" bs=1 seek=$((size - 20)) conv=notrunc 2>/dev/null # in its last entry's data
run corrupt procs 100 "$tmp/corrupt" resume 10 &&
    grep -q "^refused checkpoint step 100 is incomplete: '$tmp/corrupt/step000000100.w0.1.ckpt' is missing" "$tmp/corrupt.out" &&
    grep -q "^refused checkpoint '$f90': .*CRC mismatch" "$tmp/corrupt.out" &&
    [ "$(resumed_step "$tmp/corrupt.out")" = 80 ] && params_close "$tmp/corrupt.txt" "$tmp/one-whole.txt"
report $? "procs: a missing state at 100 and a corrupt shard at 90: both named, resumed from 80, exact" "$tmp/corrupt.out"
[ "$(grep -c '^refused' "$tmp/corrupt.out")" -eq 2 ] &&
    [ "$(grep -cE "^removed $tmp/corrupt/step000000100\.[sw]0\.[01]\.ckpt \(of an incomplete checkpoint" "$tmp/corrupt.out")" -eq 3 ] &&
    [ "$(grep -cE "^renamed $tmp/corrupt/step000000090\.[sw]0\.[01]\.ckpt to .*\.ckpt\.refused \(of a checkpoint that did not verify" "$tmp/corrupt.out")" -eq 4 ] &&
    [ "$(ls "$tmp/corrupt" | grep -c '^step000000090\.[sw]0\.[01]\.ckpt\.refused$')" -eq 4 ] &&
    python3 "$tmp/verify.py" "$tmp/corrupt" >"$tmp/corrupt.verify"
report $? "procs: rank 0 alone reports; it removes the incomplete step's files and keeps the bad step's aside" "$tmp/corrupt.out"

# The pids of the 3 ranks of the job started last.
rank_pids() { echo $(rank_pid 0) $(rank_pid 1) $(rank_pid 2); }
# Kills the processes $pids with SIGKILL, all at once; waits for the launcher.
kill_all() {
    kill -9 $pids 2>/dev/null
    wait "$launcher"
}

# 2. Every process killed in the middle of a long run: resume continues from the newest whole
# checkpoint and ends exactly where the run in one go does.
STEPS=20000
run long-ref one $STEPS "$tmp/long-ref" fresh 100
report $? "$STEPS steps in one go (the reference)" "$tmp/long-ref.out"
timeout 300 "$SINGA_TUI" --procs 3 -e "$tmp/job.lua" procs "$tmp/long.txt" $STEPS "$tmp/long" fresh 100 >"$tmp/long.out" 2>&1 &
launcher=$!
for _ in $(seq 3000); do
    [ "$(grep -c '^checkpoint written' "$tmp/long.out")" -ge 30 ] && break
    kill -0 $launcher 2>/dev/null || break
    sleep 0.02
done
pids=$(rank_pids)
kill_all
rc=$?
at=$(newest_whole "$tmp/long")
echo "# killed ranks $pids after $(grep -c '^checkpoint written' "$tmp/long.out") checkpoints; newest whole: step ${at:-none}"
[ $rc -ne 0 ] && [ "$(echo $pids | wc -w)" -eq 3 ] && ! grep -q '^rank 0 of 3:' "$tmp/long.out" && [ -n "$at" ] && [ "$at" -ge 2000 ]
report $? "SIGKILL of all 3 processes in the middle of the run (whole checkpoints up to step ${at:-none})" "$tmp/long.out"
run long-resumed procs $STEPS "$tmp/long" resume 100 && [ "$(resumed_step "$tmp/long-resumed.out")" = "$at" ] &&
    grep -q "^rank 0 of 3: $STEPS steps" "$tmp/long-resumed.out"
report $? "resumed from the newest whole checkpoint (step $(resumed_step "$tmp/long-resumed.out")) and finished" "$tmp/long-resumed.out"
params_close "$tmp/long-resumed.txt" "$tmp/long-ref.txt"
report $? "killed and resumed, it ends with the params of the run in one go" "$tmp/long-resumed.out"

# 4. SIGKILL while a checkpoint is being written (a net of 2.9M params: each server writes 12 MB
# every 2 steps): no file under a checkpoint's name is partial, the checkpoint before is whole,
# and resume continues from it.  The kill lands mid-write when a temp file is left behind.
caught=1
for try in 1 2 3 4 5; do
    rm -rf "$tmp/big"
    timeout 90 "$SINGA_TUI" --procs 3 -e "$tmp/job.lua" procs "$tmp/big.txt" 40 "$tmp/big" fresh 2 20000 >"$tmp/big.out" 2>&1 &
    launcher=$!
    for _ in $(seq 600); do
        [ -n "$(newest_whole "$tmp/big" 2>/dev/null)" ] && break
        kill -0 $launcher 2>/dev/null || break
        sleep 0.02
    done
    pids=$(rank_pids)
    for _ in $(seq 3000); do
        ls "$tmp/big" | grep -q '\.tmp$' && break
        kill -0 $launcher 2>/dev/null || break
    done
    kill_all
    ls -l "$tmp/big" >"$tmp/big.ls" 2>&1
    if grep -q '\.ckpt\.tmp$' "$tmp/big.ls"; then
        caught=0
        break
    fi
done
echo "# try $try: $(grep -c 'ckpt.tmp$' "$tmp/big.ls") temp files left, newest whole checkpoint: step $(newest_whole "$tmp/big")"
report $caught "SIGKILL of every process landed in the middle of a checkpoint's write (try $try)" "$tmp/big.ls"
python3 "$tmp/verify.py" "$tmp/big" >>"$tmp/big.ls" 2>&1
report $? "every file under a checkpoint's name is whole and verifies" "$tmp/big.ls"
at=$(newest_whole "$tmp/big")
run big-resumed procs 40 "$tmp/big" resume 2 20000 && [ -n "$at" ] && [ "$(resumed_step "$tmp/big-resumed.out")" = "$at" ] &&
    grep -q '^rank 0 of 3: 40 steps' "$tmp/big-resumed.out" && ! ls "$tmp/big" | grep -q '\.tmp$'
report $? "resumed from the checkpoint before (step ${at:-none}), finished, and the temp files are gone" "$tmp/big-resumed.out"

# 5. Refusals, each with its reason.
# Another topology reshards: the model is the same whatever wrote it (t/4500-reshard.sh has more).
# Step 90 of the run of 2 workers and 2 servers (its step 100 left out) resumes for 10 steps.
mkdir -p "$tmp/r90" && cp "$tmp/one-whole"/step00000008* "$tmp/one-whole"/step00000009* "$tmp/r90"/
for mode in three plain; do
    cp -r "$tmp/r90" "$tmp/r90-$mode"
    run "$mode-from-dist" $mode 100 "$tmp/r90-$mode" resume 10 &&
        grep -q "^resume: resharded $tmp/r90-$mode/step000000090\.\*\.ckpt, written by 1 worker group of 2 workers and 1 server group of 2 servers" "$tmp/$mode-from-dist.out" &&
        [ "$(resumed_step "$tmp/$mode-from-dist.out")" = 90 ] && params_close "$tmp/$mode-from-dist.txt" "$tmp/one-whole.txt"
    report $? "$mode: resumed from a checkpoint of 2 workers and 2 servers at step 90, resharded: the params of 100 steps in one go" "$tmp/$mode-from-dist.out"
done
run plain-ckpt plain 90 "$tmp/plain-ckpt" fresh 10 && run dist-from-plain one 100 "$tmp/plain-ckpt" resume 10 &&
    grep -q "^resume: resharded $tmp/plain-ckpt/step000000090\.ckpt, written by plain" "$tmp/dist-from-plain.out" &&
    params_close "$tmp/dist-from-plain.txt" "$tmp/one-whole.txt"
report $? "a distributed job resumes from a plain job's checkpoint: the params of 100 steps in one go" "$tmp/dist-from-plain.out"
run fresh-over one 100 "$tmp/one-whole" fresh 10
[ $? -ne 0 ] && grep -q "checkpoint_path '$tmp/one-whole' holds 3 checkpoints of an earlier run (newest: step 100), which a fresh run does not replace unasked: resume = true continues them, overwrite = true replaces them once this run has written its first checkpoint" "$tmp/fresh-over.out" &&
    [ "$(ls "$tmp/one-whole" | wc -l)" -eq 12 ]
report $? "a fresh run over an earlier run's checkpoints: refused, and they stay" "$tmp/fresh-over.out"
# With overwrite = true it trains, and its first whole checkpoint replaces them: 40 steps leave
# its own 20, 30 and 40, not the earlier 80, 90 and 100 (which would be kept as newer).
run over one 40 "$tmp/one-whole" overwrite 10 &&
    grep -q "holds 3 checkpoints of an earlier run (newest: step 100); this run replaces them once it has written its first whole checkpoint (overwrite)" "$tmp/over.out" &&
    grep -q "removed $tmp/one-whole/step000000100.*(an earlier run's)" "$tmp/over.out" &&
    [ "$(ls "$tmp/one-whole" | wc -l)" -eq 12 ] && [ "$(newest_whole "$tmp/one-whole")" = 40 ] &&
    ! ls "$tmp/one-whole" | grep -q "step00000010[0-9]\|step0000000[89]0"
report $? "... with overwrite = true it trains, and its first whole checkpoint replaces them" "$tmp/over.out"

# Processes that see different checkpoints under one checkpoint_path (a folder not shared): the
# servers find out from the puts and gets, and the job ends saying so.
port=$(free_port)
cp -r "$tmp/procs-whole" "$tmp/view0" && cp -r "$tmp/procs-whole" "$tmp/view12" && rm "$tmp/view12"/step000000100.*
for r in 0 1 2; do
    mkdir -p "$tmp/rank$r"
    view=view12; [ $r -eq 0 ] && view=view0
    ln -s "../$view" "$tmp/rank$r/ck"
    (cd "$tmp/rank$r" && SINGA_RANK=$r SINGA_SIZE=3 SINGA_COORDINATOR=tcp://127.0.0.1:$port \
        timeout 30 "$SINGA_TUI" -e "$tmp/job.lua" procs "$tmp/views.txt" 120 ck resume 10 >"$tmp/view$r.out" 2>&1) &
done
fails=0
for p in $(jobs -p); do wait "$p" || fails=$((fails + 1)); done
[ $fails -eq 3 ] && grep -q "resumed from ck/step000000100" "$tmp/view0.out" &&
    grep -q "starts from step 90, but rank 0 from step 100: the processes see different checkpoints in 'ck'" "$tmp/view0.out"
report $? "processes that resume from different steps: every one fails, naming both steps" "$tmp/view0.out"

[ "$failed" -eq 0 ] && rm -rf "$tmp"
done_testing

# cluster.compress = { powersgd = 2 } over 2 AllReduce processes: the job trains (the loss falls)
# with a small part of the uncompressed bytes both ways (the update comes back as factors, not
# values); every process's replica is bit for bit the other's at every checkpoint (the digest
# each logs) and the servers' final values are that replica; a checkpoint resumes (with Q and
# the residuals) to the params of the run that went on, bit for bit, and loads into a plain job
# of one process; without error feedback it trains too, and with a kLua updater; a rank not below a param's smaller side
# leaves that param uncompressed, logged once; a net cut on its features is refused; Sandblaster over 3 processes (servers apart) with
# start = 3 keeps its replicas equal as well; and so does top-k with values = "update", whose
# answers are the pairs of the summed update, not values.  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8704-powersgd-procs.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
tmp=$(cd "$tmp" && pwd)
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

cat >"$tmp/job.lua" <<'EOF'
-- job.lua PROCS MODE OUT STEPS [CKDIR FREQ fresh|resume]: MODE none, ps (powersgd = 2), ps0
-- (without error feedback), psl (powersgd = 2, a kLua updater), ps12 (powersgd = 12), sb (Sandblaster, 2 workers and a server
-- process, powersgd = 2 from step 3), tk (top-k 5% + error feedback, values = "update"), tk50
-- (top-k 50%, values = "update", whose summed pairs outgrow the values' frame), cut
-- (powersgd = 2 with the net cut on its features: refused) or plain (no cluster); the workspace
-- is OUT.ws.  Rank 0
-- writes the params to OUT, their digest (FNV-1a over the float32 bytes, as the runtime logs a
-- replica's) to OUT.digest, and the bytes one step sends to and gets from the other process to
-- OUT.bytes.
local singa = require "singa"
local td = require "testdata"
local procs, mode, out, steps = tonumber(arg[1]), arg[2], arg[3], tonumber(arg[4])
local dir = out:match("^(.*)/")
local compress = ({ ps = { powersgd = 2 }, ps0 = { powersgd = 2, error_feedback = false },
                    ps12 = { powersgd = 12 }, sb = { powersgd = 2, start = 3 }, psl = { powersgd = 2 },
                    tk = { topk = 0.05, error_feedback = true, values = "update" },
                    tk50 = { topk = 0.5, values = "update" } })[mode]
local cluster
if mode == "sb" then
  cluster = singa.cluster.sandblaster{ workers = 2, servers = 1, procs = 3, compress = compress, workspace = out .. ".ws" }
elseif mode ~= "plain" then
  cluster = singa.cluster.allreduce{ workers = 2, procs = procs, compress = compress, workspace = out .. ".ws" }
end
local net = td.mlp(dir .. "/data/images-idx3-ubyte", dir .. "/data/labels-idx1-ubyte")
if mode == "cut" then
  cluster = singa.cluster.allreduce{ workers = 2, procs = 2, compress = { powersgd = 2 } }
  net.partition_dim = 1
end
local r = singa.train{
  name = "powersgd", seed = 7, train_steps = steps, disp_freq = 1,
  checkpoint_path = arg[5], checkpoint_freq = tonumber(arg[6]), resume = arg[7] == "resume",
  cluster = cluster,
  updater = mode == "psl" and { type = "kLua", state = { "history" }, learning_rate = { type = "kFixed", base_lr = 0.05 },
      update = function(_, w, g, s, lr) s.history:scale(0.9); s.history:axpy(-lr, g); w:axpy(1, s.history) end }
    or { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = net,
}
if singa.rank() == 0 and r.params then
  local f = assert(io.open(out, "w"))
  td.write_params(f, r.params)
  f:close()
  local h = -3750763034362895579 -- 0xcbf29ce484222325
  local function walk(v)
    if type(v) == "table" then for _, x in ipairs(v) do walk(x) end return end
    local b = string.pack("<f", v)
    for i = 1, 4 do h = (h ~ b:byte(i)) * 0x100000001b3 end
  end
  for _, name in ipairs{ "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias" } do walk(r.params[name]:totable()) end
  f = assert(io.open(out .. ".digest", "w"))
  f:write(string.format("%016x\n", h))
  f:close()
  f = assert(io.open(out .. ".bytes", "w"))
  local up, reply = 0, 0
  for _, row in ipairs(r.stats and r.stats.traffic or {}) do
    if row.peer:match("%(rank 1%)") and row.type == "update" then up = up + row.bytes_sent end
    if row.peer:match("%(rank 1%)") and row.type == "update-reply" then reply = reply + row.bytes_received end
  end
  f:write(string.format("bytes_update %d\nbytes_reply %d\n", up // steps, reply // steps))
  f:close()
end
EOF

. "$top_srcdir/t/compress-runs.sh"
# replicas NAME RANKS CKPTS: every checkpoint's digest is the same in each of RANKS ranks' logs
# (CKPTS checkpoints), and the last is the digest of the final params (the servers').
replicas() {
    cat "$tmp/$1.txt.ws"/rank*.log | awk -v ranks="$2" -v ckpts="$3" -v final="$(cat "$tmp/$1.txt.digest")" '
        /compress: step [0-9]+: the replica/ { s = $5 + 0; n[s]++; if (!(s in d)) d[s] = $NF; else if (d[s] != $NF) bad++
            if (s > last) last = s }
        END { for (s in n) { steps++; if (n[s] != ranks) bad++ }
            printf "# %d checkpoints, last %d: %s, final params %s\n", steps, last, d[last], final
            exit !(steps == ckpts && !bad && d[last] == final) }'
}

gen_data

run off 2 none 20
report $? "2 processes, uncompressed: 20 steps" "$tmp/off.out"
run ps 2 ps 20 "$tmp/ck" 5 fresh && falls ps
report $? "2 processes, powersgd = 2: trains" "$tmp/ps.out"
replicas ps 2 4
report $? "the replicas are bit for bit the same at every checkpoint, and are the servers' values"
fewer ps bytes_update 0.3
report $? "the updates take less than 30% of the uncompressed bytes"
fewer ps bytes_reply 0.3
report $? "the answers too: factors, not values"

run ps_a 2 ps 10 "$tmp/ck_a" 5 fresh && run ps_b 2 ps 20 "$tmp/ck_a" 5 resume &&
    grep -q "powersgd's Q and residuals of [0-9]* slices resumed" "$tmp/ps_b.txt.ws/rank1.log"
report $? "a checkpoint of step 10 resumes with Q and the residuals" "$tmp/ps_b.out"
cmp "$tmp/ps_b.txt" "$tmp/ps.txt"
report $? "resumed, the params of the run that went on, bit for bit"
run plain 1 plain 12 "$tmp/ck_a" 0 resume && grep -q "resumed from .*step000000010" "$tmp/plain.out" && falls plain
report $? "the checkpoint loads into a plain job of one process, which trains on" "$tmp/plain.out"

run ps0 2 ps0 20 && falls ps0
report $? "without error feedback: trains" "$tmp/ps0.out"
run psl 2 psl 12 "$tmp/ck_psl" 4 fresh && falls psl && replicas psl 2 3
report $? "a kLua updater (the update expanded whole, not row by row): trains, the replicas stay the servers' values" "$tmp/psl.out"
run ps12 2 ps12 10 && falls ps12 &&
    [ "$(grep -c "powersgd = 12 is not below the smaller side of param 'fc2_weight'" "$tmp/ps12.txt.ws/rank0.log")" = 1 ] &&
    ! grep -q "param 'fc1_weight'" "$tmp/ps12.txt.ws/rank0.log"
report $? "powersgd = 12: the 10-row fc2_weight goes uncompressed, logged once" "$tmp/ps12.out"
run sb 3 sb 20 "$tmp/ck_sb" 5 fresh && falls sb && replicas sb 2 4
report $? "Sandblaster over 3 processes, start = 3: the replicas stay the servers' values" "$tmp/sb.out"
! run cut 2 cut 3 && grep -q "powersgd applies the update to whole replicas; this net is cut" "$tmp/cut.out"
report $? "a net cut among its workers is refused, naming powersgd" "$tmp/cut.out"

# Top-k with values = "update": the same path, the update back as the pairs of the summed top-k.
run tk 2 tk 20 "$tmp/ck_tk" 5 fresh && falls tk && replicas tk 2 4
report $? "top-k 5%, values = \"update\": trains, the replicas are the servers' values at every checkpoint" "$tmp/tk.out"
fewer tk bytes_reply 0.3
report $? "top-k's answers: the summed update's pairs, not values"
run tk50 2 tk50 6 && falls tk50
report $? "top-k 50%, values = \"update\": the summed pairs (up to 8 bytes a value) pass between the processes" "$tmp/tk50.out"
run tk_a 2 tk 10 "$tmp/ck_tka" 5 fresh && run tk_b 2 tk 20 "$tmp/ck_tka" 5 resume &&
    grep -q "error-feedback residuals resumed" "$tmp/tk_b.txt.ws/rank1.log" && cmp "$tmp/tk_b.txt" "$tmp/tk.txt"
report $? "top-k, values = \"update\": resumed with its residuals, the params of the run that went on, bit for bit" "$tmp/tk_b.out"

done_testing

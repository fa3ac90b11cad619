# CURVE as the manual shows it: its Clusters/CURVE snippet, extracted from docs/03-clusters.md
# (the README and the manual's pages, read in order) and run as
# written (the key pair into a keys/ folder that does not exist yet, a preset with `curve`),
# trains in 3 processes and says that CURVE is on.  --curve-keygen makes the folders it needs
# for their owner only; a public_keys_dir or a public key file others may write is refused.
# Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8110-curve.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

gen_data

# The manual's indented block after "Make a key pair": shell lines, then the Lua from "cluster =".
awk '/Make a key pair, list its public half, and name both in the job:$/ { on = 1; next }
     on && /^    / { print substr($0, 5); seen = 1; next }
     on && seen { exit }' "$top_srcdir/README.md" "$top_srcdir"/docs/[0-9][0-9]-*.md >"$tmp/snippet"
sed -n '/^cluster = /,$p' "$tmp/snippet" >"$tmp/snippet.lua"
sed '/^cluster = /,$d' "$tmp/snippet" | sed "s|^\./singa-tui |\"\$SINGA_TUI\" |" >"$tmp/snippet.sh"
grep -q -- '--curve-keygen keys/job' "$tmp/snippet.sh" && grep -q 'curve = {' "$tmp/snippet.lua"
report $? "the manual's CURVE snippet found: keygen, allow-list and a preset with curve" "$tmp/snippet"

run=$tmp/readme
mkdir -p "$run" && (cd "$run" && sh -e "$PWD/../snippet.sh") >"$tmp/keygen.out" 2>&1 &&
    [ "$(stat -c %a "$run/keys")" = 700 ] && [ "$(stat -c %a "$run/keys/job.key")" = 600 ] &&
    [ -s "$run/keys/allowed/job.pub" ]
report $? "the snippet's commands run as written: --curve-keygen makes keys/ (mode 700)" "$tmp/keygen.out"

{
    echo 'local singa = require "singa"'
    echo 'local td = require "testdata"'
    cat "$tmp/snippet.lua"
    cat <<'EOF'
cluster.workspace = "ws"
local r = singa.train{
  name = "curve", seed = 7, train_steps = 20, disp_freq = 10, cluster = cluster,
  updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = td.mlp("../data/images-idx3-ubyte", "../data/labels-idx1-ubyte"),
}
print(string.format("rank %d: %d steps", singa.rank(), r.steps))
EOF
} >"$run/job.lua"
(cd "$run" && timeout 60 "$SINGA_TUI" --procs 3 -e job.lua) >"$tmp/job.out" 2>&1
[ $? -eq 0 ] && grep -q '^rank 0: 20 steps$' "$tmp/job.out"
report $? "the snippet's preset with curve trains in 3 processes" "$tmp/job.out"
grep -q '^CURVE is on: traffic between processes is encrypted, and only the 1 public key in keys/allowed may connect$' \
    "$tmp/job.out" && [ "$(grep -l 'CURVE is on' "$run"/ws/rank*.log | wc -l)" -eq 3 ]
report $? "a run with CURVE says so (rank 0 on its output, every rank in its log)" "$tmp/job.out"

# Every preset passes every field of the cluster through but the topology it computes.
cat >"$tmp/presets.lua" <<'EOF'
local singa = require "singa"
local topology = { framework = 1, nworker_groups = 1, nworkers_per_group = 1, nserver_groups = 1,
                   nservers_per_group = 1, server_worker_separate = 1, nworkers_per_procs = 1, nservers_per_procs = 1 }
for _, p in ipairs{ "sandblaster", "allreduce", "downpour", "hogwild" } do
  for _, f in ipairs(require("singa.core").cluster_fields) do
    local v = {}
    local ok, c = pcall(singa.cluster[p], { [f] = v })
    if topology[f] then
      assert(not ok and c:find("option '" .. f .. "' is the preset's to compute", 1, true), p .. " took " .. f)
    else
      assert(ok and c[f] == v, p .. " dropped " .. f .. ": " .. tostring(c))
    end
  end
end
print("checked")
EOF
"$SINGA_TUI" -e "$tmp/presets.lua" >"$tmp/presets.out" 2>&1 && grep -q '^checked$' "$tmp/presets.out"
report $? "every preset passes curve and every other cluster field through, and refuses topology fields" "$tmp/presets.out"

# Folders: made as mkdir -p would, mode 700 whatever the umask; existing ones left as they are.
mkdir -m 755 "$tmp/old" &&
    (umask 022 && "$SINGA_TUI" --curve-keygen "$tmp/old/new1/new2/job") >"$tmp/deep.out" 2>&1 &&
    [ "$(stat -c %a "$tmp/old")" = 755 ] && [ "$(stat -c %a "$tmp/old/new1")" = 700 ] &&
    [ "$(stat -c %a "$tmp/old/new1/new2")" = 700 ] && [ -s "$tmp/old/new1/new2/job.pub" ]
report $? "--curve-keygen makes every missing folder, mode 700, and leaves existing ones alone" "$tmp/deep.out"
: >"$tmp/file"
"$SINGA_TUI" --curve-keygen "$tmp/file/job" >"$tmp/notdir.out" 2>&1
[ $? -ne 0 ] && grep -q "cannot make the folder $tmp/file: Not a directory" "$tmp/notdir.out"
report $? "--curve-keygen under a file: refused, naming it" "$tmp/notdir.out"

# Who may write the allow-list decides who gets in.
chmod 777 "$run/keys/allowed"
(cd "$run" && timeout 30 "$SINGA_TUI" --procs 3 -e job.lua) >"$tmp/loose-dir.out" 2>&1
[ $? -ne 0 ] && grep -q 'the public_keys_dir keys/allowed has permissions 0777; anyone could add a key that gets in, so it must not be writable by others (chmod o-w keys/allowed)' "$tmp/loose-dir.out"
report $? "a world-writable public_keys_dir is refused" "$tmp/loose-dir.out"
chmod 755 "$run/keys/allowed" && chmod 666 "$run/keys/allowed/job.pub"
(cd "$run" && timeout 30 "$SINGA_TUI" --procs 3 -e job.lua) >"$tmp/loose-pub.out" 2>&1
[ $? -ne 0 ] && grep -q 'the public key file keys/allowed/job.pub has permissions 0666' "$tmp/loose-pub.out"
report $? "a world-writable public key file is refused" "$tmp/loose-pub.out"

done_testing

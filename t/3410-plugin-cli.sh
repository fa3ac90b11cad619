# Plugins from the command line: --check-plugin, the folders singa-tui scans ($SINGA_PLUGIN_PATH,
# plugins/ beside the program) with a bad plugin reported on stderr and skipped, the scan's
# order, and a job's `plugins` in a fresh process.  Prints TAP.
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
tmp=t/3410-plugin-cli.tmp
rm -rf "$tmp" && mkdir -p "$tmp/a" "$tmp/b" || exit 1
build=$(dirname "$SINGA_TUI")
libs=$build/t/plugins/.libs

. "$top_srcdir/t/tap.sh"
run() {
    timeout 120 "$SINGA_TUI" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

run --help
grep -q -- '--check-plugin FILE' "$tmp/out" && grep -q 'SINGA_PLUGIN_PATH' "$tmp/out"
report $? "--help describes --check-plugin and the plugin folders" "$tmp/out"

# --check-plugin
for p in swish prelu; do
    run --check-plugin "$build/plugins/.libs/$p.so"
    [ $rc -eq 0 ] && grep -q "^plugin $p 1.0.0 (ABI 1.4): " "$tmp/out" && grep -q '^ok   k[A-Za-z]*: max relative error' "$tmp/out" &&
        grep -q '^1 of 1 layer types passed, 0 failed' "$tmp/out"
    report $? "--check-plugin plugins/$p.so passes" "$tmp/out"
done
run --check-plugin "$libs/wrong_grad.so"
[ $rc -ne 0 ]
report $? "--check-plugin exits non-zero when a layer fails (got $rc)" "$tmp/out"
grep -q '^ok   kDouble: ' "$tmp/out"
report $? "it passes the right layer (on the default example)" "$tmp/out"
grep -q "^FAIL kWrongGrad: max relative error 0.333 over 15 elements (limit 0.02); worst input0\[" "$tmp/out"
report $? "it fails the wrong one with its error, on the plugin's 3 x 5 example" "$tmp/out"
grep -q '^skip kNoGrad: no gradient passes through it' "$tmp/out" &&
    grep -q '^1 of 3 layer types passed, 1 failed, 1 had nothing to check$' "$tmp/out"
report $? "it skips a layer without backward and sums up" "$tmp/out"
run --check-plugin "$libs/dup_plugin.so"
[ $rc -eq 0 ] && grep -q '^ok   kSwish' "$tmp/out"
report $? "--check-plugin loads the named file alone (its kSwish does not clash with plugins/)" "$tmp/out"
run --check-plugin "$tmp/missing.so"
[ $rc -ne 0 ] && grep -q "^singa-tui: plugin '$tmp/missing.so': not found$" "$tmp/err"
report $? "--check-plugin of a missing file: an error naming it" "$tmp/err"
run --check-plugin "$libs/abi_major.so"
[ $rc -ne 0 ] && grep -q "^singa-tui: plugin '$libs/abi_major.so': built for plugin ABI 2.0, but this libsinga has ABI 1.4" "$tmp/err"
report $? "--check-plugin of a plugin of another ABI: an error naming both versions" "$tmp/err"
run --check-plugin
[ $rc -ne 0 ] && grep -q -- "--check-plugin" "$tmp/err"
report $? "--check-plugin without a file is refused"

# Scanning: $SINGA_PLUGIN_PATH first (name order in each folder, earlier folders win), then
# plugins/ beside the program; bad plugins are reported and skipped.
cp "$libs/double.so" "$tmp/a/double.so"
cp "$libs/abi_major.so" "$tmp/a/abi_major.so"
printf 'not a shared object at all, only text, and longer than the 64 bytes of an ELF header\n' >"$tmp/a/text.so"
cp "$libs/wrong_grad.so" "$tmp/b/double.so" # shadowed by a/double.so: never opened
cp "$libs/no_entry.so" "$tmp/b/no_entry.so"
cat >"$tmp/list.lua" <<'EOF'
local singa = require "singa"
local td = require "testdata"
for _, p in ipairs(singa.plugins()) do print("plugin " .. p.name .. " " .. table.concat(p.types, ",")) end
local img, lab = td.idx(arg[1], 16, 2, 2, 3)
local r = singa.train{ train_steps = 3, updater = { learning_rate = { base_lr = 0.1 } }, neuralnet = { layer = {
  { name = "data", type = "kIDXData", batchsize = 4, images = img, labels = lab },
  { name = "img", type = "kMnist", srclayer = "data", norm_a = 255 },
  { name = "label", type = "kLabel", srclayer = "data" },
  { name = "fc", type = "kInnerProduct", srclayer = "img", num_output = 2 },
  { name = "double", type = "kDouble", srclayer = "fc" },
  { name = "loss", type = "kSoftmaxLoss", srclayer = { "double", "label" } } } } }
print("trained " .. r.steps)
EOF
SINGA_PLUGIN_PATH="$tmp/nowhere:$tmp/a:$tmp/b" run -e "$tmp/list.lua" "$tmp/data"
[ $rc -eq 0 ] && grep -q '^trained 3$' "$tmp/out"
report $? "a job runs with a plugin from \$SINGA_PLUGIN_PATH, despite the bad ones beside it" "$tmp/err"
[ "$(grep '^plugin ' "$tmp/out" | tr '\n' ' ')" = "plugin double kDouble plugin prelu kPReLU plugin swish kSwish " ]
report $? "plugins load folder by folder, each in name order; a name seen earlier is skipped" "$tmp/out"
grep -q "^singa-tui: plugin '$tmp/a/abi_major.so': built for plugin ABI 2.0, but this libsinga has ABI 1.4 .* (skipped)$" "$tmp/err"
report $? "a plugin of another ABI in a folder is reported on stderr, named, and skipped" "$tmp/err"
grep -q "^singa-tui: plugin '$tmp/a/text.so': cannot load it: .*invalid ELF header (skipped)$" "$tmp/err" &&
    grep -q "^singa-tui: plugin '$tmp/b/no_entry.so': no entry symbol" "$tmp/err"
report $? "so are a file that is not ELF and one without the entry symbol" "$tmp/err"
[ "$(wc -l <"$tmp/err")" -eq 3 ] && ! grep -q "$tmp/b/double.so" "$tmp/err"
report $? "nothing else is reported (the shadowed b/double.so is not opened)" "$tmp/err"
grep '^plugin ' "$tmp/out" >"$tmp/first"
SINGA_PLUGIN_PATH="$tmp/nowhere:$tmp/a:$tmp/b" run -e "$tmp/list.lua" "$tmp/data"
grep '^plugin ' "$tmp/out" | cmp -s - "$tmp/first"
report $? "a second run loads the same plugins in the same order"

SINGA_PLUGIN_PATH="$tmp/nowhere" run -e "$tmp/list.lua" "$tmp/data"
[ $rc -ne 0 ] && [ "$(grep -c '^plugin ' "$tmp/out")" -eq 2 ] && grep -q "unknown layer type 'kDouble'" "$tmp/err" &&
    ! grep -q 'nowhere' "$tmp/err"
report $? "without the folder kDouble is unknown; a missing folder is no error" "$tmp/err"

# A job's `plugins`, each process loading them itself: train, then --test in a new process.
cat >"$tmp/job.lua" <<'EOF'
local singa = require "singa"
local td = require "testdata"
local img, lab = td.idx(arg[1], 16, 2, 2, 3)
local r = singa.train{ train_steps = 3, test_steps = 1, checkpoint_path = arg[1] .. "/ckpt",
  plugins = { arg[2] }, updater = { learning_rate = { base_lr = 0.1 } }, neuralnet = { layer = {
  { name = "data", type = "kIDXData", batchsize = 4, images = img, labels = lab },
  { name = "img", type = "kMnist", srclayer = "data", norm_a = 255 },
  { name = "label", type = "kLabel", srclayer = "data" },
  { name = "fc", type = "kInnerProduct", srclayer = "img", num_output = 2 },
  { name = "double", type = "kDouble", srclayer = "fc" },
  { name = "loss", type = "kSoftmaxLoss", srclayer = { "double", "label" } } } } }
print("trained " .. r.steps)
EOF
run -e "$tmp/job.lua" "$tmp/job" "$libs/double.so"
[ $rc -eq 0 ] && grep -q '^trained 3$' "$tmp/out"
report $? "a job whose \`plugins\` names a plugin trains with its layer" "$tmp/err"
run --test -e "$tmp/job.lua" "$tmp/job" "$libs/double.so"
[ $rc -eq 0 ] && grep -q 'step 3 *test' "$tmp/out"
report $? "--test in a new process loads the job's plugins too" "$tmp/err"
run -e "$tmp/job.lua" "$tmp/job" "$tmp/a/abi_major.so"
[ $rc -ne 0 ] && grep -q "job.lua:4: plugin '$tmp/a/abi_major.so': built for plugin ABI 2.0" "$tmp/err" &&
    ! grep -q '^step' "$tmp/out"
report $? "a job naming a bad plugin stops before training, at the script's line" "$tmp/err"

[ $failed -eq 0 ] && rm -rf "$tmp"
done_testing

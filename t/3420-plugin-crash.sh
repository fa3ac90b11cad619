# A plugin that faults: singa-tui says which layer of which plugin file faulted, in which stage
# (setup, forward, backward), and dies of the signal (exit status 139 for SIGSEGV); a built-in
# layer that faults is named too.  In the workbench the terminal is given back first (tmux).
# The plugin: t/plugins/broken.c built with BROKEN_SEGV.  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
tmp=t/3420-plugin-crash.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
# Under AddressSanitizer (make check-asan) its own handler would take the faults and report them
# its way: leave them to singa-tui's, which is what is tested here.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0:handle_sigbus=0:handle_sigfpe=0:allow_user_segv_handler=1"

plugin=$PWD/t/plugins/.libs/segv.so
cat >"$tmp/job.lua" <<'EOF'
-- job.lua PLUGIN AT: trains a small MLP whose layer 'boom' (kSegv) faults where AT says.
local singa = require "singa"
local td = require "testdata"
singa.load_plugin(arg[1])
local img, lab = td.idx("data", 96, 4)
singa.train{
  name = "segv", seed = 1, train_steps = tonumber(arg[3]) or 5, disp_freq = 1,
  updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = { layer = {
    { name = "data", type = "kIDXData", batchsize = 16, images = img, labels = lab },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 8 },
    { name = "boom", type = "kSegv", srclayer = "fc1", at = arg[2] },
    { name = "fc2", type = "kInnerProduct", srclayer = "boom", num_output = 4 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc2", "label" } },
  } },
}
EOF

# headless AT: runs the job, its status in $rc, its stderr in $tmp/AT.err.
headless() {
    (cd "$tmp" && timeout 60 "$SINGA_TUI" -e job.lua "$plugin" "$1" >"$1.out" 2>"$1.err")
    rc=$?
}

for at in setup forward backward; do
    headless $at
    [ $rc -eq 139 ] &&
        grep -qx "singa-tui: SIGSEGV (segmentation fault) in $at of layer 'boom' (kSegv) of plugin $plugin" "$tmp/$at.err"
    report $? "a plugin's store to a forbidden page in $at: the layer, the plugin file and '$at' on stderr; exit 139 (status $rc)" "$tmp/$at.err"
done
headless none
[ $rc -eq 0 ] && grep -q '^step 4 ' "$tmp/none.out"
report $? "the same plugin, told not to fault, trains (status $rc)" "$tmp/none.err"
# kSegv takes fc1's feature blob away: the built-in kInnerProduct faults in its next forward.
headless source
[ $rc -eq 139 ] &&
    grep -qx "singa-tui: SIGSEGV (segmentation fault) in forward of layer 'fc1' (kInnerProduct, built in)" "$tmp/source.err"
report $? "a built-in layer's fault names the layer; exit 139 (status $rc)" "$tmp/source.err"

# The workbench: the terminal comes back (the alternate screen left, the modes restored), then
# the report.
if command -v tmux >/dev/null 2>&1; then
    . "$top_srcdir/t/tmux.sh"
    start_tui -- --run job.lua "$plugin" forward 1000000
    restored 139 && wait_for "SIGSEGV (segmentation fault) in forward of layer 'boom' (kSegv) of plugin" 5
    report $? "in the workbench: the terminal restored, then the report; exit 139" "$tmp/screen.txt"
else
    skip "the workbench" "tmux is not installed"
fi

done_testing

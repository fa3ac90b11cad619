# The SDK: `make install DESTDIR=...` installs the headers, libsinga, singa.pc and the plugins;
# the plugin of the manual's "Write your own layer" (docs/07-plugins.md; taken from the README and
# the manual's pages, so it lives only there) builds against the installed SDK with the manual's
# command, passes --check-plugin
# (of the build tree's singa-tui and of the installed one) and trains in a Lua job.
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
. "$top_srcdir/t/tap.sh"
tmp=$(pwd)/t/5200-plugin-sdk.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
build=$(cd "$(dirname "$SINGA_TUI")" && pwd)
dest=$tmp/dest

# The make running the suite must not lend its job server or flags to this one.
(cd "$build" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make install DESTDIR="$dest") >"$tmp/install.log" 2>&1
report $? "make install DESTDIR=... succeeds" "$tmp/install.log"
pc=$(find "$dest" -name singa.pc -path '*/pkgconfig/*' | head -n 1)
[ -n "$pc" ] && [ -f "$(dirname "$pc")/../libsinga.so" ] && inc=$(find "$dest" -path '*/include/singa/plugin.h') &&
    [ -n "$inc" ] && [ -f "$(dirname "$inc")/layer.h" ]
report $? "it installs singa.pc, libsinga.so and the headers with singa/plugin.h" "$tmp/install.log"
export PKG_CONFIG_PATH="$(dirname "$pc")" PKG_CONFIG_SYSROOT_DIR="$dest"
cflags=$(pkg-config --cflags singa)
[ "$cflags" = "-I$(dirname "$(dirname "$inc")")" ] || [ "$cflags" = "-I$(dirname "$(dirname "$inc")") " ]
report $? "pkg-config --cflags singa gives the installed include folder ($cflags)"
plugindir=$dest$(PKG_CONFIG_SYSROOT_DIR= pkg-config --variable=plugindir singa)
[ -f "$plugindir/swish.so" ] && [ -f "$plugindir/prelu.so" ]
report $? "the plugins of plugins/ are installed in pkg-config's plugindir ($plugindir)"

# The manual's example, exactly as printed there, built with the manual's command.
awk '/<!-- sdk-example/ { on = 1; next } on && /^```c$/ { code = 1; next } code && /^```$/ { exit } code' \
    "$top_srcdir/README.md" "$top_srcdir"/docs/[0-9][0-9]-*.md >"$tmp/softplus.c"
grep -q 'SINGA_PLUGIN("softplus"' "$tmp/softplus.c"
report $? "the manual has the example plugin" "$tmp/softplus.c"
(cd "$tmp" && cc -shared -fPIC $(pkg-config --cflags singa) softplus.c -o softplus.so) >"$tmp/cc.log" 2>&1
report $? "it builds with: cc -shared -fPIC \$(pkg-config --cflags singa) softplus.c -o softplus.so" "$tmp/cc.log"
(cd "$tmp" && cc -std=c11 -pedantic -Wall -Wextra -Werror -shared -fPIC $(pkg-config --cflags singa) softplus.c \
    -o softplus-libs.so $(pkg-config --libs singa)) >"$tmp/cc-strict.log" 2>&1
report $? "and with -std=c11 -pedantic -Wall -Wextra -Werror, linked with pkg-config --libs" "$tmp/cc-strict.log"

timeout 120 "$SINGA_TUI" --check-plugin "$tmp/softplus.so" >"$tmp/check.out" 2>&1
[ $? -eq 0 ] && grep -q '^ok   kSoftplus: max relative error' "$tmp/check.out"
report $? "singa-tui --check-plugin passes it" "$tmp/check.out"
timeout 120 "$SINGA_TUI" --check-plugin "$tmp/softplus-libs.so" >"$tmp/check-libs.out" 2>&1
[ $? -eq 0 ] && grep -q '^ok   kSoftplus' "$tmp/check-libs.out"
report $? "so does the one linked with libsinga" "$tmp/check-libs.out"
bin=$(find "$dest" -path '*/bin/singa-tui' | head -n 1)
LD_LIBRARY_PATH="$(dirname "$pc")/.." timeout 120 "$bin" --check-plugin "$tmp/softplus.so" >"$tmp/inst.out" 2>&1 &&
    LD_LIBRARY_PATH="$(dirname "$pc")/.." timeout 120 "$bin" --check-plugin "$plugindir/prelu.so" >>"$tmp/inst.out" 2>&1
[ $? -eq 0 ] && [ "$(grep -c '^ok   ' "$tmp/inst.out")" -eq 2 ]
report $? "the installed singa-tui passes it and the installed kPReLU" "$tmp/inst.out"

# Training with it: named by the job's `plugins`, or found in a folder of $SINGA_PLUGIN_PATH.
cat >"$tmp/job.lua" <<'EOF'
local singa = require "singa"
local td = require "testdata"
local procs = arg[3] == "procs" -- then the data exists: the ranks would write it at once
local img, lab = arg[1] .. "/data/images-idx3-ubyte", arg[1] .. "/data/labels-idx1-ubyte"
if not procs then img, lab = td.idx(arg[1] .. "/data", 96, 4) end
local layers = {
  { name = "data", type = "kIDXData", batchsize = 16, shuffle = true, images = img, labels = lab },
  { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
  { name = "label", type = "kLabel", srclayer = "data" },
  { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 16 },
  { name = "act", type = "kSoftplus", srclayer = "fc1", beta = 2 },
  { name = "fc2", type = "kInnerProduct", srclayer = "act", num_output = 4 },
  { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc2", "label" } },
}
local r = singa.train{ name = "sdk", seed = 1, train_steps = 150, disp_freq = 50,
  plugins = arg[2] ~= "" and { arg[2] } or nil,
  cluster = procs and singa.cluster.sandblaster{ workers = 2, procs = 3 } or nil,
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = { layer = layers } }
for _, p in ipairs(singa.plugins()) do print("plugin " .. p.name) end
print(string.format("final loss %.4f accuracy %.4f", r.train.loss, r.train.accuracy))
EOF
timeout 120 "$SINGA_TUI" -e "$tmp/job.lua" "$tmp" "$tmp/softplus.so" >"$tmp/train.out" 2>&1
report $? "a Lua job with kSoftplus, its plugin named in \`plugins\`, runs" "$tmp/train.out"
first=$(sed -n 's/^step 0 .*loss \([0-9.]*\).*/\1/p' "$tmp/train.out")
last=$(sed -n 's/^final loss \([0-9.]*\) accuracy \([0-9.]*\)/\1 \2/p' "$tmp/train.out")
awk -v f="${first:-0}" -v l="${last:-9 0}" 'BEGIN { split(l, a, " "); exit !(a[1] < f / 2 && a[2] > 0.9) }'
report $? "it learns (loss ${first:-?} at step 0; loss and accuracy ${last:-?} at the end)" "$tmp/train.out"
mkdir -p "$tmp/myplugins" && cp "$tmp/softplus.so" "$tmp/myplugins/"
SINGA_PLUGIN_PATH="$tmp/myplugins" timeout 120 "$SINGA_TUI" -e "$tmp/job.lua" "$tmp" "" >"$tmp/path.out" 2>&1 &&
    grep -q '^plugin softplus$' "$tmp/path.out" && [ "$(grep '^final' "$tmp/path.out")" = "$(grep '^final' "$tmp/train.out")" ]
report $? "dropped into a folder of \$SINGA_PLUGIN_PATH, it trains the same numbers" "$tmp/path.out"

# Across processes: every rank loads the plugin the job names, and they train together.
timeout 120 "$SINGA_TUI" --procs 3 -e "$tmp/job.lua" "$tmp" "$tmp/softplus.so" procs >"$tmp/procs.out" 2>&1 &&
    [ "$(grep -c '^plugin softplus$' "$tmp/procs.out")" -eq 3 ] && grep -q '^rank 2 of 3 .*: servers 0.0$' "$tmp/procs.out"
report $? "in 3 processes (singa-tui --procs 3, Sandblaster), every rank loads it and the job runs" "$tmp/procs.out"
last=$(sed -n 's/^final loss \([0-9.]*\) accuracy \([0-9.]*\)/\1 \2/p' "$tmp/procs.out" | head -n 1)
awk -v f="${first:-0}" -v l="${last:-9 0}" 'BEGIN { split(l, a, " "); exit !(a[1] < f / 2 && a[2] > 0.9) }'
report $? "it learns there too (loss and accuracy ${last:-?} at the end)" "$tmp/procs.out"

[ $failed -eq 0 ] && rm -rf "$tmp"
done_testing

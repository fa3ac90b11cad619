# A new --prefix on a built tree: configure --prefix=A and make, then configure --prefix=B, make
# and make install; the singa-tui installed in B starts and finds B's Lua files, libsinga and
# plugins (paths.h and the relinked .la files, Makefile.am), and its manual names B's folders.
# The tree is a copy of this checkout's tracked files as they are now, so it needs a git
# checkout and the autotools; it costs a whole build, so it runs in `make check-install` (CI),
# not in `make check`.
: "${top_srcdir:?top_srcdir is not set}"
. "$top_srcdir/t/tap.sh"
tmp=$(pwd)/t/5300-install-prefix.tmp
rm -rf "$tmp" && mkdir -p "$tmp/src" || exit 1
src=$(cd "$top_srcdir" && pwd -P)
if [ "$(git -C "$src" rev-parse --show-toplevel 2>/dev/null)" != "$src" ]; then
    skip "configure --prefix=A, make, configure --prefix=B, make install" "$src is not a git checkout"
    rm -rf "$tmp"
    done_testing
    exit
fi
git -C "$src" ls-files -z | (cd "$src" && tar --null --ignore-failed-read -T - -cf -) | tar -xf - -C "$tmp/src"
report $? "the checkout's tracked files copied to a scratch tree"

# The make running the suite must not lend its job server or flags to these ones; -O0 because
# only the folders matter here.
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make "$@"; }
(cd "$tmp/src" && autoreconf -fi && ./configure --prefix="$tmp/A" CFLAGS=-O0 && mk -j2) >"$tmp/a.log" 2>&1
report $? "autoreconf, ./configure --prefix=A and make succeed" "$tmp/a.log"
(cd "$tmp/src" && ./configure --prefix="$tmp/B" CFLAGS=-O0 && mk -j2 && mk install) >"$tmp/b.log" 2>&1
report $? "then ./configure --prefix=B, make and make install succeed" "$tmp/b.log"
cc=$(sed -n 's/^ *CC  *\([^ ]*\)$/\1/p' "$tmp/b.log" | sort | tr '\n' ' ')
cc=${cc% }
case " $cc" in *" src/app/singa_tui-main.o "*) [ "$(echo $cc | wc -w)" -le 5 ] ;; *) false ;; esac
report $? "the new prefix recompiles main.c and only the few other files that use the folders ($cc)" "$tmp/b.log"
[ ! -e "$tmp/A" ]
report $? "nothing went to A"

b=$tmp/B
run() { env -u SINGA_LUA_PATH -u SINGA_PLUGIN_PATH -u SINGA_DEMO_PATH -u LUA_PATH_5_4 -u LUA_PATH \
    -u LD_LIBRARY_PATH timeout 120 "$b/bin/singa-tui" "$@"; }
run --version >"$tmp/version.out" 2>&1 && grep -q '^singa-tui ' "$tmp/version.out"
report $? "the installed singa-tui starts (--version)" "$tmp/version.out"
ldd "$b/bin/singa-tui" >"$tmp/ldd.out" 2>&1
grep -q "libsinga\.so\.0 => $b/lib/libsinga\.so\.0" "$tmp/ldd.out"
report $? "it links B's libsinga" "$tmp/ldd.out"
cat >"$tmp/probe.lua" <<'EOF'
local singa = require "singa"
require "singa.cluster"
print("lua " .. package.searchpath("singa", package.path))
for _, p in ipairs(singa.plugins()) do print("plugin " .. p.name .. " " .. p.path) end
EOF
(cd "$tmp" && run -e probe.lua) >"$tmp/probe.out" 2>&1 &&
    grep -qx "lua $b/share/singa-tui/lua/singa.lua" "$tmp/probe.out"
report $? "a job finds B's Lua files (require \"singa\", \"singa.cluster\")" "$tmp/probe.out"
grep -qx "plugin swish $b/lib/singa-tui/plugins/swish.so" "$tmp/probe.out" &&
    grep -qx "plugin prelu $b/lib/singa-tui/plugins/prelu.so" "$tmp/probe.out"
report $? "and loads B's plugins" "$tmp/probe.out"
grep -q "^\.I $b/lib/singa-tui/plugins/\$" "$b/share/man/man1/singa-tui.1"
report $? "the manual installed in B, singa-tui(1), names B's folders"
run --check-plugin "$b/lib/singa-tui/plugins/swish.so" >"$tmp/check.out" 2>&1 && grep -q '^ok   kSwish' "$tmp/check.out"
report $? "the installed kSwish passes --check-plugin" "$tmp/check.out"

[ $failed -eq 0 ] && rm -rf "$tmp"
done_testing

# The plugin demos run: each trains the Fashion-MNIST MLP with a plugin layer for a few hundred
# steps (singa-tui loads the plugin from plugins/ by itself) and classifies well.
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
. "$top_srcdir/t/tap.sh"
tmp=t/5110-plugin-demos.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
demos=$(cd "$top_srcdir" && pwd)/demos

for demo in swish:kSwish prelu:kPReLU; do
    name=${demo%%:*} type=${demo#*:}
    (cd "$tmp" && timeout 120 "$SINGA_TUI" -e "$demos/plugin_$name.lua" 300) >"$tmp/$name.out" 2>&1
    report $? "demos/plugin_$name.lua runs 300 steps" "$tmp/$name.out"
    grep -q "^plugin $name 1.0.0: $type (.*plugins/.libs/$name.so)$" "$tmp/$name.out"
    report $? "it lists the plugin it uses, loaded from plugins/" "$tmp/$name.out"
    acc=$(sed -n 's/^test accuracy \([0-9.]*\).*/\1/p' "$tmp/$name.out")
    awk -v a="${acc:-0}" 'BEGIN { exit !(a > 0.70) }'
    report $? "after 300 steps its test accuracy is above 0.70 (got ${acc:-none})" "$tmp/$name.out"
    [ -f "$tmp/ckpt/plugin-$name/step000000300.ckpt" ]
    report $? "it leaves its final checkpoint in ckpt/plugin-$name" "$tmp/$name.out"
done
grep -q 'param/prelu1_slope' "$tmp/ckpt/plugin-prelu/step000000300.ckpt"
report $? "kPReLU's slopes are in the demo's checkpoint"

[ $failed -eq 0 ] && rm -rf "$tmp"
done_testing

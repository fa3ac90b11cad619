# The demos still run: each for a few steps, in a scratch folder (they write checkpoints to ./ckpt).
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
. "$top_srcdir/t/tap.sh"
tmp=t/5100-demos.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
demos=$(cd "$top_srcdir" && pwd)/demos

(cd "$tmp" && timeout 120 "$SINGA_TUI" -e "$demos/fmnist_mlp.lua" 200) >"$tmp/mlp.out" 2>&1
report $? "demos/fmnist_mlp.lua runs 200 steps" "$tmp/mlp.out"
acc=$(sed -n 's/^test accuracy \([0-9.]*\).*/\1/p' "$tmp/mlp.out")
awk -v a="${acc:-0}" 'BEGIN { exit !(a > 0.70) }'
report $? "after 200 steps its test accuracy is above 0.70 (got ${acc:-none})" "$tmp/mlp.out"
[ -f "$tmp/ckpt/fmnist-mlp/step000000200.ckpt" ]
report $? "it leaves its final checkpoint in ckpt/fmnist-mlp" "$tmp/mlp.out"
# Its last lines: where the model is, the command that tests it, what singa.predict gives.
tail -n 3 "$tmp/mlp.out" >"$tmp/mlp.tail"
sed -n 1p "$tmp/mlp.tail" | grep -q '^model: ckpt/fmnist-mlp/step000000200\.ckpt ' &&
    sed -n 3p "$tmp/mlp.tail" | grep -q '^  predict:  singa\.predict(job, images)'
report $? "its last lines name the model's file and singa.predict" "$tmp/mlp.tail"
cmd=$(sed -n 's/^  test it:  singa-tui \(--test -e .*\)/\1/p' "$tmp/mlp.tail")
(cd "$tmp" && eval "timeout 120 \"\$SINGA_TUI\" $cmd") >"$tmp/mlp-test.out" 2>&1 &&
    grep -q "^step 200 *test *loss [0-9.]* *accuracy ${acc:-none}\$" "$tmp/mlp-test.out"
report $? "the command they give (singa-tui ${cmd:-?}) tests it: accuracy ${acc:-none} again" "$tmp/mlp-test.out"
# README's first command again: the demo says overwrite = true, so a second run starts over and
# its first checkpoint replaces the first run's.
(cd "$tmp" && timeout 120 "$SINGA_TUI" -e "$demos/fmnist_mlp.lua" 20) >"$tmp/mlp-again.out" 2>&1 &&
    grep -q "checkpoint_path 'ckpt/fmnist-mlp' holds 1 checkpoint of an earlier run (newest: step 200); this run replaces it" "$tmp/mlp-again.out" &&
    grep -q "^removed ckpt/fmnist-mlp/step000000200.ckpt (an earlier run's)" "$tmp/mlp-again.out" &&
    [ "$(ls "$tmp/ckpt/fmnist-mlp")" = step000000020.ckpt ]
report $? "run again in the same folder, demos/fmnist_mlp.lua starts over and replaces its checkpoints" "$tmp/mlp-again.out"

(cd "$tmp" && timeout 120 "$SINGA_TUI" -e "$demos/mlp.lua" 3) >"$tmp/big.out" 2>&1
report $? "demos/mlp.lua (SINGA's 784-2500-2000-1500-1000-500-10 net) runs 3 steps" "$tmp/big.out"
grep -q "^test accuracy" "$tmp/big.out"
report $? "it reports a test accuracy" "$tmp/big.out"

# The convolutional and recurrent demos, a few steps each.
for demo in lenet gru_fmnist; do
    (cd "$tmp" && timeout 120 "$SINGA_TUI" -e "$demos/$demo.lua" 30) >"$tmp/$demo.out" 2>&1
    report $? "demos/$demo.lua runs 30 steps" "$tmp/$demo.out"
    acc=$(sed -n 's/^test accuracy \([0-9.]*\).*/\1/p' "$tmp/$demo.out")
    awk -v a="${acc:-0}" 'BEGIN { exit !(a > 0.3) }'
    report $? "after 30 steps demos/$demo.lua classifies better than chance (test accuracy ${acc:-none})" "$tmp/$demo.out"
    ckpt=ckpt/$(echo $demo | tr _ -)/step000000030.ckpt
    tail -n 3 "$tmp/$demo.out" | grep -q "^model: $ckpt " && [ -f "$tmp/$ckpt" ]
    report $? "its last lines say where the model is ($ckpt)" "$tmp/$demo.out"
done
if [ -r /usr/share/games/fortunes/cookie ]; then
    # 24 characters of sample, not 240: each is a singa.predict, about 0.3 s under ASan.
    (cd "$tmp" && timeout 120 "$SINGA_TUI" -e "$demos/char_rnn.lua" 30 /usr/share/games/fortunes/cookie 24) \
        >"$tmp/char.out" 2>&1
    report $? "demos/char_rnn.lua runs 30 steps" "$tmp/char.out"
    grep -q "^per-character loss" "$tmp/char.out" && grep -q "^sample: The " "$tmp/char.out"
    report $? "it reports its per-character loss and a sample" "$tmp/char.out"
    tail -n 2 "$tmp/char.out" | grep -q '^model: ckpt/char-rnn/step000000030\.ckpt ' &&
        tail -n 1 "$tmp/char.out" | grep -q '^  predict:  singa\.predict(job, { row }, "sample")'
    report $? "then where the model is and how singa.predict samples from it" "$tmp/char.out"
else
    echo "ok $((n += 1)) # SKIP the fortunes package (the char-rnn corpus) is not installed"
fi

# On a terminal a progress line is redrawn in place; in a pipe (as above) there is none.
! grep -q ETA "$tmp/mlp.out"
report $? "no progress line when stdout is not a terminal" "$tmp/mlp.out"
if command -v script >/dev/null 2>&1; then
    (cd "$tmp" && timeout 120 script -qec "'$SINGA_TUI' -e '$demos/fmnist_mlp.lua' 300" /dev/null) >"$tmp/tty.out" 2>&1
    tr '\r' '\n' <"$tmp/tty.out" | grep -a -q '^.*\[300/300\]  loss [0-9.]*  accuracy [0-9.]*  [0-9]* images/s  elapsed [0-9]*s  ETA 0s'
    report $? "on a terminal the progress line shows step/total, loss, accuracy, images/s and ETA" "$tmp/tty.out"
else
    echo "ok $((n += 1)) # SKIP script(1) is not installed"
fi

[ $failed -eq 0 ] && rm -rf "$tmp"
done_testing

# demos/export_onnx.lua: exports the Fashion-MNIST MLP (trained here for 200 steps) and runs it
# in onnxruntime-node (demos/onnx_predict.js) on the 10,000 test images: the same classes and
# probabilities as singa.predict.
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
. "$top_srcdir/t/tap.sh"
tmp=t/7240-onnx-demo.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
demos=$(cd "$top_srcdir" && pwd)/demos
fm=${FMNIST_DIR:-/usr/share/datasets/fashion-mnist/}
ort=${SINGA_ONNXRUNTIME_DIR:-/usr/local/lib/singa-onnxruntime}

if [ ! -f "$fm/t10k-images-idx3-ubyte.gz" ]; then
    echo "1..0 # SKIP no Fashion-MNIST in $fm (the Debian package dataset-fashion-mnist)"
    exit 0
fi
if [ ! -f "$ort/node_modules/onnxruntime-node/package.json" ] || ! command -v node >/dev/null 2>&1; then
    echo "1..0 # SKIP onnxruntime-node is not in $ort (scripts/install-deps.sh installs it)"
    exit 0
fi

(cd "$tmp" && timeout 300 "$SINGA_TUI" -e "$demos/export_onnx.lua" 200 mlp.onnx) >"$tmp/out" 2>&1
report $? "demos/export_onnx.lua trains the MLP 200 steps, exports it and runs it" "$tmp/out"
grep -q "^wrote mlp.onnx: [0-9]* nodes, [0-9]* bytes, input 'data' (raw pixels), output 'loss', params of ckpt/fmnist-mlp/step000000200.ckpt\$" "$tmp/out"
report $? "it says what it exported" "$tmp/out"
acc=$(sed -n 's/^onnxruntime-node .*: 10000 images through mlp.onnx .*, accuracy \([0-9.]*\)$/\1/p' "$tmp/out")
awk -v a="${acc:-0}" 'BEGIN { exit !(a > 0.70) }'
report $? "onnxruntime-node classifies the test set (accuracy ${acc:-none})" "$tmp/out"
diff=$(sed -n 's/^onnxruntime vs singa.predict: same class for 10000 of 10000 images, largest probability difference \(.*\)$/\1/p' "$tmp/out")
awk -v d="${diff:-1}" 'BEGIN { exit !(d + 0 <= 1e-5) }'
report $? "as singa.predict does: every class the same, probabilities within 1e-5 (${diff:-none})" "$tmp/out"
(cd "$tmp" && timeout 120 "$SINGA_TUI" -e "$demos/export_onnx.lua" 200 again.onnx) >"$tmp/again" 2>&1 &&
    ! grep -q "training the MLP" "$tmp/again" && cmp -s "$tmp/mlp.onnx" "$tmp/again.onnx"
report $? "run again, it exports the checkpoint it left, to the same bytes" "$tmp/again"

[ $failed -eq 0 ] && rm -rf "$tmp"
done_testing

# What a layer may see (issue 32): a built-in layer reads its context (l->ctx, src/layers/ctx.h),
# never a member of the net that runs it, so walks over a net's layers live in net/; and the
# ONNX export goes through the layer types' export_onnx, so no file of train/ names a built-in
# layer type.  Every hit is printed, by file and line.
: "${top_srcdir:?top_srcdir is not set}"
. "$top_srcdir/t/tap.sh"
export LC_ALL=C
tmp=t/3170-layer-ctx.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1

(cd "$top_srcdir" && grep -n 'net->' src/layers/*.c) >"$tmp/net"
[ ! -s "$tmp/net" ]
report $? "no file of src/layers reads a member of struct singa_net ($(wc -l <"$tmp/net") reads do)" "$tmp/net"

(cd "$top_srcdir" && grep -nE '&singa_[a-z0-9_]+_layer\b' src/train/*.c) >"$tmp/types"
[ ! -s "$tmp/types" ]
report $? "no file of src/train names a built-in layer type ($(wc -l <"$tmp/types") names do)" "$tmp/types"

(cd "$top_srcdir" && grep -L 'export_onnx' src/layers/inner_product.c src/layers/conv.c src/layers/pooling.c \
    src/layers/activation.c src/layers/softmax.c src/layers/mnist.c) >"$tmp/exports"
[ ! -s "$tmp/exports" ]
report $? "built-in layer types carry their own ONNX form (export_onnx)" "$tmp/exports"

[ $failed -eq 0 ] && rm -rf "$tmp"
done_testing

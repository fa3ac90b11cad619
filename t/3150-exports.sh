# libsinga exports exactly what include/singa declares: the symbols of the built libsinga.so
# (nm -D, in libtool's .libs) against the functions and objects the public headers declare
# (parsed from the headers, so a function moved or renamed needs no change here).  An exported
# symbol no header declares leaked out of the library; a declared one that is not exported is a
# header without its visibility wrapper (or a function nobody defines).
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
. "$top_srcdir/t/tap.sh"
export LC_ALL=C
tmp=t/3150-exports.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
lib=$(dirname "$SINGA_TUI")/.libs/libsinga.so

# Names starting with '_' belong to the toolchain (_init, _edata, a sanitizer's __odr_asan...).
[ -f "$lib" ] && nm -D --defined-only "$lib" >"$tmp/nm.out" 2>&1 &&
    awk 'NF >= 3 { s = $3; sub(/@.*/, "", s); if (s !~ /^_/) print s }' "$tmp/nm.out" | sort -u >"$tmp/exported"
report $? "nm -D lists the symbols of $lib ($(wc -l <"$tmp/exported" 2>/dev/null) exported)" "$tmp/nm.out"

# The declarations: comments and preprocessor lines (with their continuations) dropped, then
# every statement at file scope that ends with ';' and is not a typedef, a type's definition or a
# static function: "name header" for each function (the identifier before the first '(') and
# each extern object.
awk '
function flush(   n, i, c, depth, st) {
    n = length(buf)
    for (i = 1; i <= n; i++) {
        c = substr(buf, i, 1)
        if (c == "{")
            depth++
        else if (c == "}" && --depth == 0 && st ~ /^[ \t]*static[ \t]/) { # an inline function
            st = ""
            continue
        }
        if (c == ";" && depth == 0) {
            decl(st)
            st = ""
        } else
            st = st c
    }
    buf = ""
}
function decl(st,   w, n) {
    gsub(/[ \t]+/, " ", st)
    sub(/^ /, "", st)
    if (st ~ /[{]/ || st ~ /^(typedef|static) /)
        return
    while (match(st, /__attribute__ *\(\(([^()]|\([^()]*\))*\)\)/))
        st = substr(st, 1, RSTART - 1) substr(st, RSTART + RLENGTH)
    if (match(st, /[A-Za-z_][A-Za-z0-9_]* *\(/)) {
        st = substr(st, RSTART, RLENGTH)
        sub(/ *\($/, "", st)
        print st, header
    } else if (st ~ /^extern /) {
        sub(/ *\[.*$/, "", st)
        n = split(st, w, /[ *]+/)
        print w[n], header
    }
}
FNR == 1 { if (NR > 1) flush(); header = FILENAME; sub(/.*\/include\//, "include/", header) }
{
    line = $0
    out = ""
    while (line != "") {
        if (incomment) {
            if (!(i = index(line, "*/")))
                break
            line = substr(line, i + 2)
            incomment = 0
        } else if ((i = index(line, "/*"))) {
            out = out substr(line, 1, i - 1) " "
            line = substr(line, i + 2)
            incomment = 1
        } else {
            out = out line
            break
        }
    }
    if ((i = index(out, "//")))
        out = substr(out, 1, i - 1)
    if (cont || out ~ /^[ \t]*#/) {
        cont = $0 ~ /\\[ \t]*$/
        next
    }
    buf = buf " " out
}
END { flush() }' "$top_srcdir"/include/singa/*.h | sort -u >"$tmp/declared.where"
cut -d' ' -f1 "$tmp/declared.where" | sort -u >"$tmp/declared"
grep -qx singa_tensor_gemm "$tmp/declared" && grep -qx singa_layer_common_fields "$tmp/declared" &&
    grep -qx singa_err_prefix "$tmp/declared"
report $? "the headers of include/singa declare $(wc -l <"$tmp/declared") functions and objects, as parsed" \
    "$tmp/declared"

# The plugin entry is declared for plugins to define (singa/plugin.h): libsinga must not.
entry=$(sed -n 's/^#define SINGA_PLUGIN_ENTRY_SYMBOL "\(.*\)"/\1/p' "$top_srcdir/include/singa/plugin.h")
[ -n "$entry" ]
report $? "singa/plugin.h names the plugins' entry symbol ($entry)"

{ comm -23 "$tmp/exported" "$tmp/declared"; grep -x "$entry" "$tmp/exported"; } >"$tmp/undeclared"
[ -s "$tmp/exported" ] && [ ! -s "$tmp/undeclared" ]
report $? "every symbol libsinga exports is declared in include/singa ($(wc -l <"$tmp/undeclared") are not)"
sed 's/^/#   exported, declared by no public header: /' "$tmp/undeclared"

comm -13 "$tmp/exported" "$tmp/declared" | grep -vx "$entry" | join - "$tmp/declared.where" >"$tmp/hidden"
[ -s "$tmp/exported" ] && [ -s "$tmp/declared" ] && [ ! -s "$tmp/hidden" ]
report $? "every function and object include/singa declares is exported ($(wc -l <"$tmp/hidden") are not)"
sed 's/^\([^ ]*\) \(.*\)/#   declared in \2, not exported: \1/' "$tmp/hidden"

[ $failed -eq 0 ] && rm -rf "$tmp"
done_testing

# The folders of src/ form a DAG (docs/09-layout.md): core <- onnx <- layers (plugin beside it) <- net <-
# ckpt <- train <- runtime <- plan <- metricsfile <- lua <- tui <- app.  A folder may use its own and lower
# folders only: (1) its private includes ("folder/file.h") name no higher folder, and (2) in
# the built objects no object of a folder references a symbol an object of a higher folder
# defines (calls through function pointers a lower folder defines itself are how it is called
# back, and are not seen).
# Every violation is printed, by file and include or symbol.  Public headers (singa/...) are
# the library's interface and may be included anywhere.
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
. "$top_srcdir/t/tap.sh"
export LC_ALL=C
tmp=t/3160-layering.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
build=$(dirname "$SINGA_TUI")

# The rank of each folder: lower ranks are below.  onnx is the ONNX graph writer each layer type
# writes its form with (net/onnx_model.c walks a net's layers through it).  layers and plugin
# share one (the registry keeps the plugins it loaded; the loader adds their types to the
# registry).  app is the
# program, which starts the workbench.  metricsfile (the program's, not libsinga's: the format
# of --metrics files that lua/ writes and lua/ and tui/ read) sits between runtime and lua.  plan
# (the planner: it profiles a job, times the runtime's codecs and ranks configurations) sits on
# runtime, below lua, which calls it for cluster.plan = "auto".
ranks='core 0
layers 1
plugin 1
onnx 0.5
net 2
ckpt 3
train 4
runtime 5
plan 5.2
metricsfile 5.5
lua 6
tui 7
app 8'
echo "$ranks" >"$tmp/ranks"

# Every folder of src/ has a rank.
for d in "$top_srcdir"/src/*/; do
    d=$(basename "$d")
    grep -q "^$d " "$tmp/ranks" || echo "src/$d has no place in the layering (add it to t/3160-layering.sh)"
done >"$tmp/folders"
[ ! -s "$tmp/folders" ]
report $? "every folder of src/ has its place among $(cut -d' ' -f1 "$tmp/ranks" | paste -sd' ')" "$tmp/folders"

# (1) Includes: "src/F/file: #include "G/..."" for each folder G of src/ ranked above F.
(cd "$top_srcdir" && grep -H '^[ \t]*#[ \t]*include[ \t]*"[a-z_]*/' src/*/*.[ch] src/*/*/*.[ch] 2>/dev/null) |
    awk -v ranks="$tmp/ranks" '
        BEGIN { while ((getline l <ranks) > 0) { split(l, f, " "); rank[f[1]] = f[2] } }
        {
            split($0, p, "/"); from = p[2]
            file = $0; sub(/:.*/, "", file)
            header = $0; sub(/^[^"]*"/, "", header); sub(/".*/, "", header)
            to = header; sub(/\/.*/, "", to)
            if ((from in rank) && (to in rank) && rank[to] > rank[from])
                printf "%s includes \"%s\" (%s is above %s)\n", file, header, to, from
        }' >"$tmp/includes"
[ ! -s "$tmp/includes" ]
report $? "no file of src/ includes a private header of a folder above its own ($(wc -l <"$tmp/includes") do)"
sed 's/^/#   /' "$tmp/includes"

# (2) Symbols: the objects of src/F built here (in its subfolders and libtool's .libs/ too;
# objects whose source is gone are stale, and skipped) as "folder file.c object", then nm's
# global symbols of each.
find "$build/src" -name '*.o' | sort | while read -r o; do
    rel=${o#"$build"/src/}
    folder=${rel%%/*}
    sub=$(dirname "${rel#"$folder"/}")
    sub=${sub%.libs}
    sub=${sub%/}
    base=$(basename "$o" .o)
    src=${sub:+$sub/}${base#*-}.c # automake names a target's objects target-file.o
    src=${src#./}
    [ -f "$top_srcdir/src/$folder/$src" ] && echo "$folder $src $o"
done >"$tmp/objects"
while read -r folder src o; do
    nm -g "$o" | awk -v f="$folder" -v s="$src" '
        NF == 2 && ($1 == "U" || $1 == "w") { print "use", f, s, $2 }
        NF == 3 && $2 != "U" { print "def", f, s, $3 }'
done <"$tmp/objects" >"$tmp/symbols"
awk -v ranks="$tmp/ranks" '
    BEGIN { while ((getline l <ranks) > 0) { split(l, f, " "); rank[f[1]] = f[2] } }
    $1 == "def" && !($4 in def) { def[$4] = $2; where[$4] = "src/" $2 "/" $3 }
    $1 == "use" { n++; uf[n] = $2; us[n] = $3; sym[n] = $4 }
    END {
        for (i = 1; i <= n; i++) {
            g = def[sym[i]]
            if (g != "" && (uf[i] in rank) && (g in rank) && rank[g] > rank[uf[i]])
                printf "src/%s/%s uses %s of %s (%s is above %s)\n", uf[i], us[i], sym[i], where[sym[i]], g, uf[i]
        }
    }' "$tmp/symbols" | sort -u >"$tmp/uses"
[ "$(grep -c '^def' "$tmp/symbols")" -gt 100 ] && [ ! -s "$tmp/uses" ]
report $? "no object of src/ uses a symbol defined in a folder above its own ($(wc -l <"$tmp/objects") objects, \
$(wc -l <"$tmp/uses") uses)"
sed 's/^/#   /' "$tmp/uses"

[ $failed -eq 0 ] && rm -rf "$tmp"
done_testing

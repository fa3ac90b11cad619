# The workbench's layout at every small size, under tmux: from its minimum 60x16 up to 80x24
# no panel's border reaches the key bar (the last row), the console's `lua>` prompt lies
# inside its panel, and below the minimum the message names the size needed, down to 12x4.
# Run by `make check` with SINGA_TUI and top_srcdir set; prints TAP.
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
tmp=t/6130-tui-sizes.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/tmux.sh"

cp "$top_srcdir/t/tui-tiny.lua" "$tmp/tiny.lua" || exit 1

start_tui -x 60 -y 16 -- tiny.lua
wait_for 'ready: r starts' 30
report $? "the job opens at 60x16" "$tmp/screen.txt"

# Checks the screen at W x H: the key bar (the last row) holds no border, every other row but
# the title holds one, and the prompt sits between the console's side borders, above its
# bottom border.
check_layout() {
    W=$1 H=$2 f=$3
    awk -v W="$W" -v H="$H" '
        { row[NR] = $0 }
        END {
            if (NR < H) { print "only " NR " rows"; exit 1 }
            if (row[H] ~ /[│─┌┐└┘]/) { print "a border on the key bar: " row[H]; exit 1 }
            if (row[H] !~ /q quit/) { print "no key bar: " row[H]; exit 1 }
            for (y = 2; y < H; y++) if (row[y] !~ /[│┌└]/) { print "row " y " has no border: " row[y]; exit 1 }
            p = 0
            for (y = 1; y <= H; y++) if (row[y] ~ /lua> /) p = y
            if (!p) { print "no prompt"; exit 1 }
            if (row[p] !~ /│ lua> .*│$/) { print "the prompt is not inside its panel: " row[p]; exit 1 }
            below = 0
            for (y = p + 1; y < H; y++) if (row[y] ~ /└/) below = 1
            if (!below) { print "no border below the prompt"; exit 1 }
            for (y = 1; y <= H; y++) if (row[y] ~ /6 Lua console/) t = y
            if (!t || t >= p) { print "the console title is not above the prompt"; exit 1 }
        }' "$f"
}

bad=
for W in 60 61 63 66 70 75 80; do
    for H in 16 17 18 19 20 21 22 24; do
        T resize-window -x $W -y $H
        i=0
        while [ $i -lt 25 ]; do # until the workbench has redrawn at the new size
            sleep 0.1
            screen >"$tmp/s.txt"
            [ "$(wc -l <"$tmp/s.txt")" -ge $H ] && grep -q 'q quit' "$tmp/s.txt" && grep -q 'lua> ' "$tmp/s.txt" &&
                check_layout $W $H "$tmp/s.txt" >/dev/null && break
            i=$((i + 1))
        done
        if ! out=$(check_layout $W $H "$tmp/s.txt"); then
            bad="$bad ${W}x$H"
            { echo "${W}x$H: $out"; cat "$tmp/s.txt"; } >>"$tmp/bad.txt"
        fi
    done
done
[ -z "$bad" ]
report $? "from 60x16 to 80x24 no border on the key bar, the prompt inside its panel${bad:+ (not at$bad)}" "$tmp/bad.txt"

for size in 40x12 59x16 60x15 30x8 20x6 12x4; do
    T resize-window -x "${size%x*}" -y "${size#*x}"
    sleep 0.4
    screen >"$tmp/small.txt"
    tr '\n' ' ' <"$tmp/small.txt" | tr -s ' ' | grep -q '60x16'
    report $? "at $size the too-small message names the minimum 60x16" "$tmp/small.txt"
done
T resize-window -x 40 -y 12
sleep 0.4
screen >"$tmp/small.txt"
tr '\n' ' ' <"$tmp/small.txt" | tr -s ' ' | grep -q 'needs 60x16; this terminal is 40x12'
report $? "... and the terminal's own size" "$tmp/small.txt"

keys q
restored 0
report $? "q quits" "$tmp/screen.txt"
tui_done

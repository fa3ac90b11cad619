# The net's summary in the workbench's Topology panel (layers, output shapes, param counts,
# the total) and singa.params() in the console while the job trains.  Run by `make check` with
# SINGA_TUI and top_srcdir set; prints TAP.
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
tmp=t/6170-tui-summary.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/tmux.sh"

cp "$top_srcdir/t/tui-tiny.lua" "$tmp/tiny.lua" || exit 1

start_tui -y 60 -- tiny.lua # tall enough for the whole summary
wait_for 'ready: r starts' 30
grep -q '│   layer  *type  *output  *params' "$tmp/screen.txt" && grep -q '│   fc  *kInnerProduct  *16x4  *260 ' "$tmp/screen.txt" &&
    grep -q '│   total params: 260 ' "$tmp/screen.txt"
report $? "the Topology panel shows the net's summary: layer, type, output shape, params, total" "$tmp/screen.txt"

keys r
wait_for 'step   [1-9][0-9]*/' 30
keys : 'local n, k = 0, 0 for name, t in pairs(singa.params()) do n = n + t:numel() k = k + 1 end print("params " .. k .. " values " .. n)' Enter
wait_for 'params 2 values 260' 10
report $? "singa.params() in the console gives the running job's params as tensors" "$tmp/screen.txt"
keys Escape q
wait_for 'Quit while training' 10
keys y
restored 0
report $? "q y quits" "$tmp/screen.txt"
tui_done

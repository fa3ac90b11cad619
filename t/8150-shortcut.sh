# Processes of one host talk over Unix sockets, not TCP (src/runtime/peers.c): every process's
# ROUTER also listens on the abstract socket @singa-<its tcp host:port>, the others connect there
# once they have met over tcp, and no TCP connection between them outlives the meeting.  The same
# when the job's address is one of the host's interfaces rather than loopback.  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8150-shortcut.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

cat >"$tmp/job.lua" <<'EOF'
local singa = require "singa"
local td = require "testdata"
local dir = arg[1]
singa.train{
  name = "shortcut", seed = 3, train_steps = 1000000, disp_freq = 20, test_steps = 0,
  cluster = singa.cluster.allreduce{ workers = 3, procs = 3, join_timeout = 60 },
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.01 } },
  neuralnet = td.mlp(dir .. "/data/images-idx3-ubyte", dir .. "/data/labels-idx1-ubyte", 48),
}
EOF
gen_data

# The lines of /proc/net/unix for the abstract name $1 in state $2 (01: listening, 03: connected).
unix_n() { awk -v p="@singa-$1" -v st="$2" '$8 == p && $6 == st' /proc/net/unix | wc -l; }
# Established TCP connections from or to port $1 (hex in /proc/net/tcp, state 01).
tcp_n() {
    hex=$(printf '%04X' "$1")
    awk -v h="$hex" '$4 == "01" && (substr($2, length($2) - 3) == h || substr($3, length($3) - 3) == h)' \
        /proc/net/tcp | wc -l
}

# shortcut NAME HOST: a 3-process job with its coordinator and listeners on HOST; checks, while it
# trains, each rank's Unix socket (listening, and connected from the 2 others) and that no TCP
# connection joins the ranks' ports.
shortcut() {
    name=$1 host=$2
    port=$(python3 -c "import socket; s=socket.socket(); s.bind(('$host', 0)); print(s.getsockname()[1])")
    SINGA_COORDINATOR=tcp://$host:$port SINGA_BIND=$host timeout 120 "$SINGA_TUI" --procs 3 -e "$tmp/job.lua" "$tmp" \
        >"$tmp/$name.out" 2>&1 &
    launcher=$!
    for _ in $(seq 1200); do
        eps=$(sed -n "s/^rank [12] of 3 (pid [0-9]*, SINGA_RANK) at tcp:\/\/$host:\([0-9]*\): .*/\1/p" "$tmp/$name.out")
        [ "$(echo $eps | wc -w)" -eq 2 ] && [ "$(grep -c '^step ' "$tmp/$name.out")" -ge 2 ] && break
        sleep 0.05
    done
    {
        echo "ports: coordinator $port, ranks 1 and 2: $(echo $eps)"
        ok=0
        for p in $port $eps; do
            l=$(unix_n "$host:$p" 01) c=$(unix_n "$host:$p" 03) t=$(tcp_n "$p")
            echo "@singa-$host:$p: $l listening, $c connected; $t established TCP connections on port $p"
            [ "$l" -eq 1 ] && [ "$c" -eq 2 ] && [ "$t" -eq 0 ] || ok=1
        done
        [ "$(echo $eps | wc -w)" -eq 2 ] || ok=1
    } >"$tmp/$name.check"
    kill_ours
    wait "$launcher" 2>/dev/null
    cat "$tmp/$name.check" >>"$tmp/$name.out"
    sed 's/^/# /' "$tmp/$name.check"
    return $ok
}

shortcut loopback 127.0.0.1
report $? "on loopback each rank's socket @singa-127.0.0.1:<port> listens, the 2 others are connected to it, no TCP is left" \
    "$tmp/loopback.out"

# An address of one of this host's interfaces (not loopback) is this host too.
own=$(ip -4 -o addr 2>/dev/null | awk '$2 != "lo" { sub("/.*", "", $4); print $4; exit }')
if [ -n "$own" ]; then
    shortcut interface "$own"
    report $? "at this host's address $own too: Unix sockets, no TCP left" "$tmp/interface.out"
else
    skip "at an interface's address" "no interface but loopback has an IPv4 address here"
fi
[ $failed -eq 0 ] && rm -rf "$tmp"
done_testing

# bench/netns.sh: two "machines" for the network benchmarks (bench/net.sh, bench/tta.sh), sourced
# after bench/common.sh.  As root, network namespaces A (and B for the 1gbit link) that the
# caller makes per run and removes: 10.232.N.1 in A and .2 in B, joined by a veth pair whose ends
# tbf shapes to 1 Gbit/s (this kernel has tbf, not netem), like two machines on gigabit
# Ethernet; loopback puts both processes in A.  Without root, $root is 0 and the caller runs
# singa-tui --procs on this host instead.
#
# Set by the caller: $tui, $py, $here, $tmp.  pair() sets $link, $kind, $port; rank() takes
# $rank0_flags (singa-tui flags for rank 0 only, such as --metrics FILE).
root=0
if [ "$(id -u)" -eq 0 ] && command -v ip >/dev/null 2>&1 && command -v tc >/dev/null 2>&1; then root=1; fi
nsa=singa-bench-$$-a nsb=singa-bench-$$-b net=10.232.$(($$ % 250))
cleanup_ns() { ip netns del "$nsa" 2>/dev/null; ip netns del "$nsb" 2>/dev/null; }
trap 'cleanup_ns; rm -rf "$tmp"' EXIT

make_ns() { # LINK
    cleanup_ns
    ip netns add "$nsa" && ip -n "$nsa" link set lo up || return 1
    [ "$1" = loopback ] && return 0
    ip netns add "$nsb" && ip -n "$nsb" link set lo up &&
        ip link add "bva$$" type veth peer name "bvb$$" &&
        ip link set "bva$$" netns "$nsa" && ip link set "bvb$$" netns "$nsb" &&
        ip -n "$nsa" addr add "$net.1/24" dev "bva$$" && ip -n "$nsb" addr add "$net.2/24" dev "bvb$$" &&
        ip -n "$nsa" link set "bva$$" up && ip -n "$nsb" link set "bvb$$" up &&
        tc -n "$nsa" qdisc add dev "bva$$" root tbf rate 1gbit burst 256kb latency 50ms &&
        tc -n "$nsb" qdisc add dev "bvb$$" root tbf rate 1gbit burst 256kb latency 50ms
}

tx_bytes() { # LINK: bytes the link's interfaces sent so far
    if [ "$1" = loopback ]; then
        ip netns exec "$nsa" cat /sys/class/net/lo/statistics/tx_bytes
    else
        echo $(($(ip netns exec "$nsa" cat "/sys/class/net/bva$$/statistics/tx_bytes") +
            $(ip netns exec "$nsb" cat "/sys/class/net/bvb$$/statistics/tx_bytes")))
    fi
}

# rank R ARGS...: rank R of a run of $kind on $link (set by pair), in its namespace.
rank() {
    r=$1
    shift
    ns=$nsa addr=127.0.0.1 coord=127.0.0.1 ifname=lo flags=
    [ "$r" = 0 ] && flags=${rank0_flags:-}
    if [ "$link" = 1gbit ]; then
        addr=$net.$((r + 1)) coord=$net.1 ifname=bva$$
        [ "$r" = 1 ] && ns=$nsb ifname=bvb$$
    fi
    if [ "$kind" = singa ]; then
        ip netns exec "$ns" env SINGA_RANK="$r" SINGA_SIZE=2 SINGA_COORDINATOR="tcp://$coord:$port" \
            SINGA_BIND="$addr" timeout 900 "$tui" $flags -e "$@"
    else
        ip netns exec "$ns" env RANK="$r" WORLD_SIZE=2 MASTER_ADDR="$coord" MASTER_PORT="$port" \
            GLOO_SOCKET_IFNAME="$ifname" timeout 900 "$py" "$here/ddp_ref.py" "$@"
    fi
}

# pair LINK KIND ARGS...: the two ranks of one run; KIND singa runs singa-tui -e ARGS, ddp runs
# bench/ddp_ref.py ARGS.  Rank 0's output is this one's; the bytes the link carried go to
# $tmp/wire.
pair() {
    link=$1 kind=$2
    shift 2
    port=$((20000 + ($$ + $(date +%s)) % 20000))
    before=$(tx_bytes "$link")
    rank 1 "$@" >"$tmp/rank1.out" 2>&1 &
    pid1=$!
    rank 0 "$@"
    rc=$?
    wait "$pid1" || { rc=1; tail -n 15 "$tmp/rank1.out" >&2; }
    echo $(($(tx_bytes "$link") - before)) >"$tmp/wire"
    return $rc
}

#!/bin/sh
# bench/net.sh: the race over a network.  `make bench-net` runs it from the build directory; it
# also runs as `sh bench/net.sh` from a source tree that has been built.
#
# Two processes train bench/bigmlp.lua's and bench/lenet.lua's nets (batch 64, SGD with momentum
# 0.9, 1 BLAS thread a process) against PyTorch DistributedDataParallel (gloo, bench/ddp_ref.py)
# with the same global batch, and against one process alone.  Configurations:
#   one        singa-tui, one process, no cluster (bench/dist_net.lua MODEL 0 1)
#   allreduce  data-parallel: a worker and a server in each process, the batch split
#              (bench/dist_net.lua MODEL 2 1 ... batch 2)
#   allreduce-fp16, allreduce-topk, allreduce-topk8  the same with cluster.compress = "fp16", or
#              top-k 1% with error feedback and the values back in fp16, or as int8 changes
#              (... batch 2 fp16|topk|topk8)
#   allreduce-powersgd  the same with cluster.compress = { powersgd = 4 }: factors both ways,
#              every process applying the update itself (... batch 2 powersgd); not by default,
#              allreduce-topkupdate: top-k 1% with values = "update" (the summed update's pairs back)
#   feature    the net cut on the features across the 2 processes (... feature 2)
#   hogwild-outer  a Hogwild group in each process, each training the whole batch, syncing every
#              50 updates with cluster.outer kNesterov (DiLoCo; ... outer 2); images/s of both
#              groups; at least 100 timed steps, so that rounds count (plan-auto's too)
#   pipeline   bigmlp cut between its layers (fc1-fc2 in one process, fc3-fc6 in the other), each
#              batch in 8 micro-batches of a 1F1B pipeline (neuralnet.micro_batches; ... pipeline 2);
#              lenet has no such row
#   plan-auto  cluster.plan = "auto": the planner's choice over the 2 processes (its link named by
#              SINGA_PLAN_LINK: local on loopback, 1gbit over the shaped link; ... auto 2)
#   ddp        PyTorch DDP, 2 processes, each half of the global batch
# Links (as root, each run's processes in network namespaces this script makes and removes):
#   loopback   both processes in one namespace, over its loopback, unshaped
#   1gbit      one process in each of two namespaces joined by a veth pair, each end shaped to
#              1 Gbit/s by tbf (the kernel here has tbf, not netem), like two machines on
#              gigabit Ethernet
# Without root, loopback runs in this namespace (no wire bytes for DDP then) and 1gbit is skipped
# with a message.  On loopback singa-tui's processes talk over Unix sockets (src/runtime/peers.c),
# so its wire bytes there are its own count of the bytes of the messages of a timed step.
#
# Printed per model, link and configuration: images/s (median over rounds; of the timed loop, as
# the DDP reference times its loop after its warm-up: singa-tui's display window over the timed
# steps, all but the job's first, which waits for the initial values), the ratio to one
# process and to DDP on the same link, and the wire bytes per step: what the link's interfaces
# carried over the whole run (setup and warm-up included, TCP/IP headers included) divided by the
# steps run.  Every round runs each configuration once, the order reversed every other round.
#
# Environment:
#   BENCH_ROUNDS=3                          rounds (medians over rounds)
#   BENCH_QUICK=1                           smoke run: 1 round, few steps (numbers not meaningful)
#   BENCH_NET_MODELS="bigmlp lenet"
#   BENCH_NET_LINKS="loopback 1gbit"
#   BENCH_NET_CONFIGS="one allreduce allreduce-fp16 allreduce-topk allreduce-topk8 allreduce-powersgd feature hogwild-outer pipeline plan-auto ddp"
#   BENCH_NET_STEPS                         timed steps of every run (default: per model and link)
#   BENCH_WAIT_IDLE=0                       wait up to this many seconds for idle CPUs per round
#   SINGA_TUI, PYTHON (/usr/bin/python3, which has Debian's torch)
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(dirname "$here")
bench_name=bench/net
# shellcheck source=bench/common.sh
. "$here/common.sh"
bench_start singa-bench-net

py=${PYTHON:-/usr/bin/python3}
models=${BENCH_NET_MODELS:-"bigmlp lenet"}
links=${BENCH_NET_LINKS:-"loopback 1gbit"}
configs=${BENCH_NET_CONFIGS:-"one allreduce allreduce-fp16 allreduce-topk allreduce-topk8 allreduce-powersgd feature hogwild-outer pipeline plan-auto ddp"}
if [ "${BENCH_QUICK:-0}" = 1 ]; then rounds=${BENCH_ROUNDS:-1} warm=1; else rounds=${BENCH_ROUNDS:-3} warm=3; fi

steps_of() { # MODEL LINK
    if [ -n "${BENCH_NET_STEPS:-}" ]; then echo "$BENCH_NET_STEPS"; return; fi
    if [ "${BENCH_QUICK:-0}" = 1 ]; then echo 4; return; fi
    case $1.$2 in
    bigmlp.1gbit) echo 30 ;;
    bigmlp.*) echo 100 ;;
    *.1gbit) echo 100 ;;
    *) echo 300 ;;
    esac
}

"$py" -c 'import torch' 2>/dev/null || { note "bench/net: $py cannot import torch (Debian: python3-torch); no DDP runs"; configs=$(echo "$configs" | sed 's/ddp//'); }

# shellcheck source=bench/netns.sh
. "$here/netns.sh"

# measure NAME MODEL LINK CONFIG STEPS: one run, its images/s to $tmp/NAME, wire bytes per step
# to $tmp/NAME.wire.
measure() {
    name=$1 m=$2 link=$3 c=$4 s=$5
    lua=$here/dist_net.lua
    rm -f "$tmp/wire"
    case $c in
    one) get "$name" images_per_sec "$tui" -e "$lua" "$m" 0 1 "$s" "$warm" ;;
    allreduce | allreduce-* | feature | hogwild-outer | pipeline | plan-auto)
        scheme=batch compress=none
        [ "$c" = feature ] && scheme=feature
        [ "$c" = hogwild-outer ] && scheme=outer
        # Hogwild's rounds come every 50 steps (the planner's choice may be Hogwild)
        case $c in hogwild-outer | plan-auto) [ "${BENCH_QUICK:-0}" != 1 ] && [ "$s" -lt 100 ] && s=100 ;; esac
        [ "$c" = pipeline ] && scheme=pipeline
        [ "$c" = plan-auto ] && scheme=auto
        SINGA_PLAN_LINK=local
        [ "$link" = 1gbit ] && SINGA_PLAN_LINK=1gbit
        export SINGA_PLAN_LINK
        case $c in allreduce-*) compress=${c#allreduce-} ;; esac
        if [ $root = 1 ]; then
            get "$name" images_per_sec pair "$link" singa "$lua" "$m" 2 1 "$s" "$warm" 1 "$scheme" 2 "$compress"
        else
            get "$name" images_per_sec "$tui" --procs 2 -e "$lua" "$m" 2 1 "$s" "$warm" 1 "$scheme" 2 "$compress"
        fi
        # On one host singa-tui's processes talk over Unix sockets, which no interface counts:
        # its own count then, rank 0's messages to and from the other process per timed step.
        if [ "$link" = loopback ]; then
            rm -f "$tmp/wire"
            [ -s "$tmp/$name.result" ] && tr ' ' '\n' <"$tmp/$name.result" | sed -n 's/^wire_bytes=//p' >>"$tmp/$name.wire"
        fi
        ;;
    ddp)
        if [ $root = 1 ]; then
            get "$name" images_per_sec pair "$link" ddp --model "$m" --steps "$s" --warmup "$warm"
        else
            get "$name" images_per_sec "$py" "$here/ddp_ref.py" --procs 2 --model "$m" --steps "$s" --warmup "$warm"
        fi
        ;;
    esac
    # Two jobs run for singa-tui (warm-up, and the timed steps after a first), one loop of warm-up
    # and timed steps for DDP.
    n=$((s + warm))
    [ "$c" = ddp ] || n=$((n + 1))
    if [ -s "$tmp/wire" ] && [ -s "$tmp/$name.result" ]; then
        awk -v b="$(cat "$tmp/wire")" -v n=$n 'BEGIN { printf "%.0f\n", b / n }' >>"$tmp/$name.wire"
    fi
}

active_links=
for link in $links; do
    case $link in
    loopback) active_links="$active_links loopback" ;;
    1gbit)
        if [ $root = 1 ]; then active_links="$active_links 1gbit"; else
            note "bench/net: the 1gbit link needs root (network namespaces, tc); skipped"
        fi
        ;;
    *) die "unknown link '$link' (loopback, 1gbit)" ;;
    esac
done

note "bench/net: $rounds round(s); models: $models; links:$active_links; configurations: $configs"
for round in $(seq 1 "$rounds"); do
    note "round $round (CPUs $(wait_idle)% busy before it)"
    order=$configs
    # shellcheck disable=SC2086 # the words are the point
    [ $((round % 2)) = 0 ] && order=$(reverse $configs)
    for m in $models; do
        for c in $order; do
            [ "$c.$m" = pipeline.lenet ] && continue # the pipeline cuts the big MLP at fc3
            if [ "$c" = one ]; then
                measure "$m.one" "$m" none one "$(steps_of "$m" loopback)"
                continue
            fi
            for link in $active_links; do
                if [ $root = 1 ]; then make_ns "$link" || die "cannot make the network namespaces for $link"; fi
                measure "$m.$link.$c" "$m" "$link" "$c" "$(steps_of "$m" "$link")"
            done
        done
    done
done
cleanup_ns

printf '\n%-7s %-9s %-14s %10s %7s %7s %13s   %s\n' model link config images/s "x one" "x DDP" "wire MB/step" "(images/s of every round)"
for m in $models; do
    one=$(median "$tmp/$m.one")
    case " $configs " in *" one "*)
        printf '%-7s %-9s %-14s %10s %7s %7s %13s   %s\n' "$m" - one "$one" 1.00 - - "$(all "$m.one")" ;;
    esac
    for link in $active_links; do
        ddp=$(median "$tmp/$m.$link.ddp")
        for c in $configs; do
            [ "$c" = one ] && continue
            [ "$c.$m" = pipeline.lenet ] && continue
            n=$m.$link.$c
            v=$(median "$tmp/$n")
            wire=-
            [ -s "$tmp/$n.wire" ] && wire=$(median_fmt="%.0f" median "$tmp/$n.wire" | awk '{ if ($1 == "-") print "-"; else printf "%.2f\n", $1 / 1e6 }')
            printf '%-7s %-9s %-14s %10s %7s %7s %13s   %s\n' "$m" "$link" "$c" "$v" "$(ratio "$v" "$one")" \
                "$(ratio "$v" "$ddp")" "$wire" "$(all "$n")"
        done
    done
done

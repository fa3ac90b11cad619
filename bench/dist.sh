#!/bin/sh
# bench/dist.sh: what the distributed runtime costs.  `make bench-dist` runs it from the build
# directory; it also runs as `sh bench/dist.sh` from a source tree that has been built.
#
# Part "param": the round trip of one param between two processes against raw ZeroMQ.
#   raw     bench/zmq_rr: REQ/REP between two processes on loopback tcp, SIZE bytes each way
#           per round trip; "copy" sends with zmq_send as the runtime does, "zc" without a copy
#   relay   bench/zmq_rr -r: raw, but through a relay thread in each process, as the runtime's
#           stubs relay: the ceiling of any runtime with a stub per process on this machine
#   procs   singa-tui --procs 2 -e bench/dist_param.lua procs SIZE: Sandblaster, the worker in
#           rank 0, the server in rank 1; one step = the weight's gradient to the server, the
#           update, the new values back (SIZE each way)
#   local   the same job without a cluster (the step's compute alone)
#   inproc  Sandblaster with worker and server in one process (the runtime without tcp)
#   Ratio: procs steps/s over raw round trips/s (target from issue 4: >= 0.8), and over relay's
#   (what the runtime's own work costs beyond its thread layout's hand-offs).  The table also
#   gives procs less the compute: 1 / (1 / procs - 1 / local), the steps/s if the step's own
#   compute took no time, to show what the messages alone cost.
# Part "sync": bench/bigmlp.lua's net, Sandblaster with 2 workers x 1 BLAS thread in one process
#   against one worker (no cluster) with 2 BLAS threads; also Sandblaster 1 worker x 2 threads.
#   Ratio: images/s of 2 workers x 1 over 1 worker x 2 (target from issue 4: >= 0.9).
#
# Part "partition": a net cut among the 2 workers of a group (issue 5), bench/bigmlp.lua's net and
#   LeNet (bench/lenet.lua), Sandblaster 2 workers x 1 BLAS thread in one process: the batch
#   scheme (each worker a whole copy, batch / 2 rows), the features (partition_dim = 1) and, for
#   LeNet, hybrid (convolutions on the batch, the rest on the features), against one worker with
#   2 BLAS threads (no cluster).  Ratio: images/s over one worker's.  Also the bytes each scheme
#   moves per step: between the workers (bridges) and to and from the servers (params).  Then
#   the same schemes with the group's 2 workers in 2 processes (AllReduce: a worker and a server
#   in each, `singa-tui --procs 2`): images/s and the bytes that crossed between the processes.
#
# Part "frameworks": demos/frameworks.lua (once, after the rounds): the Fashion-MNIST MLP under
#   the four frameworks and a hybrid, images/s and the steps and wall time to a test accuracy.
#
# Every round runs each configuration once, the order reversed every other round; the tables
# show medians over the rounds.
#
# Environment:
#   BENCH_ROUNDS=5               rounds (medians over rounds)
#   BENCH_QUICK=1                smoke run: 1 round, few steps (numbers not meaningful)
#   BENCH_PARTS="param sync partition frameworks"   which parts to run
#   BENCH_FRAMEWORKS_ARGS="4000 0.85 250" demos/frameworks.lua's max_steps, target, test_freq
#   BENCH_PARAM_SIZES="1 16"     param sizes in MB (bench/dist_param.lua knows 1 and 16)
#   BENCH_RAW_SECONDS=2          timed seconds per raw ZeroMQ size
#   BENCH_BIG_STEPS=150          timed steps per big-MLP run
#   BENCH_WAIT_IDLE=0            on a shared machine: before each round wait up to this many
#                                seconds until the CPUs are idle (under 10% busy over 2 s)
#   SINGA_TUI, ZMQ_RR            paths of the programs (default: ./singa-tui, ./bench/zmq_rr, then
#                                the same beside this script's folder; zmq_rr is compiled into a
#                                temporary folder when it is not built)
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(dirname "$here")

if [ "${BENCH_QUICK:-0}" = 1 ]; then
    rounds=${BENCH_ROUNDS:-1}
    raw_secs=${BENCH_RAW_SECONDS:-0.3}
    steps1=200 steps16=10 big_steps=${BENCH_BIG_STEPS:-6} big_warm=1
    fw_args=${BENCH_FRAMEWORKS_ARGS:-"500 0.8 250"}
else
    rounds=${BENCH_ROUNDS:-5}
    raw_secs=${BENCH_RAW_SECONDS:-2}
    steps1=2000 steps16=100 big_steps=${BENCH_BIG_STEPS:-150} big_warm=5
    fw_args=${BENCH_FRAMEWORKS_ARGS:-"4000 0.85 250"}
fi
parts=${BENCH_PARTS:-"param sync partition frameworks"}
sizes=${BENCH_PARAM_SIZES:-"1 16"}

bench_name=bench/dist
# shellcheck source=bench/common.sh
. "$here/common.sh"
bench_start singa-bench-dist

case " $parts " in
*" param "*)
    if ! zmq_rr=$(find_prog "${ZMQ_RR:-}" bench/zmq_rr); then
        note "bench/dist: bench/zmq_rr not built; compiling it into $tmp"
        cflags=$(pkg-config --cflags libzmq 2>/dev/null) || cflags=
        libs=$(pkg-config --libs libzmq 2>/dev/null) || libs=-lzmq
        # shellcheck disable=SC2086
        ${CC:-cc} -O2 -std=gnu11 $cflags -o "$tmp/zmq_rr" "$here/zmq_rr.c" $libs -lpthread ||
            die "cannot build bench/zmq_rr; run: make bench/zmq_rr"
        zmq_rr=$tmp/zmq_rr
    fi
    ;;
esac

bytes_of() { [ "$1" = 1 ] && echo 1047424 || echo 16777600; }   # bench/dist_param.lua's weight
steps_of() { [ "$1" = 1 ] && echo "$steps1" || echo "$steps16"; }

param_round() { # SIZE REVERSED
    size=$1 b=$(bytes_of "$1") s=$(steps_of "$1") w=$(($(steps_of "$1") / 10))
    order="raw zc relay procs local inproc"
    # shellcheck disable=SC2086 # the words are the point
    [ "$2" = 1 ] && order=$(reverse $order)
    for what in $order; do
        case $what in
        raw) get "raw_$size" roundtrips_per_sec "$zmq_rr" -t "$raw_secs" "$b" ;;
        zc) get "zc_$size" roundtrips_per_sec "$zmq_rr" -z -t "$raw_secs" "$b" ;;
        relay) get "relay_$size" roundtrips_per_sec "$zmq_rr" -r -t "$raw_secs" "$b" ;;
        procs) get "procs_$size" steps_per_sec timeout 600 "$tui" --procs 2 -e "$here/dist_param.lua" procs "$size" "$s" "$w" ;;
        local) get "local_$size" steps_per_sec "$tui" -e "$here/dist_param.lua" local "$size" "$s" "$w" ;;
        inproc) get "inproc_$size" steps_per_sec "$tui" -e "$here/dist_param.lua" inproc "$size" "$s" "$w" ;;
        esac
    done
}

sync_round() { # REVERSED
    order="local2 sb2x1 sb1x2"
    # shellcheck disable=SC2086 # the words are the point
    [ "$1" = 1 ] && order=$(reverse $order)
    for what in $order; do
        case $what in
        local2) get big_local2 images_per_sec "$tui" -e "$here/dist_net.lua" bigmlp 0 2 "$big_steps" "$big_warm" ;;
        sb2x1) get big_sb2x1 images_per_sec "$tui" -e "$here/dist_net.lua" bigmlp 2 1 "$big_steps" "$big_warm" ;;
        sb1x2) get big_sb1x2 images_per_sec "$tui" -e "$here/dist_net.lua" bigmlp 1 2 "$big_steps" "$big_warm" ;;
        esac
    done
}

partition_round() { # REVERSED
    order="local2 batch feature hybrid procs_batch procs_feature procs_hybrid"
    # shellcheck disable=SC2086 # the words are the point
    [ "$1" = 1 ] && order=$(reverse $order)
    for model in bigmlp lenet; do
        for what in $order; do
            case $what in
            local2) get "cut_${model}_local2" images_per_sec "$tui" -e "$here/dist_net.lua" "$model" 0 2 "$big_steps" "$big_warm" ;;
            hybrid) [ $model = lenet ] &&
                get "cut_${model}_$what" images_per_sec "$tui" -e "$here/dist_net.lua" "$model" 2 1 "$big_steps" "$big_warm" 1 "$what" ;;
            procs_*) [ $what != procs_hybrid ] || [ $model = lenet ] &&
                get "cut_${model}_$what" images_per_sec "$tui" --procs 2 -e "$here/dist_net.lua" "$model" 2 1 \
                    "$big_steps" "$big_warm" 1 "${what#procs_}" 2 ;;
            *) get "cut_${model}_$what" images_per_sec "$tui" -e "$here/dist_net.lua" "$model" 2 1 "$big_steps" "$big_warm" 1 "$what" ;;
            esac
        done
    done
}

echo "bench/dist: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $rounds rounds"
echo "  $("$tui" --version 2>/dev/null | head -n 1); libzmq $(pkg-config --modversion libzmq 2>/dev/null || echo '?')"
r=1
while [ "$r" -le "$rounds" ]; do
    b=$(wait_idle)
    echo "  round $r: CPUs ${b}% busy before it, load $(cut -d' ' -f1-3 /proc/loadavg)"
    note "round $r of $rounds"
    rev=$(((r + 1) % 2))
    for part in $parts; do
        case $part in
        param) for size in $sizes; do param_round "$size" "$rev"; done ;;
        sync) sync_round "$rev" ;;
        partition) partition_round "$rev" ;;
        frameworks) ;;
        *) die "unknown part '$part' (param, sync, partition, frameworks)" ;;
        esac
    done
    r=$((r + 1))
done
case " $parts " in
*" frameworks "*)
    b=$(wait_idle)
    echo "  demos/frameworks.lua: CPUs ${b}% busy before it, load $(cut -d' ' -f1-3 /proc/loadavg)"
    note "demos/frameworks.lua $fw_args"
    # shellcheck disable=SC2086 # the arguments are words
    (cd "$tmp" && SINGA_TUI=$tui "$tui" -e "$srcdir/demos/frameworks.lua" $fw_args) >"$tmp/frameworks" 2>&1 ||
        { note "bench/dist: FAILED: demos/frameworks.lua $fw_args"; tail -n 15 "$tmp/frameworks" >&2; }
    ;;
esac
echo "  load after the runs: $(cut -d' ' -f1-3 /proc/loadavg)"

case " $parts " in
*" param "*)
    echo
    echo "Param round trip between two processes (loopback tcp), medians of $rounds rounds:"
    echo "| param | raw ZeroMQ rt/s (copy) | raw ZeroMQ rt/s (no copy) | raw through a relay thread per process | singa --procs 2 steps/s | ratio vs copy | ratio vs no copy | ratio vs relayed | one process, no cluster | one process, Sandblaster | --procs 2 less the compute | its ratio vs copy |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    for size in $sizes; do
        raw=$(median "$tmp/raw_$size") zc=$(median "$tmp/zc_$size") procs=$(median "$tmp/procs_$size")
        relay=$(median "$tmp/relay_$size")
        loc=$(median "$tmp/local_$size")
        # steps/s if the step's compute (the job without a cluster) took no time
        comm=$(awk -v p="$procs" -v l="$loc" 'BEGIN {
            if (p == "-" || l == "-" || 1 / p <= 1 / l) print "-"; else printf "%.1f\n", 1 / (1 / p - 1 / l) }')
        echo "| $size MB ($(bytes_of "$size") bytes) | $raw | $zc | $relay | $procs | **$(ratio "$procs" "$raw")** | $(ratio "$procs" "$zc") | $(ratio "$procs" "$relay") | $loc | $(median "$tmp/inproc_$size") | $comm | $(ratio "$comm" "$raw") |"
    done
    echo
    for size in $sizes; do
        for what in raw zc relay procs local inproc; do echo "    $size MB $what: $(all "${what}_$size")"; done
    done
    ;;
esac
case " $parts " in
*" sync "*)
    l=$(median "$tmp/big_local2") s=$(median "$tmp/big_sb2x1") o=$(median "$tmp/big_sb1x2")
    echo
    echo "Big MLP (batch 64), images/s, medians of $rounds rounds:"
    echo "| 1 worker x 2 BLAS threads (no cluster) | Sandblaster 2 workers x 1 thread | ratio | Sandblaster 1 worker x 2 threads | ratio |"
    echo "| ---: | ---: | ---: | ---: | ---: |"
    echo "| $l | $s | **$(ratio "$s" "$l")** | $o | $(ratio "$o" "$l") |"
    echo
    echo "    1 worker x 2: $(all big_local2)"
    echo "    Sandblaster 2 x 1: $(all big_sb2x1)"
    echo "    Sandblaster 1 x 2: $(all big_sb1x2)"
    ;;
esac
case " $parts " in
*" partition "*)
    echo
    echo "A net cut among the 2 workers of a group (Sandblaster, 2 workers x 1 BLAS thread), images/s, medians of $rounds rounds:"
    echo "| net | 1 worker x 2 threads (no cluster) | batch (whole copies) | ratio | features | ratio | hybrid | ratio |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    for model in bigmlp lenet; do
        l=$(median "$tmp/cut_${model}_local2") b=$(median "$tmp/cut_${model}_batch") f=$(median "$tmp/cut_${model}_feature")
        h=$(median "$tmp/cut_${model}_hybrid")
        echo "| $model | $l | $b | $(ratio "$b" "$l") | $f | **$(ratio "$f" "$l")** | $h | $(ratio "$h" "$l") |"
    done
    echo
    echo "Bytes moved per step (bridges between the workers + gradients to and values from the servers):"
    echo "| net | batch | features | hybrid |"
    echo "| --- | ---: | ---: | ---: |"
    for model in bigmlp lenet; do
        row="| $model"
        for what in batch feature hybrid; do
            f=$tmp/cut_${model}_$what.result
            row="$row | $([ -s "$f" ] && tr ' ' '\n' <"$f" | awk -F= '$1 == "bridge_bytes" { b = $2 } $1 == "param_bytes" { p = $2 }
                END { printf "%.2f MB (%.2f + %.2f)", (b + p) / 1e6, b / 1e6, p / 1e6 }' || echo -)"
        done
        echo "$row |"
    done
    echo
    echo "The group's 2 workers in 2 processes (AllReduce, --procs 2), images/s and bytes that crossed between the processes per step, medians of $rounds rounds:"
    echo "| net | batch | MB/step | features | MB/step | hybrid | MB/step |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
    for model in bigmlp lenet; do
        row="| $model"
        for what in batch feature hybrid; do
            f=$tmp/cut_${model}_procs_$what.result
            row="$row | $(median "$tmp/cut_${model}_procs_$what") | $([ -s "$f" ] &&
                tr ' ' '\n' <"$f" | awk -F= '$1 == "wire_bytes" { printf "%.2f", $2 / 1e6 }' || echo -)"
        done
        echo "$row |"
    done
    echo
    for model in bigmlp lenet; do
        for what in local2 batch feature hybrid procs_batch procs_feature procs_hybrid; do
            echo "    $model $what: $(all "cut_${model}_$what")"
        done
    done
    ;;
esac
case " $parts " in
*" frameworks "*)
    echo
    echo "demos/frameworks.lua $fw_args:"
    sed 's/^/    /' "$tmp/frameworks"
    ;;
esac

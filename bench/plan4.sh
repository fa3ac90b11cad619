#!/bin/sh
# bench/plan4.sh: the planner beyond one pair of processes (issue 34).  `make bench-plan4` runs it
# from the build directory; it also runs as `sh bench/plan4.sh` from a built source tree.
#
# 4 processes train bench/bigmlp.lua's net (batch 64, 1 BLAS thread a process), ranks 0-1 in
# network namespace A and 2-3 in B, joined by bench/netns.sh's veth pair shaped to 1 Gbit/s: two
# "hosts" of two processes each (within a namespace the processes talk over Unix sockets, between
# them over the shaped link).  `singa-tui --plan --procs 4 --hosts A,B --plan-link 1gbit
# --plan-cores C` predicts each configuration (C: this machine's cores over the 2 namespaces,
# which share them), bench/dist_net.lua's rows measure it, and the table prints predicted and
# measured images/s, their ratio and whether it is within 25%.  Then `--plan --hosts A,B
# --plan-link 1gbit --simulate N` (one process a host, each with this machine's cores and
# compute) prints for N = 8, 16, 64 each configuration's terms and the one that bounds it.
#
# Configurations (bench/net.sh's names): allreduce, allreduce-fp16, allreduce-topk8 (top-k 1%
# with error feedback, values back as int8 changes), allreduce-powersgd (rank 4), hogwild-outer
# (a Hogwild group a process, cluster.outer kNesterov every 50 updates; at least 100 steps).
#
# Environment:
#   BENCH_ROUNDS=3                 rounds (medians over rounds)
#   BENCH_QUICK=1                  smoke run: 1 round, 2 steps (numbers not meaningful)
#   BENCH_PLAN4_MODEL=bigmlp       bench/dist_net.lua's model (bigmlp or lenet)
#   BENCH_PLAN4_CONFIGS="allreduce allreduce-fp16 allreduce-topk8 allreduce-powersgd hogwild-outer"
#   BENCH_PLAN4_STEPS=30           timed steps of every run (hogwild-outer at least 100)
#   BENCH_PLAN4_CORES              each namespace's cores for the prediction (default: nproc / 2)
#   BENCH_PLAN4_SIMULATE="8 16 64" the --simulate tables (empty: none)
#   BENCH_WAIT_IDLE=0, SINGA_TUI
# As root (network namespaces, tc); without root the 4 processes run with --procs 4 on this host's
# loopback, which is not the link predicted: a smoke run of the script only.
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(dirname "$here")
bench_name=bench/plan4
# shellcheck source=bench/common.sh
. "$here/common.sh"
bench_start singa-bench-plan4
# shellcheck source=bench/netns.sh
. "$here/netns.sh"

model=${BENCH_PLAN4_MODEL:-bigmlp}
configs=${BENCH_PLAN4_CONFIGS:-"allreduce allreduce-fp16 allreduce-topk8 allreduce-powersgd hogwild-outer"}
simulate=${BENCH_PLAN4_SIMULATE-"8 16 64"}
if [ "${BENCH_QUICK:-0}" = 1 ]; then rounds=${BENCH_ROUNDS:-1} warm=1 steps=${BENCH_PLAN4_STEPS:-2}; else
    rounds=${BENCH_ROUNDS:-3} warm=3 steps=${BENCH_PLAN4_STEPS:-30}
fi
cores=${BENCH_PLAN4_CORES:-$(($(nproc) / 2))}
[ "$cores" -ge 1 ] || cores=1
hosts=$net.1,$net.2

# rank4 R ARGS...: rank R of 4, in namespace A (ranks 0, 1) or B (2, 3).
rank4() {
    r=$1
    shift
    ns=$nsa addr=$net.1
    [ "$r" -ge 2 ] && ns=$nsb addr=$net.2
    ip netns exec "$ns" env SINGA_RANK="$r" SINGA_SIZE=4 SINGA_COORDINATOR="tcp://$net.1:$port" \
        SINGA_BIND="$addr" timeout 900 "$tui" -e "$@"
}

# quad ARGS...: the 4 ranks of one run; rank 0's output is this one's, the link's bytes to $tmp/wire.
quad() {
    port=$((20000 + ($$ + $(date +%s)) % 20000))
    before=$(tx_bytes 1gbit)
    pids=
    for r in 1 2 3; do
        rank4 "$r" "$@" >"$tmp/rank$r.out" 2>&1 &
        pids="$pids $!"
    done
    rank4 0 "$@"
    rc=$?
    for p in $pids; do wait "$p" || rc=1; done
    [ $rc = 0 ] || tail -n 15 "$tmp/rank1.out" "$tmp/rank2.out" "$tmp/rank3.out" >&2
    echo $(($(tx_bytes 1gbit) - before)) >"$tmp/wire"
    return $rc
}

# measure CONFIG STEPS: one run's images/s to $tmp/CONFIG, the link's bytes per step to $tmp/CONFIG.wire.
measure() {
    c=$1 s=$2 scheme=batch compress=none
    case $c in
    allreduce) ;;
    allreduce-*) compress=${c#allreduce-} ;;
    hogwild-outer)
        scheme=outer
        [ "${BENCH_QUICK:-0}" != 1 ] && [ "$s" -lt 100 ] && s=100
        ;;
    *) die "unknown configuration '$c' (allreduce, allreduce-fp16, allreduce-topk8, allreduce-powersgd, hogwild-outer)" ;;
    esac
    set -- "$here/dist_net.lua" "$model" 4 1 "$s" "$warm" 1 "$scheme" 4 "$compress"
    rm -f "$tmp/wire"
    if [ $root = 1 ]; then
        make_ns 1gbit || die "cannot make the network namespaces"
        get "$c" images_per_sec quad "$@"
        [ -s "$tmp/wire" ] && awk -v b="$(cat "$tmp/wire")" -v n=$((s + warm + 1)) 'BEGIN { printf "%.0f\n", b / n }' >>"$tmp/$c.wire"
    else
        get "$c" images_per_sec "$tui" --procs 4 -e "$@"
    fi
}

link=1gbit
[ $root = 1 ] || { link=loopback; note "bench/plan4: not root: the 4 processes run on this host's loopback, not the 1gbit link predicted (a smoke run only)"; }

# The prediction: 2 hosts of 2 processes, each host with $cores cores.
"$tui" --plan --procs 4 --hosts "$hosts" --plan-link 1gbit --plan-cores "$cores" --plan-out "$tmp/plan.jsonl" \
    -e "$here/dist_net.lua" "$model" 0 1 10 0 >"$tmp/plan.out" 2>&1 ||
    die "singa-tui --plan failed: $(tail -n 3 "$tmp/plan.out")"
sed -n 2p "$tmp/plan.out" >&2

note "bench/plan4: $rounds round(s) of $model, 4 processes, 2 a namespace; configurations: $configs"
for round in $(seq 1 "$rounds"); do
    note "round $round (CPUs $(wait_idle)% busy before it)"
    order=$configs
    # shellcheck disable=SC2086 # the words are the point
    [ $((round % 2)) = 0 ] && order=$(reverse $configs)
    for c in $order; do measure "$c" "$steps"; done
done
cleanup_ns

for c in $configs; do echo "$c $(median "$tmp/$c") $(median_fmt="%.0f" median "$tmp/$c.wire") $(all "$c")"; done >"$tmp/measured"
python3 - "$tmp" "$model" "$link" <<'PY'
import json, sys
tmp, model, link = sys.argv[1:]
names = {"allreduce": "allreduce", "allreduce fp16": "allreduce-fp16", "allreduce top-k 1% int8": "allreduce-topk8",
         "allreduce powersgd 4": "allreduce-powersgd", "hogwild outer": "hogwild-outer"}
measured = {}
for line in open(tmp + "/measured"):
    f = line.split()
    measured[f[0]] = (f[1], f[2], " ".join(f[3:]))
print("%-7s %-9s %-19s %10s %10s %6s %7s %9s %9s %s" % ("model", "link", "config", "predicted", "measured", "ratio",
      "in 25%", "wire MB", "bound", "(images/s of every round)"))
within = total = 0
for r in (json.loads(l) for l in open(tmp + "/plan.jsonl")):
    c = names.get(r["name"])
    if c not in measured:
        continue
    got, wire, every = measured[c]
    p = r["images_per_sec"]
    ratio = p / float(got) if got != "-" and float(got) > 0 else None
    ok = ratio is not None and abs(ratio - 1) <= 0.25
    total += 1
    within += ok
    mb = "%.2f/%s" % (r["wire_bytes"] / 1e6, "-" if wire == "-" else "%.2f" % (float(wire) / 1e6))
    print("%-7s %-9s %-19s %10.0f %10s %6s %7s %9s %9s (%s)" % (model, link, c, p, got,
          "-" if ratio is None else "%.2f" % ratio, "yes" if ok else "no", mb, r["bound"], every))
print("# %d of %d predictions within 25%% of measured (wire MB: predicted per process / the link's per step, both ways)"
      % (within, total))
PY

# --simulate: one process a host, this machine's compute and cores each, over 1 Gbit/s.
for n in $simulate; do
    "$tui" --plan --hosts "$hosts" --plan-link 1gbit --simulate "$n" --plan-out "$tmp/sim$n.jsonl" \
        -e "$here/dist_net.lua" "$model" 0 1 10 0 >"$tmp/sim$n.out" 2>&1 ||
        die "singa-tui --plan --simulate $n failed: $(tail -n 3 "$tmp/sim$n.out")"
    python3 - "$tmp/sim$n.jsonl" "$model" "$n" <<'PY'
import json, sys
path, model, n = sys.argv[1:]
recs = [json.loads(l) for l in open(path)]
print("\n# %s, --simulate %s over 1gbit (one process a host): terms in ms a step" % (model, n))
print("%-26s %10s %9s %9s %9s %9s %9s %9s %9s" % ("config", "images/s", "step", "compute", "transfer", "bubble",
      "codec", "stub", "bound"))
bounds = {}
for r in recs:
    ms = lambda k: "%.2f" % (1e3 * r[k])
    print("%-26s %10.0f %9s %9s %9s %9s %9s %9s %9s" % (r["name"], r["images_per_sec"], ms("step_seconds"),
          ms("compute_seconds"), ms("transfer_seconds"), ms("bubble_seconds"), ms("codec_seconds"),
          ms("stub_seconds"), r["bound"]))
    if r["processes"] > 1:
        bounds[r["bound"]] = bounds.get(r["bound"], 0) + 1
print("# %s processes: bound by %s; best %s" % (n, ", ".join("%s %d" % kv for kv in sorted(bounds.items())),
      recs[0]["name"]))
PY
done

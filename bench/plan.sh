#!/bin/sh
# bench/plan.sh: the planner's predictions against measurement (issue 34).  `make bench-plan`
# runs it from the build directory; it also runs as `sh bench/plan.sh` from a built source tree.
#
# For each model (bench/bigmlp.lua's and bench/lenet.lua's nets, batch 64, 1 BLAS thread) and
# link, `singa-tui --plan --procs 2` writes its predictions (--plan-out) for the job
# bench/net.sh times as `one` (bench/dist_net.lua MODEL 0 1): on the loopback link with
# --plan-link local, on the 1gbit namespaces link with --plan-link 1gbit.  Then bench/net.sh
# measures the same configurations (its rows, not copies of them: BENCH_NET_CONFIGS), with its
# plan-auto row (cluster.plan = "auto" itself), and this script prints, per model, link and
# configuration, the predicted and measured images/s and their ratio, and plan-auto's measured
# images/s against the best measured hand-written configuration.
#
# Environment: BENCH_PLAN_MODELS ("bigmlp lenet"), BENCH_PLAN_LINKS ("loopback 1gbit"; 1gbit
# needs root, as bench/net.sh), BENCH_PLAN_CONFIGS (bench/net.sh's names, default every row the
# planner predicts), and bench/net.sh's own (BENCH_ROUNDS, BENCH_QUICK=1 for a smoke run ...).
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(dirname "$here")
bench_name=bench/plan
# shellcheck source=bench/common.sh
. "$here/common.sh"
bench_start singa-bench-plan

models=${BENCH_PLAN_MODELS:-"bigmlp lenet"}
links=${BENCH_PLAN_LINKS:-"loopback 1gbit"}
configs=${BENCH_PLAN_CONFIGS:-"one allreduce allreduce-fp16 allreduce-topk allreduce-topk8 allreduce-powersgd feature hogwild-outer pipeline plan-auto"}

# The predictions: one JSON lines file per model and link.
for m in $models; do
    for link in $links; do
        spec=local
        [ "$link" = 1gbit ] && spec=1gbit
        "$tui" --plan --procs 2 --plan-link "$spec" --plan-out "$tmp/$m.$link.jsonl" \
            -e "$here/dist_net.lua" "$m" 0 1 10 0 >"$tmp/$m.$link.plan" 2>&1 ||
            die "singa-tui --plan failed for $m over $link: $(tail -n 3 "$tmp/$m.$link.plan")"
    done
done

# The measurements: bench/net.sh's table (model link config images/s ...).
BENCH_NET_MODELS=$models BENCH_NET_LINKS=$links BENCH_NET_CONFIGS=$configs SINGA_TUI=$tui \
    sh "$here/net.sh" >"$tmp/net.out" || die "bench/net.sh failed"

python3 - "$tmp" "$models" "$links" <<'EOF'
import json, sys
tmp, models, links = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
# bench/net.sh's configuration names for the planner's
names = {"one process": "one", "allreduce": "allreduce", "allreduce fp16": "allreduce-fp16",
         "allreduce top-k 1%": "allreduce-topk", "allreduce top-k 1% int8": "allreduce-topk8",
         "allreduce powersgd 4": "allreduce-powersgd", "feature cut": "feature",
         "hogwild outer": "hogwild-outer", "pipeline m=8": "pipeline"}
measured = {}
for line in open(tmp + "/net.out"):
    f = line.split()
    if len(f) >= 4 and f[0] in models:
        try:
            measured[(f[0], f[1], f[2])] = float(f[3])
        except ValueError:
            pass
print("%-7s %-9s %-16s %10s %10s %7s" % ("model", "link", "config", "predicted", "measured", "ratio"))
within, total = 0, 0
for m in models:
    for link in links:
        try:
            recs = [json.loads(l) for l in open("%s/%s.%s.jsonl" % (tmp, m, link))]
        except OSError:
            continue
        best_measured = None
        top = next((r for r in recs if r["processes"] == 2), None)  # ranked: what plan = "auto" runs
        c = names.get(top["name"]) if top else None
        pick = measured.get((m, link, c)) if c else None  # None too for a row bench/net.sh does not run
        for r in recs:
            c = names.get(r["name"])
            got = measured.get((m, "-" if c == "one" else link, c))
            if c is None or got is None:
                continue
            ratio = r["images_per_sec"] / got
            total += 1
            within += abs(ratio - 1) <= 0.15
            print("%-7s %-9s %-16s %10.0f %10.0f %7.2f" % (m, link, c, r["images_per_sec"], got, ratio))
            if r["processes"] == 2 and (best_measured is None or got > best_measured[1]):
                best_measured = (c, got)
        auto = measured.get((m, link, "plan-auto"))
        if top and best_measured:
            print("# %s over %s: the plan picks %s%s; plan-auto measured %s images/s, the best hand-written %s %.0f%s"
                  % (m, link, top["name"], " (%.0f images/s measured)" % pick if pick else "",
                     "%.0f" % auto if auto else "-", best_measured[0], best_measured[1],
                     ": %.2fx" % (auto / best_measured[1]) if auto else ""))
print("# %d of %d predictions within 15%% of measured" % (within, total))
EOF

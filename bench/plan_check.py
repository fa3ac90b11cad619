#!/usr/bin/env python3
"""bench/plan_check.py: the planner's predictions against recorded measurements, without timing
anything.  Predictions depend on this machine's profile and measurements on the machine that made
them, so each configuration is compared as a speedup over its own one-process row: the ratio
(predicted X / predicted one) / (measured X / measured one), 1.00 when the model has the
configuration's cost relative to one process right.

    singa-tui --plan --procs 2 --plan-link local --plan-out DIR/bigmlp.loopback.jsonl \\
        -e bench/dist_net.lua bigmlp 0 1 10 0        # and lenet, and --plan-link 1gbit
    python3 bench/plan_check.py DIR [bench/plan-measured.txt]
"""
import json
import sys

NAMES = {"one process": "one", "allreduce": "allreduce", "allreduce fp16": "allreduce-fp16",
         "allreduce top-k 1%": "allreduce-topk", "allreduce top-k 1% int8": "allreduce-topk8",
         "allreduce powersgd 4": "allreduce-powersgd", "feature cut": "feature",
         "hogwild outer": "hogwild-outer", "pipeline m=8": "pipeline"}


def main():
    pred_dir = sys.argv[1]
    fixture = sys.argv[2] if len(sys.argv) > 2 else "bench/plan-measured.txt"
    measured = {}
    for line in open(fixture):
        f = line.split()
        if len(f) == 4 and not line.startswith("#"):
            measured[(f[0], f[1], f[2])] = float(f[3])
    within = total = 0
    print("%-7s %-9s %-19s %9s %9s %6s" % ("model", "link", "config", "pred x1", "meas x1", "ratio"))
    for model in ("bigmlp", "lenet"):
        for link in ("loopback", "1gbit"):
            try:
                recs = [json.loads(l) for l in open("%s/%s.%s.jsonl" % (pred_dir, model, link))]
            except OSError:
                continue
            pred = {NAMES[r["name"]]: r for r in recs if r["name"] in NAMES}
            one_p, one_m = pred["one"]["images_per_sec"], measured[(model, "-", "one")]
            for c, r in sorted(pred.items(), key=lambda kv: -kv[1]["images_per_sec"]):
                got = measured.get((model, link, c))
                if c == "one" or got is None:
                    continue
                p, m = r["images_per_sec"] / one_p, got / one_m
                total += 1
                within += abs(p / m - 1) <= 0.15
                print("%-7s %-9s %-19s %9.2f %9.2f %6.2f" % (model, link, c, p, m, p / m))
            best = max((measured.get((model, link, c), 0), c) for c in pred if c != "one")
            print("# %s over %s: the plan picks %s; measured best %s" % (model, link, recs[0]["name"], best[1]))
    print("# %d of %d within 15%%" % (within, total))


if __name__ == "__main__":
    main()

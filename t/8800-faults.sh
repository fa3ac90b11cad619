# The fault suite's short fixed set (t/faults/faults.py --fixed; `make check-faults` runs its
# randomized schedules): a stop and garbage that change nothing (the fault-free params and
# checkpoints, bitwise), a kill that ends a synchronous job naming the rank, a kill of rank 0 that
# an elastic job restarts from, a kill a synchronous job with cluster.replicas goes on without, a
# Hogwild rank killed and rejoined, one killed in the middle of a checkpoint write, a rejoin
# refused; every run checked against the suite's invariants.  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
if ! command -v python3 >/dev/null 2>&1; then
    echo "1..0 # SKIP needs python3"
    exit 0
fi
exec python3 "$top_srcdir/t/faults/faults.py" --fixed

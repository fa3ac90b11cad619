# Elastic jobs under Open MPI's mpirun, which owns the processes: with cluster.elastic a lost
# rank ends every survivor with status 75, and the job relaunched on 2 ranks with resume = true
# resumes the checkpoint and finishes.  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8601-elastic-mpi.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
tmp=$(cd "$tmp" && pwd)
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT
job=$top_srcdir/t/elastic-job.lua
# pid_of NAME R N: the pid of rank R of N as its announcement in NAME.out gives it.
pid_of() { sed -n "s/^rank $2 of $3 (pid \([0-9]*\),.*/\1/p" "$tmp/$1.out" | tail -1; }

if ! command -v mpirun >/dev/null 2>&1; then
    skip "mpirun -np 3 with cluster.elastic" "no mpirun (Debian: openmpi-bin)"
    done_testing
    exit
fi
gen_data
as_root=
[ "$(id -u)" -eq 0 ] && as_root=--allow-run-as-root
mpi() { # mpi NAME N STEPS fresh|resume: each rank's status in NAME.status
    port=$(free_port)
    SINGA_COORDINATOR=tcp://127.0.0.1:$port timeout 120 mpirun $as_root --oversubscribe -np "$2" \
        -x SINGA_COORDINATOR -x LUA_PATH_5_4 -x SINGA_LUA_PATH \
        sh -c '"$0" "$@"; echo "rank $OMPI_COMM_WORLD_RANK: $?" >>"'"$tmp/$1.status"'"' \
        "$SINGA_TUI" -e "$job" mpi "$tmp/$1.txt" "$3" "$tmp/ck-mpi" "$4" >"$tmp/$1.out" 2>&1
}
mpi mpi 3 100000 fresh &
launcher=$!
for _ in $(seq 1500); do
    grep -q '^checkpoint written: .*/step0000000[3-9]0\.' "$tmp/mpi.out" && break
    sleep 0.02
done
kill -9 "$(pid_of mpi 2 3)"
wait $launcher
sort "$tmp/mpi.status" >"$tmp/mpi.sorted" 2>&1
printf 'rank 0: 75\nrank 1: 75\nrank 2: 137\n' | cmp -s - "$tmp/mpi.sorted" &&
    grep -q "rank 2 (workers 0.2; servers 0.2) at tcp://.* died: .*(elastic, exit status 75)" "$tmp/mpi.out"
report $? "mpirun -np 3, cluster.elastic: rank 2 killed, ranks 0 and 1 exit with status 75" "$tmp/mpi.sorted"
mpi mpi2 2 400 resume && grep -q '^resumed from .*/ck-mpi/step[0-9]*\.\*\.ckpt (step [0-9]*)$' "$tmp/mpi2.out" &&
    grep -q '^rank 0 of 2 (pid [0-9]*, OMPI_COMM_WORLD_RANK) at tcp://.*: workers 0.0; servers 0.0$' "$tmp/mpi2.out" &&
    grep -q '^rank 1 of 2: 400 steps$' "$tmp/mpi2.out"
report $? "relaunched with mpirun -np 2 and resume = true: resumes the checkpoint on 2 ranks and finishes" "$tmp/mpi2.out"

done_testing

# Synchronous groups that shrink (cluster.replicas = 2): a 3-process AllReduce job with a rank
# other than 0 killed with SIGKILL in the middle goes on without a restart on the 2 left: the
# survivors end with every step trained (the --metrics file's steps contiguous, none twice, none
# skipped), the log says who was lost at which step and what the group is now, the backup that
# took over and every replica of a server held by both survivors end bitwise equal, and the final
# checkpoint is whole and gathers into one model; so too when the lost process held only servers
# (Sandblaster), all taken over by their backups, and with 3 replicas (the 2 left of each server
# equal).  The job without replicas ends as before.
# Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8811-shrink.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
tmp=$(cd "$tmp" && pwd)
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

job=$top_srcdir/t/replicas-job.lua
STEPS=1500

gen_data

. "$top_srcdir/t/shrink.sh"
# kill_at NAME MODE RANK: the 3-process job of MODE, rank RANK killed once it trained 100 steps;
# its output in NAME.out, its status in $rc.
kill_at() {
    start "$1" "$job" "$2" "$tmp/$1.txt" $STEPS "$tmp/ws-$1" "$tmp/ck-$1"
    kill_wait "$1" "$3"
}
# whole NAME: the final checkpoint is whole (every server's shard, the survivors' states) and
# gathers into one plain model; no temporary file is left.
whole() {
    timeout 30 "$SINGA_TUI" --ckpt-info "$tmp/ck-$1" >"$tmp/$1.info" 2>&1 &&
        grep -q "^step $STEPS$" "$tmp/$1.info" &&
        timeout 30 "$SINGA_TUI" --ckpt-gather "$tmp/ck-$1" "$tmp/$1.ckpt" >>"$tmp/$1.info" 2>&1 &&
        [ -z "$(find "$tmp/ck-$1" -name '*.tmp*')" ]
}

for victim in 2 1; do
    name=kill$victim
    kill_at $name two $victim
    out=$tmp/$name.out
    other=$((3 - victim))
    [ $rc -eq 137 ] && grep -q "^singa-tui: rank $victim (pid [0-9]*) was killed by signal 9" "$out" &&
        grep -q "^rank 0 of 3: $STEPS steps$" "$out" && grep -q "^rank $other of 3: $STEPS steps$" "$out" &&
        grep -q "^rank $victim (workers 0.$victim; servers 0.$victim; backups of servers 0.$(( (victim + 2) % 3 ))) at tcp://.* died: its connection closed and it does not answer; the job goes on without it (cluster.replicas): from step [0-9]* the group is workers 0.0, 0.$other (2 of 3: the lost workers' rows of each batch are shared out, the global batch whole: 0.0 trains 0.$victim's too); servers .*0.$victim in rank $(( (victim + 1) % 3 )) (its backup)" "$out" &&
        grep -q "replica 1 of server 0.$victim (rank $(( (victim + 1) % 3 ))) holds its slices now, at version" \
            "$tmp/ws-$name/rank$(( (victim + 1) % 3 )).log"
    report $? "rank $victim killed: the 2 left go on without a restart, each training all $STEPS steps; the log says who was lost and what the group is" "$out"
    contiguous $name
    report $? "rank $victim killed: the steps are contiguous (none trained twice, none skipped)" "$tmp/$name.csv"
    agree $name
    report $? "rank $victim killed: the survivors' replicas of each server end bitwise equal" "$tmp/$name.digests"
    whole $name
    report $? "rank $victim killed: the final checkpoint is whole and gathers into one model" "$tmp/$name.info"
done

# replicas = 3: the backup that takes over brings the other backup left to its state and goes on
# updating it, so every server ends with two equal replicas in the survivors.
kill_at three three 2
grep -q "^rank 0 of 3: $STEPS steps$" "$tmp/three.out" && grep -q "^rank 1 of 3: $STEPS steps$" "$tmp/three.out" &&
    contiguous three && agree three && [ "$(grep -c ' 1500 ' "$tmp/three.digests")" -eq 6 ]
report $? "replicas = 3, rank 2 killed: every server ends with 2 bitwise equal replicas in the survivors" "$tmp/three.digests"

# Sandblaster's servers all in rank 2: its loss moves every server to its backup in rank 0, and
# the batch stays whole.
kill_at servers sandblaster 2
grep -q "^rank 2 (servers 0.0-0.1) at tcp://.* died: .*; the job goes on without it (cluster.replicas): from step [0-9]* the group is workers 0.0, 0.1; servers 0.0 in rank 0 (its backup), 0.1 in rank 0 (its backup)$" "$tmp/servers.out" &&
    grep -q "^rank 0 of 3: $STEPS steps$" "$tmp/servers.out" && grep -q "^rank 1 of 3: $STEPS steps$" "$tmp/servers.out" &&
    contiguous servers && whole servers
report $? "Sandblaster, the servers' rank killed: their backups in rank 0 take over, every step trained once, the final checkpoint whole" "$tmp/servers.out"

# Without replicas a lost process ends the synchronous job, as before.
kill_at none none 2
[ $rc -ne 0 ] && grep -q "rank 2 (workers 0.2; servers 0.2) at tcp://.* died: its connection closed and it does not answer$" "$tmp/none.out" &&
    ! grep -q "goes on without it" "$tmp/none.out"
report $? "no replicas, rank 2 killed: the job ends, naming it (status $rc)" "$tmp/none.out"

done_testing

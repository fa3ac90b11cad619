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

# kill_at NAME MODE RANK: the 3-process job of MODE, rank RANK killed once it trained 100 steps;
# its output in NAME.out, its status in $rc.
kill_at() {
    timeout 120 "$SINGA_TUI" --procs 3 --metrics "$tmp/$1.csv" -e "$job" "$2" "$tmp/$1.txt" $STEPS "$tmp/ws-$1" \
        "$tmp/ck-$1" >"$tmp/$1.out" 2>&1 &
    launcher=$!
    for _ in $(seq 3000); do
        at=$(awk -F, '$2 == "train" { n = $1 } END { print n + 0 }' "$tmp/$1.csv" 2>/dev/null)
        [ "${at:-0}" -ge 100 ] && break
        kill -0 $launcher 2>/dev/null || break
        sleep 0.01
    done
    vpid=$(sed -n "s/^rank $3 of 3 (pid \([0-9]*\),.*/\1/p" "$tmp/$1.out" | tail -1)
    [ -n "$vpid" ] && kill -9 "$vpid"
    wait $launcher
    rc=$?
    echo "# killed rank $3 (pid $vpid) after step $at; status $rc"
}
# contiguous NAME: every step 0..STEPS-1 trained once in NAME.csv; says the largest gap.
contiguous() {
    awk -F, -v steps=$STEPS '$2 == "train" { if (seen[$1]++) twice++; if (NR > 2 && $1 != last + 1) skipped++
                               if (NR > 2 && $NF - lt > gap) { gap = $NF - lt; at = $1 }; last = $1; lt = $NF }
        END { printf "# %d steps, %d twice, %d skipped; the largest gap %.3f s, before step %d\n", length(seen), twice,
                  skipped, gap, at
              exit !(length(seen) == steps && !twice && !skipped && last == steps - 1) }' "$tmp/$1.csv"
}
# agree NAME: per server, the digests of its replicas in the survivors' logs are equal, at the last
# step's version; at least one server has two.
agree() {
    sed -n 's/.*replica \([0-9]*\) of server \([0-9.]*\) (rank \([0-9]*\)): [0-9]* slices* at version \([0-9]*\), digest \([0-9a-f]*\) .*/\2 \1 \3 \4 \5/p' \
        "$tmp/ws-$1"/rank*.log | sort >"$tmp/$1.digests"
    sed 's/^/# /' "$tmp/$1.digests"
    awk -v version=$STEPS '{ n[$1]++; if ($4 != version) bad = 1; if ($1 in d && d[$1] != $5) bad = 1; d[$1] = $5 }
        END { for (s in n) { k++; if (n[s] > 1) two++ }; exit bad || k != 3 || !two }' "$tmp/$1.digests"
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

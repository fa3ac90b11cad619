# Shared by the tests of a synchronous group that goes on without a lost process (t/8811,
# t/8812, t/8814): sourced after t/tap.sh and t/procs.sh, with $tmp and $STEPS set.

# start NAME JOB ARG...: `singa-tui --procs 3 --metrics NAME.csv -e JOB ARG...` in the background
# ($launcher), its output in NAME.out; back once it trained 100 steps (or ended), $at the step.
start() {
    s_name=$1 s_job=$2
    shift 2
    timeout 300 "$SINGA_TUI" --procs 3 --metrics "$tmp/$s_name.csv" -e "$s_job" "$@" >"$tmp/$s_name.out" 2>&1 &
    launcher=$!
    for _ in $(seq 3000); do
        at=$(awk -F, '$2 == "train" { n = $1 } END { print n + 0 }' "$tmp/$s_name.csv" 2>/dev/null)
        [ "${at:-0}" -ge 100 ] && break
        kill -0 $launcher 2>/dev/null || break
        sleep 0.01
    done
}
# kill_wait NAME RANK: kill -9 rank RANK of NAME's job ($vpid), then wait for the launcher ($rc).
kill_wait() {
    vpid=$(sed -n "s/^rank $2 of 3 (pid \([0-9]*\),.*/\1/p" "$tmp/$1.out" | tail -1)
    [ -n "$vpid" ] && kill -9 "$vpid"
    wait $launcher
    rc=$?
    echo "# $1: killed rank $2 (pid $vpid) after step $at; status $rc"
}
# contiguous NAME: every step 0..STEPS-1 trained once in NAME.csv; says the largest gap.
contiguous() {
    awk -F, -v steps=$STEPS '$2 == "train" { if (seen[$1]++) twice++; if (n++ && $1 != last + 1) skipped++
                               if (n > 1 && $NF - lt > gap) { gap = $NF - lt; at = $1 }; last = $1; lt = $NF }
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

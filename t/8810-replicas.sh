# Replicated slices (cluster.replicas): in 3-process jobs (AllReduce, Sandblaster with its
# servers in one process, Downpour's asynchronous groups; replicas 2 and 3) every backup of a
# server ends with bitwise its primary's values and updater state (the digests each replica
# writes to its log at the end agree, at the last step's version), and the job trains what it
# trains without backups (with a kLua updater, which writes its gradient, too); replicas = 1 is
# the job without the field (no backups, no digests).
# Bad values are refused naming the field.  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8810-replicas.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
tmp=$(cd "$tmp" && pwd)
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

job=$top_srcdir/t/replicas-job.lua
STEPS=40

gen_data

# run MODE: the 3-process job of MODE, its logs in ws-MODE, its params in MODE.txt.
run() {
    timeout 120 "$SINGA_TUI" --procs 3 -e "$job" "$1" "$tmp/$1.txt" $STEPS "$tmp/ws-$1" >"$tmp/$1.out" 2>&1 &&
        grep -q "^rank 0 of 3: $STEPS steps$" "$tmp/$1.out"
}
# digests MODE: "server replica rank version digest" per replica, from every rank's log.
digests() {
    sed -n 's/.*replica \([0-9]*\) of server \([0-9.]*\) (rank \([0-9]*\)): [0-9]* slices* at version \([0-9]*\), digest \([0-9a-f]*\) .*/\2 \1 \3 \4 \5/p' \
        "$tmp/ws-$1"/rank*.log | sort
}
# agree MODE SERVERS REPLICAS VERSION: every server has REPLICAS digests, in different ranks, all
# at VERSION and equal.
agree() {
    digests "$1" >"$tmp/$1.digests"
    sed 's/^/# /' "$tmp/$1.digests"
    awk -v servers="$2" -v replicas="$3" -v version="$4" '
        { n[$1]++; if ($4 != version) bad = 1; if (($1, "d") in d && d[$1, "d"] != $5) bad = 1; d[$1, "d"] = $5
          if (($1, $3) in at) bad = 1; at[$1, $3] = 1 }
        END { for (s in n) { k++; if (n[s] != replicas) bad = 1 }; exit bad || k != servers }' "$tmp/$1.digests"
}

run none
report $? "no replicas: trained $STEPS steps" "$tmp/none.out"
run one && [ -z "$(digests one)" ] && ! grep -q "backups" "$tmp/one.out" && params_close "$tmp/one.txt" "$tmp/none.txt"
report $? "replicas = 1: the job as without the field (no backups)" "$tmp/one.out"

run two && grep -q "^rank 0 of 3 .*: workers 0.0; servers 0.0; backups of servers 0.2$" "$tmp/two.out" &&
    agree two 3 2 $STEPS && params_close "$tmp/two.txt" "$tmp/none.txt"
report $? "AllReduce, replicas = 2: every backup bitwise its primary after $STEPS steps, the same training" "$tmp/two.out"
run three && agree three 3 3 $STEPS && params_close "$tmp/three.txt" "$tmp/none.txt"
report $? "AllReduce, replicas = 3: both backups bitwise the primary" "$tmp/three.out"
# With 2 replicas each backup's process takes its values from the backup, so the processes
# receive what they did without replicas (the values of one remote server fewer, the gradient
# forwarded to its backup more); with 3 the primaries send both the values and two forwards.
received() { awk '/^rank [0-9]* received [0-9]* bytes$/ { n += $4 } END { print n + 0 }' "$tmp/$1.out"; }
one=$(received one) two=$(received two) three=$(received three)
echo "# bytes the 3 processes received: replicas = 1 $one, 2 $two, 3 $three"
awk -v a="$one" -v b="$two" -v c="$three" 'BEGIN { exit !(a > 0 && b <= 1.05 * a && c >= 1.3 * a) }'
report $? "AllReduce, replicas = 2: the processes receive no more than with replicas = 1 (3: the values and the forwards, 1.3x or more)" "$tmp/two.out"
run sandblaster && agree sandblaster 2 2 $STEPS
report $? "Sandblaster (servers in rank 2), replicas = 2: the backups in rank 0 bitwise the primaries" "$tmp/sandblaster.out"
run downpour && agree downpour 1 2 $((2 * STEPS))
report $? "Downpour (2 asynchronous groups), replicas = 2: the backup bitwise its primary" "$tmp/downpour.out"

# The primary lends its summed gradient to the backup's message, but not to kLua, which scales it
# in place while the message may still be on its way.
run lua && agree lua 3 2 $STEPS
report $? "AllReduce, replicas = 2, a kLua updater: every backup bitwise its primary" "$tmp/lua.out"
# refused NAME PATTERN: the job of mode NAME ends with status 1, saying PATTERN.
refused() {
    timeout 60 "$SINGA_TUI" --procs 3 -e "$job" "$1" "$tmp/$1.txt" $STEPS >"$tmp/$1.out" 2>&1
    rc=$?
    [ $rc -eq 1 ] && grep -q -- "$2" "$tmp/$1.out"
    report $? "refused: $1 (status $rc)" "$tmp/$1.out"
}
refused zero "cluster: field 'replicas' must be from 1 to the job's 3 processes (each holder of a slice in a process of its own), got 0"
refused four "cluster: field 'replicas' must be from 1 to the job's 3 processes .*, got 4"
refused half "cluster: field 'replicas' must be an integer, got number 1.5"
refused hogwild "cluster: field 'replicas' = 2 does not go with several server groups (Hogwild)"

done_testing

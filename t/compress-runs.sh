# Shared by the tests of compression between processes (t/8701, t/8704): each sources it after
# writing $tmp/job.lua, whose arguments are PROCS MODE OUT STEPS [CKDIR FREQ fresh|resume] and
# which writes OUT (the params) and OUT.bytes (bytes_update and bytes_reply per step to rank 1).

# run NAME PROCS MODE STEPS [CKDIR FREQ fresh|resume]: NAME.txt, NAME.csv, NAME.out
run() {
    r_name=$1 r_procs=$2
    shift 2
    p=
    [ "$r_procs" -gt 1 ] && p="--procs $r_procs"
    timeout 120 "$SINGA_TUI" $p --metrics "$tmp/$r_name.csv" -e "$tmp/job.lua" "$r_procs" "$1" "$tmp/$r_name.txt" \
        "$2" ${3:+"$3" "$4" "$5"} >"$tmp/$r_name.out" 2>&1
}
field() { awk -v k="$2" '$1 == k { print $2 }' "$tmp/$1.txt.bytes"; }
# falls NAME: the last step's train loss below the first's.
falls() {
    awk -F, '$2 == "train" { if (!n++) first = $4; last = $4 } END {
        printf "# train loss %.4g -> %.4g\n", first, last; exit !(n > 1 && last < first) }' "$tmp/$1.csv"
}
# fewer NAME WHAT RATIO: NAME's bytes per step of WHAT (bytes_update: sent to the other process,
# bytes_reply: values got back) at most RATIO of the uncompressed run's (named off).
fewer() {
    a=$(field "$1" "$2") b=$(field off "$2")
    echo "# $2 per step: $1 $a bytes, uncompressed $b"
    awk -v a="$a" -v b="$b" -v r="$3" 'BEGIN { exit !(a > 0 && b > 0 && a <= r * b) }'
}

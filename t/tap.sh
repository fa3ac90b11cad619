# Shared by the shell tests: TAP reporting.  Source it, call `report`, end with `done_testing`.
n=0
failed=0
# report STATUS NAME [DIAG-FILE]: STATUS 0 is a pass; on failure the file's tail is shown.
report() {
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $n - $2"
    else
        echo "not ok $n - $2"
        failed=$((failed + 1))
        if [ -n "$3" ] && [ -f "$3" ]; then tail -n 20 "$3" | sed 's/^/# /'; fi
    fi
}
# skip NAME REASON: a test that cannot run here.
skip() {
    n=$((n + 1))
    echo "ok $n - $1 # SKIP $2"
}
done_testing() {
    echo "1..$n"
    [ "$failed" -eq 0 ]
}

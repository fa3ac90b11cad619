# Shared by the multi-process tests: the processes a test started, and their end.  Source it
# after tap.sh.

# The processes under pid $1.
descendants() {
    for c in $(pgrep -P "$1"); do echo "$c"; descendants "$c"; done
}
# Kills this run's processes only: another run of the test (in another tree) may be going on.
kill_ours() {
    for p in $(descendants $$); do kill -9 "$p" 2>/dev/null; done
}
# The pid of rank $1 among the processes under $launcher (a `singa-tui --procs` the test started).
rank_pid() {
    for p in $(descendants "$launcher"); do
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "SINGA_RANK=$1" && echo "$p"
    done
}
# The data the multi-process tests train on (testdata.idx) in $tmp/data, as the first test.
gen_data() {
    echo 'require("testdata").idx(arg[1], 480, 10, 12, 12, 4242)' >"$tmp/gen.lua"
    timeout 60 "$SINGA_TUI" -e "$tmp/gen.lua" "$tmp/data" >"$tmp/gen.out" 2>&1
    report $? "synthetic data written" "$tmp/gen.out"
}

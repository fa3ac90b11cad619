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
# Polls (up to 30 s) until the command succeeds.
until_ok() { for _ in $(seq 300); do "$@" && return 0; sleep 0.05; done; return 1; }
# A tcp port of the loopback that nothing listens on now.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# The data the multi-process tests train on (testdata.idx) in $tmp/data, as the first test.
gen_data() {
    echo 'require("testdata").idx(arg[1], 480, 10, 12, 12, 4242)' >"$tmp/gen.lua"
    timeout 60 "$SINGA_TUI" -e "$tmp/gen.lua" "$tmp/data" >"$tmp/gen.out" 2>&1
    report $? "synthetic data written" "$tmp/gen.out"
}
# same NAME REF (the partitioning tests): run NAME's train loss at every one of 50 steps within
# 1e-4 relative of run REF's ($tmp/NAME.csv from --metrics), and its params ($tmp/NAME.txt).
same() {
    awk -F, -v out="$tmp/$1.cmp" '
        FNR == 1 { file++ }
        $2 == "train" { if (file == 1) ref[$1] = $4; else got[$1] = $4 }
        END {
            worst = 0; n = 0
            for (s in ref) { n++; if (!(s in got)) { worst = 1; break }
                d = (got[s] - ref[s]) / ref[s]; if (d < 0) d = -d; if (d > worst) worst = d }
            printf "# %d steps, worst relative loss difference %.2g\n", n, worst > out
            exit !(n == 50 && worst <= 1e-4)
        }' "$tmp/$2.csv" "$tmp/$1.csv" && cat "$tmp/$1.cmp" &&
        d=$(timeout 30 "$SINGA_TUI" -e "$top_srcdir/t/paramdiff.lua" "$tmp/$1.txt" "$tmp/$2.txt" 2>&1) &&
        echo "# params: relative difference $d" && awk -v d="$d" 'BEGIN { exit !(d + 0 == d && d < 1e-4) }'
}

# params_close OUT REF: the relative difference of OUT's params against REF's (t/paramdiff.lua)
# is below 1e-5; says how close they are.
params_close() {
    d=$(timeout 30 "$SINGA_TUI" -e "$top_srcdir/t/paramdiff.lua" "$1" "$2" 2>&1)
    cmp -s "$1" "$2" && echo "# identical to all printed digits" || echo "# relative difference $d"
    awk -v d="$d" 'BEGIN { exit !(d + 0 == d && d < 1e-5) }'
}

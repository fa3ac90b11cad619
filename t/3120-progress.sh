# The progress line (redrawn in place with \r and ESC[K) goes to a terminal of the process's own
# only: on a pty without a launcher it is drawn; under a launcher (mpirun, PMI, Slurm, --procs)
# the ranks' outputs merge into one stream, often a log, so even a pty gets plain lines; so does
# a pipe.  `script` gives the job a pty.  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/3120-progress.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

gen_data
cat >"$tmp/job.lua" <<'EOF'
local singa = require "singa"
local td = require "testdata"
local dir = arg[1]
local r = singa.train{
  name = "progress", seed = 7, train_steps = 30, disp_freq = 10,
  cluster = arg[2] and singa.cluster.allreduce{ workers = 2, procs = 2 } or nil,
  updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = td.mlp(dir .. "/data/images-idx3-ubyte", dir .. "/data/labels-idx1-ubyte"),
}
print(string.format("done: %d steps", r.steps))
EOF
abs=$(cd "$tmp" && pwd)
esc=$(printf '\033')

# on_pty NAME [ENV...]: runs the job with stdout a pty (script), its output in $tmp/NAME.out.
on_pty() {
    name=$1
    shift
    env "$@" SINGA_TUI="$SINGA_TUI" script -qec "timeout 60 \"\$SINGA_TUI\" -e $abs/job.lua $abs" /dev/null \
        >"$tmp/$name.out" 2>&1 </dev/null
}
# plain NAME: the job ended and printed no progress line (no ESC[K, no [step/total]).
plain() {
    grep -q 'done: 30 steps' "$tmp/$1.out" && ! grep -q "$esc\[K" "$tmp/$1.out" && ! grep -q '\[30/30\]' "$tmp/$1.out"
}

if ! script -qec true /dev/null </dev/null >/dev/null 2>&1; then
    skip "progress on a pty" "no working script(1)"
else
    on_pty tty
    grep -q 'done: 30 steps' "$tmp/tty.out" && grep -q "$esc\[K\[30/30\]" "$tmp/tty.out"
    report $? "a pty of its own: the progress line is drawn in place" "$tmp/tty.out"
    for launcher in "OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=1" "PMI_RANK=0 PMI_SIZE=1" \
        "SLURM_PROCID=0 SLURM_NTASKS=1"; do
        on_pty launched $launcher
        plain launched
        report $? "a pty under a launcher ($launcher): plain lines only" "$tmp/launched.out"
    done
    env SINGA_TUI="$SINGA_TUI" script -qec "timeout 60 \"\$SINGA_TUI\" --procs 2 -e $abs/job.lua $abs procs" \
        /dev/null >"$tmp/procs.out" 2>&1 </dev/null
    plain procs
    report $? "a pty shared by --procs 2's ranks: plain lines only" "$tmp/procs.out"
fi

timeout 60 "$SINGA_TUI" -e "$tmp/job.lua" "$abs" | cat >"$tmp/pipe.out" 2>&1
plain pipe
report $? "a pipe: plain lines only" "$tmp/pipe.out"

# A real mpirun forwards each rank's output through a pty of its own: its log stays plain.
if command -v mpirun >/dev/null 2>&1; then
    as_root=
    [ "$(id -u)" -eq 0 ] && as_root=--allow-run-as-root
    timeout 120 mpirun $as_root --oversubscribe -np 1 -x LUA_PATH_5_4 -x SINGA_LUA_PATH \
        "$SINGA_TUI" -e "$tmp/job.lua" "$abs" >"$tmp/mpirun.out" 2>&1
    plain mpirun
    report $? "mpirun -np 1 into a log: plain lines only" "$tmp/mpirun.out"
else
    skip "mpirun -np 1 into a log" "no mpirun (Debian: openmpi-bin)"
fi

done_testing

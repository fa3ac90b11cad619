# Every process of a job runs the same build of libsinga: rank 0 compares the GNU build-id each
# process sends when it meets.  A process run on a copy of libsinga whose build-id differs is
# refused: at the start of a job (the job ends, every process naming both builds), and when it
# asks to rejoin a running job (SINGA_REJOIN=1: only it is refused, naming both, and the job goes
# on); a copy without a build-id is named by its version.  The same build then rejoins and the
# job ends well.  Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8645-rejoin-build.tmp
rm -rf "$tmp" && mkdir -p "$tmp/other" "$tmp/noid" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

# The program itself, not libtool's wrapper (which puts the built libsinga first on the path).
libs=$(dirname "$SINGA_TUI")/.libs
bin=$libs/singa-tui
if [ ! -x "$bin" ] || [ ! -f "$libs/libsinga.so.0" ] || ! command -v objcopy >/dev/null ||
    ! objcopy --dump-section .note.gnu.build-id="$tmp/note" "$libs/libsinga.so.0" "$tmp/probe.so" 2>/dev/null; then
    echo "1..0 # SKIP no shared libsinga with a build-id and objcopy here"
    exit 0
fi
# Every objcopy here writes a copy: given one file, it rewrites that file in place, and the
# processes of the tests running beside this one that map the built libsinga would fault.
# other/: the same library with the build-id's last byte changed; noid/: without a build-id
size=$(wc -c <"$tmp/note")
last=$(tail -c 1 "$tmp/note" | od -An -tu1 | tr -d ' ')
{ head -c $((size - 1)) "$tmp/note"; printf "\\$(printf %03o $(((last + 1) % 256)))"; } >"$tmp/note2"
objcopy --update-section .note.gnu.build-id="$tmp/note2" "$libs/libsinga.so.0" "$tmp/other/libsinga.so.0" &&
    objcopy --remove-section .note.gnu.build-id "$libs/libsinga.so.0" "$tmp/noid/libsinga.so.0"
report $? "copies of libsinga with another build-id and with none"
# the note: its name's and descriptor's sizes, its type, "GNU\0", the descriptor (the id)
idlen=$(od -An -tu4 -j 4 -N 4 "$tmp/note" | tr -d ' ')
ours=$(od -An -tx1 -j $((size - idlen)) "$tmp/note" | tr -d ' \n')
other=$(od -An -tx1 -j $((size - idlen)) "$tmp/note2" | tr -d ' \n')
echo "# build-ids: ours $ours, the copy's $other"

cat >"$tmp/job.lua" <<'EOF'
-- job.lua STEPS CKPT: a 2-group Hogwild job in 2 processes, checkpointing every 20 steps
local singa = require "singa"
local td = require "testdata"
local dir = "t/8645-rejoin-build.tmp"
-- every group's worker sleeps 4 ms a step, so the job lasts long enough for the rejoins however
-- fast or loaded the machine is
local net = td.slow_mlp(singa, dir .. "/data")
local cluster = singa.cluster.hogwild{ groups = 2, procs = 2, sync_freq = 1000 }
cluster.heartbeat_timeout, cluster.join_timeout = 2, 10
local r = singa.train{
  name = "rejoin-build", seed = 7, train_steps = tonumber(arg[1]), disp_freq = 10, test_steps = 2,
  checkpoint_path = dir .. "/" .. arg[2], checkpoint_freq = 20,
  cluster = cluster,
  updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.05 } },
  neuralnet = net,
}
print(string.format("rank %d: %d steps", singa.rank(), r.steps))
EOF

gen_data
export SINGA_SIZE=2 SLOW_SO="$PWD/t/plugins/.libs/slow.so"
# rank R OUT STEPS [LIBDIR]: one process of the job, as --procs starts it, on the built libsinga
# or on the one in LIBDIR; the job checkpoints into $tmp/ckpt-STEPS.
rank() {
    if [ -n "$4" ]; then
        SINGA_RANK=$1 LD_LIBRARY_PATH="$4" timeout 120 "$bin" -e "$tmp/job.lua" "$3" "ckpt-$3" >"$2" 2>&1
    else
        SINGA_RANK=$1 timeout 120 "$SINGA_TUI" -e "$tmp/job.lua" "$3" "ckpt-$3" >"$2" 2>&1
    fi
}

# At the start: rank 1 on a library without a build-id; the job ends, both naming both builds.
export SINGA_COORDINATOR=tcp://127.0.0.1:$(free_port)
rank 0 "$tmp/start0.out" 100 & r0=$!
rank 1 "$tmp/start1.out" 100 "$tmp/noid"; rc1=$?
wait $r0; rc0=$?
why="rank 1 runs another build (libsinga [0-9.]* without a build-id) than rank 0 (libsinga build-id $ours): every process of a job must run the same build of singa-tui (install the same one on every host)"
[ $rc0 -ne 0 ] && [ $rc1 -ne 0 ] && grep -q "$why" "$tmp/start0.out" && grep -q "$why" "$tmp/start1.out"
report $? "a job whose rank 1 runs another build is refused at its start, naming both ($rc0 $rc1)" "$tmp/start1.out"

export SINGA_COORDINATOR=tcp://127.0.0.1:$(free_port)
rank 0 "$tmp/r0.out" 1500 & r0=$!
rank 1 "$tmp/r1.out" 1500 & r1=$!
# a whole checkpoint with group 1's workers first: a process that rejoins resumes from it
past_ckpt() {
    s=$(sed -n 's/^step \([0-9]*\) *train g1 .*/\1/p' "$tmp/r0.out" | tail -n 1)
    [ -n "$s" ] && [ "$s" -ge 50 ]
}
until_ok past_ckpt
report $? "a 2-process Hogwild job trains group 1 (rank 1) past a checkpoint" "$tmp/r0.out"

for p in $(descendants $r1); do kill -9 "$p"; done # timeout and singa-tui
wait $r1 2>/dev/null
until_ok grep -q 'rank 1 (.*) at tcp://.* the job goes on without it' "$tmp/r0.out"
report $? "rank 1 killed: the job goes on without it" "$tmp/r0.out"

SINGA_REJOIN=1 rank 1 "$tmp/other.out" 1500 "$tmp/other"; rc=$?
why="SINGA_REJOIN: rank 1's build (libsinga build-id $other) is not the job's (libsinga build-id $ours): rejoin with the same build of singa-tui as the job's other processes"
[ $rc -ne 0 ] && grep -q "the coordinator refused this process: $why" "$tmp/other.out" &&
    grep -q "refused a process that asked to rejoin: $why" "$tmp/r0.out" && kill -0 $r0
report $? "a rejoin by another build is refused, naming both builds, the job going on ($rc)" "$tmp/other.out"

SINGA_REJOIN=1 rank 1 "$tmp/r1-again.out" 1500 & r1=$!
wait $r0; rc0=$?
wait $r1; rc1=$?
[ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] && grep -q 'rank 0: 1500 steps' "$tmp/r0.out" &&
    grep -q '^rank 1 of 2 .*; rejoined the job, its groups going on from step [0-9]*$' "$tmp/r1-again.out"
report $? "the same build rejoins: both processes end well ($rc0 $rc1)" "$tmp/r1-again.out"

[ "$failed" -eq 0 ] && [ -z "$KEEP" ] && rm -rf "$tmp"
done_testing

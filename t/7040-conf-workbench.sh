# The workbench opens a SINGA job.conf as it opens a Lua script: `singa-tui job.conf` shows the
# conf's job (its name, updater and net) waiting for r, trains it, and writes its checkpoint to
# SINGA's WORKSPACE/checkpoint.  Run by `make check` with SINGA_TUI and top_srcdir set; prints TAP.
: "${SINGA_TUI:?SINGA_TUI is not set}"
: "${top_srcdir:?top_srcdir is not set}"
tmp=t/7040-conf-workbench.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/tmux.sh"

awk 'BEGIN { srand(3); for (i = 0; i < 120; i++) { c = i % 3; printf "%d", c;
       for (f = 0; f < 4; f++) printf ",%.3f", (f == c ? 2 : 0) + rand() - 0.5; printf "\n" } }' >"$tmp/data.csv"
cat >"$tmp/job.conf" <<'CONF'
name: "conf-tui" train_steps: 20 disp_freq: 5
train_one_batch { alg: kBP }
updater { type: kSGD learning_rate { type: kFixed base_lr: 0.1 } }
neuralnet {
  layer { name: "data" type: kCSVInput store_conf { path: "data.csv" batchsize: 8 } }
  layer { name: "label" type: kLabel srclayers: "data" }
  layer { name: "fc" type: kInnerProduct srclayers: "data" innerproduct_conf { num_output: 3 } }
  layer { name: "loss" type: kSoftmaxLoss srclayers: "fc" srclayers: "label" }
}
cluster { workspace: "ws" }
CONF

start_tui -- job.conf
wait_for 'ready: r starts' 30
grep -q 'conf-tui | job.conf' "$tmp/screen.txt" && grep -q 'updater kSGD' "$tmp/screen.txt" &&
    grep -q 'data  *kCSVInput  *8x4' "$tmp/screen.txt"
report $? "singa-tui job.conf shows the conf's job, waiting for r" "$tmp/screen.txt"
keys r
wait_for 'finished' 30 && [ -f "$tmp/ws/checkpoint/step000000020.ckpt" ]
report $? "r trains it; its checkpoint goes to SINGA's WORKSPACE/checkpoint" "$tmp/screen.txt"
keys q
restored 0
report $? "q quits with status 0" "$tmp/screen.txt"
tui_done

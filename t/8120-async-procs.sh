# Asynchronous worker groups each cut across processes (2 groups of 2 workers, a process each, and
# a server apart): the server sums each group's contributions to a step apart from the other
# group's, which arrive in between.  With a rate of 0 the params stay as initialised, so every
# gradient the server applies depends on its batch only, whatever the timing: the server's
# gradients are those of the same job in one process (whose stub sums each group's in one).
# Prints TAP.

: "${SINGA_TUI:?SINGA_TUI is not set}"
tmp=t/8120-async-procs.tmp
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/procs.sh"
trap kill_ours EXIT

cat >"$tmp/job.lua" <<'LUA'
-- job.lua OUT PROCS: the process with the server writes each gradient it applies to OUT, one
-- "param step norm" line each, sorted (the groups' order changes from run to run).
local singa = require "singa"
local td = require "testdata"
local out, procs = arg[1], tonumber(arg[2])
local dir = out:match("^(.*)/")
local rows = {}
singa.train{
  name = "async", seed = 7, train_steps = 10, disp_freq = 0,
  cluster = { nworker_groups = 2, nworkers_per_group = 2, nworkers_per_procs = procs > 1 and 1 or 4,
              server_worker_separate = true },
  updater = { type = "kLua", learning_rate = { type = "kFixed", base_lr = 0 },
              update = function(step, w, g, st, lr, name)
                rows[#rows + 1] = string.format("%s %d %.9g", name, step, g:norm())
              end },
  neuralnet = td.mlp(dir .. "/data/images-idx3-ubyte", dir .. "/data/labels-idx1-ubyte"),
}
if #rows > 0 then
  table.sort(rows)
  local f = assert(io.open(out, "w"))
  f:write(table.concat(rows, "\n"), "\n")
  f:close()
end
LUA

gen_data

timeout 60 "$SINGA_TUI" -e "$tmp/job.lua" "$tmp/one.txt" 1 >"$tmp/one.out" 2>&1 && [ "$(wc -l <"$tmp/one.txt")" -eq 80 ]
report $? "in one process: 2 groups x 10 steps x 4 params, a gradient each" "$tmp/one.out"

timeout 120 "$SINGA_TUI" --procs 5 -e "$tmp/job.lua" "$tmp/five.txt" 5 >"$tmp/five.out" 2>&1 &&
    awk 'FNR == NR { a[FNR] = $0; n++; next }
         { split(a[FNR], r, " "); if (r[1] != $1 || r[2] != $2) bad++
           d = $3 - r[3]; if (d < 0) d = -d; if (d > 1e-5 * (r[3] < 0 ? -r[3] : r[3]) + 1e-7) bad++; m++ }
         END { printf "# %d of %d gradients differ\n", bad, n; exit !(n == 80 && m == n && !bad) }' "$tmp/one.txt" "$tmp/five.txt"
report $? "2 groups, each across 2 processes: the server applies the gradients of one process" "$tmp/five.out"

[ "$failed" -eq 0 ] && rm -rf "$tmp"
done_testing

-- A plugin of ABI 1.2 whose type set flag 256 (SINGA_LAYER_GRAD_TURNS until 1.3, now the host's
-- trait of a type) still has its gradients written in turns into the servers' momentum history
-- (src/runtime/history.c), and trains exactly as one worker does.  The plugin is
-- t/plugins/dense_old.c.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"

local build = assert(os.getenv("SINGA_TUI"), "SINGA_TUI is not set"):match("^(.*)/[^/]*$") or "."
local dense = singa.load_plugin(build .. "/t/plugins/.libs/dense_old.so")
tap.is(dense.abi, "1.2", "dense_old.so is a plugin of ABI 1.2")

local dir = td.tmpdir("2730-plugin-grad-turns")
local img, lab = td.idx(dir .. "/train", 240, 10, 12, 12, 4242)
local net = td.mlp(img, lab)
net.layer[4].type = "kDenseOld"
net.layer[6].type = "kDenseOld"

local function train(cluster)
  local ok, r = pcall(singa.train, {
    name = "turns", seed = 7, train_steps = 30, disp_freq = 0, cluster = cluster, neuralnet = net,
    updater = { type = "kSGD", momentum = 0.8, weight_decay = 1e-3,
                learning_rate = { type = "kFixed", base_lr = 0.05 } },
  })
  if not ok then tap.diag(r) return nil end
  return r
end

local base = train(nil)
local cluster = singa.cluster.sandblaster{ workers = 2, servers = 2 }
cluster.workspace = dir .. "/ws"
local r = train(cluster)
local num, den = 0, 0
for name, t in pairs(base and r and base.params or {}) do
  num = num + r.params[name]:clone():sub(t):norm() ^ 2
  den = den + t:norm() ^ 2
end
local d = r and den > 0 and math.sqrt(num / den) or math.huge
tap.ok(d < 1e-5, string.format("Sandblaster, 2 workers, kDenseOld: exact (relative difference %.2g)", d))
local f = io.open(cluster.workspace .. "/rank0.log")
local text = f and f:read("a") or ""
if f then f:close() end
tap.is(text:match("momentum history: (%d+ of %d+) params"), "2 of 2",
       "its weights went into the servers' history in turns")
tap.done()

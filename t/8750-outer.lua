-- cluster.outer in one process (local SGD with an outer optimizer, runtime/server_outer.c): over
-- one round, kSGD with momentum 0 and rate = the number of groups is SINGA's sync (which adds up
-- the groups' changes) and rate 1 is the groups' average; kNesterov over two rounds against a
-- recomputation here from each round's averaged change; a resume from a checkpoint ends with the
-- uninterrupted run's params bit for bit, on the same topology and resharded over more servers;
-- a plain job resumes the checkpoint; the momentum compensation leaves the groups' momentum;
-- bad input.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"

local dir = td.tmpdir("8750-outer")
local img, lab = td.idx(dir .. "/train", 480, 10, 12, 12, 4242)
local H = 10 -- sync_freq

local function nesterov(lr) return { type = "kNesterov", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = lr } } end
local function sgd(lr) return { type = "kSGD", learning_rate = { type = "kFixed", base_lr = lr } } end

local function hogwild(outer, extra)
  local c = { nworker_groups = 2, nserver_groups = 2, sync_freq = H, outer = outer }
  for k, v in pairs(extra or {}) do c[k] = v end
  return c
end

local function job(cluster, steps, o)
  o = o or {}
  return {
    name = "outer", seed = 7, train_steps = steps, disp_freq = 0, cluster = cluster,
    checkpoint_path = o.ck, checkpoint_freq = o.ck and H or nil, resume = o.resume,
    updater = o.updater or sgd(0.05),
    neuralnet = td.mlp(img, lab),
  }
end

local function train(...)
  local ok, r = pcall(singa.train, job(...))
  if not ok then tap.diag(r) return nil end
  return r
end

-- ||a - b|| / ||b|| over every param.
local function rel_diff(a, b)
  if not a or not b then return math.huge end
  local num, den = 0, 0
  for name, t in pairs(b) do
    num = num + a[name]:clone():sub(t):norm() ^ 2
    den = den + t:norm() ^ 2
  end
  return math.sqrt(num / den)
end

local function map(ps, f)
  local out = {}
  for name, t in pairs(ps) do out[name] = f(name, t) end
  return out
end

-- The checkpoint of `step` of folder `from` alone in a fresh folder, for a resume.
local function ckpt_copy(from, step, name)
  local to = dir .. "/" .. name
  assert(os.execute(string.format("rm -rf '%s' && mkdir -p '%s' && cp '%s'/step%09d.* '%s'/", to, to, from, step, to)))
  return to
end

-- One round: SINGA's sync and the averages.  SINGA's master adds a delta after its next update,
-- so the groups step together (staleness 0) for it to come after the master's last but one.
local init = train(nil, 1, { updater = sgd(0) }) -- the initial params: a step at rate 0
local singa_sync = train(hogwild(nil, { staleness = 0 }), H)
local sgd2 = train(hogwild(sgd(2)), H)
local d = rel_diff(sgd2 and sgd2.params, singa_sync.params)
tap.ok(d < 1e-6, string.format("one round: outer kSGD, momentum 0, rate 2 = SINGA's sync of 2 groups, which adds "
                               .. "their changes (to float rounding: %.2g)", d))
local avg = map(singa_sync.params, function(name, t) return t:clone():add(init.params[name]):scale(0.5) end)
local sgd1 = train(hogwild(sgd(1)), H)
d = rel_diff(sgd1 and sgd1.params, avg)
tap.ok(d < 1e-6, string.format("outer kSGD, momentum 0, rate 1: the groups' average (%.2g; SINGA's sync is %.2g away)",
                               d, rel_diff(singa_sync.params, avg)))

-- Two rounds of kNesterov, checkpointed every round, against a recomputation: each round's
-- averaged change is what a round of kSGD at rate 1 subtracts from the same start.
local ck = dir .. "/ck"
local run = train(hogwild(nesterov(0.7)), 2 * H, { ck = ck })
local again = train(hogwild(nesterov(0.7)), 2 * H)
tap.ok(run and again and rel_diff(again.params, run.params) == 0, "kNesterov: a run repeats bit for bit")
-- A final checkpoint's shards: both server groups end with the same values, the last synced (a
-- last round at the last step when it is not one of sync_freq's).
local function groups_agree(d, step, what)
  local s0 = td.read_ckpt(string.format("%s/step%09d.s0.0.ckpt", d, step)) or {}
  local s1 = td.read_ckpt(string.format("%s/step%09d.s1.0.ckpt", d, step)) or {}
  local same, n = true, 0
  for name, v in pairs(s0) do
    local last = s0[name:gsub("^param/(.*)$", "outer/%1/last")]
    if name:match("^param/") then
      n = n + 1
      for i = 1, #v do same = same and s1[name] and last and v[i] == s1[name][i] and v[i] == last[i] end
    end
  end
  tap.ok(n == 4 and same, what)
end
groups_agree(ck, 2 * H, "the server groups end with the same values bit for bit, their last synced ones")
train(hogwild(nesterov(0.7)), 2 * H + 3, { ck = dir .. "/tail" })
groups_agree(dir .. "/tail", 2 * H + 3, "... also after a last round of 3 updates")
local p1 = singa.load(td.ckpt(ck, H))
local from1 = ckpt_copy(ck, H, "from1")
local sgd_b = train(hogwild(sgd(1)), 2 * H, { ck = from1, resume = true })
local deltas = {
  map(init.params, function(name, t) return t:clone():sub(sgd1.params[name]) end),
  sgd_b and map(p1.params, function(name, t) return t:clone():sub(sgd_b.params[name]) end),
}
local want, h = {}, {}
for name, t in pairs(init.params) do
  local w, hist = t:clone(), t:clone():scale(0)
  for r = 1, 2 do
    local prev = hist:clone()
    hist:scale(0.9):axpy(0.7, deltas[r] and deltas[r][name] or prev)
    w:sub(hist:clone():scale(1.9):axpy(-0.9, prev))
    if r == 1 then h[name] = w:clone() end
  end
  want[name] = w
end
d = rel_diff(p1 and p1.params, h)
tap.ok(d < 1e-5, string.format("kNesterov: the params after round 1 (the checkpoint of step %d) as recomputed (%.2g)", H, d))
d = rel_diff(run and run.params, want)
local nomomentum = deltas[2] and map(p1.params, function(name, t) return t:clone():axpy(-0.7, deltas[2][name]) end)
tap.ok(d < 1e-5, string.format("kNesterov: after round 2 as recomputed with the momentum history (%.2g; without the "
                               .. "history %.2g away)", d, rel_diff(nomomentum, want)))

-- Other layouts of the same groups: values in messages, two workers per group, three servers.
for _, v in ipairs{ { "values in messages (share_memory = false)", { share_memory = false }, 0 },
                    { "2 workers per group (a hybrid)", { nworkers_per_group = 2 }, 1e-5 },
                    { "3 servers per group", { nservers_per_group = 3 }, 0 } } do
  local r = train(hogwild(nesterov(0.7), v[2]), 2 * H)
  d = rel_diff(r and r.params, run and run.params)
  tap.ok(d <= v[3], string.format("%s: the same params (%.2g)", v[1], d))
end

-- The checkpoint of round 1 resumes with the outer state to the uninterrupted run's params.
local resumed = train(hogwild(nesterov(0.7)), 2 * H, { ck = ckpt_copy(ck, H, "resume"), resume = true })
d = rel_diff(resumed and resumed.params, run and run.params)
tap.ok(d == 0, string.format("resumed from step %d, the uninterrupted run's params bit for bit (%.2g)", H, d))
local wide = train(hogwild(nesterov(0.7), { nservers_per_group = 3 }), 2 * H,
                   { ck = ckpt_copy(ck, H, "wide"), resume = true })
d = rel_diff(wide and wide.params, run and run.params)
tap.ok(d < 1e-7, string.format("resharded over 3 servers per group: the outer state follows, the same params (%.2g)", d))
local plain = train(nil, 2 * H + 2, { ck = ckpt_copy(ck, 2 * H, "plain"), resume = true })
tap.ok(plain ~= nil, "a plain job resumes the outer-optimizer checkpoint (the outer state dropped)")

-- The groups' momentum is theirs: rounds every group waits for make no gradient stale.
local ws = dir .. "/ws"
train(hogwild(nesterov(0.7), { sync_freq = 1, workspace = ws }), 2,
      { updater = { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.01 } } })
local log = td.read(ws .. "/rank0.log") or ""
tap.ok(log:find("kSGD momentum 0.9 as set (cluster.momentum_compensation: with cluster.outer", 1, true),
       "momentum_compensation with cluster.outer: the groups' momentum as set, and the log says why")

-- Bad input.
tap.raises({ "cluster: field 'outer'", "needs several server groups", "this job has 1" },
           "outer with one server group (AllReduce) is refused", singa.train,
           job(singa.cluster.allreduce{ workers = 2, outer = nesterov(0.7) }, 2))
tap.raises({ "cluster: field 'outer'", "one worker group per server group", "nworker_groups = 4, nserver_groups = 2" },
           "outer with server groups shared by worker groups is refused", singa.train,
           job({ nworker_groups = 4, nserver_groups = 2, outer = nesterov(0.7) }, 2))
local bad = nesterov(0.7)
bad.momentun = 0.5
tap.raises({ "cluster.outer: unknown field 'momentun'", "momentum" }, "a misspelt field of outer is refused",
           singa.train, job(hogwild(bad), 2))
tap.raises("cluster.outer: field 'learning_rate' is required", "outer without a learning_rate is refused",
           singa.train, job(hogwild{ type = "kNesterov" }, 2))
tap.raises("cluster.outer: unknown type 'kNesterow'", "an unknown outer type is refused",
           singa.train, job(hogwild{ type = "kNesterow", learning_rate = { type = "kFixed", base_lr = 1 } }, 2))

-- Scratch files go when everything passed; on a failure they stay for a look.
if tap.failed == 0 then os.execute("rm -rf '" .. dir .. "'") end
tap.done()

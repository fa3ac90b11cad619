-- cluster.compress = { powersgd = R } refuses what it cannot do, naming the field and what it
-- takes: a rank that is not a positive integer, a negative or fractional start, start without
-- powersgd, topk or values beside it, an asynchronous framework (Downpour, Hogwild) and
-- shard_params (and top-k's values = "update" likewise); a job in one process takes it (nothing
-- leaves the process) and trains as without.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"

local dir = td.tmpdir("8705-powersgd-errors")
local img, lab = td.idx(dir, 64, 4)

local function train(compress, cluster)
  return pcall(singa.train, {
    name = "powersgd", seed = 1, train_steps = 3,
    cluster = cluster or singa.cluster.allreduce{ workers = 2, compress = compress },
    updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.1 } },
    neuralnet = td.mlp(img, lab),
  })
end

local function refused(compress, cluster)
  local ok, err = train(compress, cluster)
  return not ok and tostring(err) or nil
end

for _, r in ipairs{ 0, -2, 2.5 } do
  local e = refused{ powersgd = r }
  tap.ok(e and e:match("'powersgd'") and e:match("positive integer"), "powersgd = " .. r .. ": " .. tostring(e))
end
local e = refused{ powersgd = "two" }
tap.ok(e and e:match("powersgd") and e:match("number"), "powersgd = \"two\": " .. tostring(e))
for _, s in ipairs{ -1, 1.5 } do
  e = refused{ powersgd = 2, start = s }
  tap.ok(e and e:match("'start'") and e:match("integer >= 0"), "start = " .. s .. ": " .. tostring(e))
end
e = refused{ topk = 0.1, start = 3 }
tap.ok(e and e:match("'start'") and e:match("powersgd"), "start without powersgd: " .. tostring(e))
e = refused{ powersgd = 2, topk = 0.1 }
tap.ok(e and e:match("powersgd") and e:match("topk"), "powersgd with topk: " .. tostring(e))
e = refused{ powersgd = 2, values = "int8" }
tap.ok(e and e:match("powersgd") and e:match("values"), "powersgd with values: " .. tostring(e))
e = refused(nil, singa.cluster.downpour{ groups = 2, compress = { powersgd = 2 } })
tap.ok(e and e:match("powersgd") and e:match("synchronous") and e:match("has 2"), "Downpour: " .. tostring(e))
e = refused(nil, singa.cluster.hogwild{ groups = 2, compress = { powersgd = 4 } })
tap.ok(e and e:match("powersgd") and e:match("Hogwild"), "Hogwild: " .. tostring(e))
e = refused(nil, singa.cluster.downpour{ groups = 2, compress = { topk = 0.1, values = "update" } })
tap.ok(e and e:match('values = "update"') and e:match("synchronous"), "top-k's values = \"update\" in Downpour: "
       .. tostring(e))
e = refused(nil, { nworkers_per_group = 2, nservers_per_group = 2, nworkers_per_procs = 1, nservers_per_procs = 1,
                   shard_params = true, compress = { powersgd = 2 } })
tap.ok(e and e:match("powersgd") and e:match("shard_params"), "shard_params: " .. tostring(e))

local ok, r = train{ powersgd = 2, start = 1, error_feedback = false }
local plain_ok, plain = train(nil)
tap.ok(ok and plain_ok and r.train.loss == plain.train.loss,
       "in one process powersgd is taken and trains as without: " .. tostring(ok and r.train.loss or r))
tap.done()

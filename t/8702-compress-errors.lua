-- cluster.compress refuses what it cannot do, naming the field and the values it takes: an
-- unknown name, a top-k ratio outside (0, 1], an error_feedback that is not a boolean, an unknown
-- key, an unknown way for the values back, int8 changes in a job of several worker groups; the
-- presets pass it through.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"

local dir = td.tmpdir("8702-compress-errors")
local img, lab = td.idx(dir, 64, 4)

local function refused(compress, cluster)
  local ok, err = pcall(singa.train, {
    name = "compress", seed = 1, train_steps = 1,
    cluster = cluster or singa.cluster.allreduce{ workers = 2, compress = compress },
    updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.1 } },
    neuralnet = td.mlp(img, lab),
  })
  return not ok and tostring(err) or nil
end

local e = refused("fp8")
tap.ok(e and e:match("compress") and e:match("fp16") and e:match("bf16") and e:match("topk") and e:match("fp8"),
       "an unknown name: " .. tostring(e))
for _, r in ipairs{ 0, -0.5, 1.5 } do
  e = refused{ topk = r }
  tap.ok(e and e:match("topk") and e:match("%(0, 1%]"), "topk = " .. r .. ": " .. tostring(e))
end
e = refused{ error_feedback = true }
tap.ok(e and e:match("topk") and e:match("%(0, 1%]"), "topk missing: " .. tostring(e))
e = refused{ topk = 0.1, error_feedback = "yes" }
tap.ok(e and e:match("error_feedback") and e:match("boolean"), "error_feedback not a boolean: " .. tostring(e))
e = refused{ topk = 0.1, ratio = 1 }
tap.ok(e and e:match("ratio"), "an unknown key: " .. tostring(e))
e = refused(16)
tap.ok(e and e:match("compress") and e:match("a string or a table"), "a number: " .. tostring(e))
e = refused{ topk = 0.1, values = "fp8" }
tap.ok(e and e:match("values") and e:match("int8") and e:match("fp32") and e:match("fp8"),
       "an unknown way for the values: " .. tostring(e))
e = refused(nil, singa.cluster.downpour{ groups = 2, compress = { topk = 0.1, values = "int8" } })
tap.ok(e and e:match("int8") and e:match("one worker group") and e:match("has 2"),
       "int8 changes with 2 worker groups: " .. tostring(e))
tap.ok(refused{ topk = 0.1, values = "int8" } == nil and refused{ topk = 0.1, values = "fp32" } == nil,
       "values = \"int8\" and \"fp32\" are taken")
tap.ok(refused{ topk = 1, error_feedback = false } == nil and refused("bf16") == nil, "topk = 1 and bf16 are taken")
tap.done()

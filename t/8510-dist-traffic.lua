-- The runtime's byte counters in one process, where values travel by address or lie in a
-- shared replica rather than in ZeroMQ frames: a reply's two legs (server to stub, stub to
-- worker) and an update's (worker to stub, stub to server) count the same bytes, the values
-- they deliver, whichever way those travel (the workbench once showed 1.1G/s on one leg and
-- 68.9k on the other).
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"

local dir = td.tmpdir("8510-dist-traffic")
local img, lab = td.idx(dir .. "/train", 240, 10, 12, 12, 4242)

local function bytes(r, type, peer, field)
  local sum, msgs = 0, 0
  for _, row in ipairs(r.stats.traffic) do
    if row.type == type and row.peer:match("^" .. peer) then
      sum = sum + row[field]
      msgs = msgs + row[field == "bytes_sent" and "sent" or "received"]
    end
  end
  return sum, msgs
end

local nvalues = 0 -- floats in every param
for _, t in pairs(singa.train{ name = "base", seed = 1, train_steps = 1, disp_freq = 0,
    updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.05 } },
    neuralnet = td.mlp(img, lab) }.params) do
  nvalues = nvalues + t:numel()
end

-- { name, cluster, workers per group: each is told of the values its group shares }
for _, c in ipairs{ { "downpour", singa.cluster.downpour{ groups = 2 }, 1 },
                    { "sandblaster", singa.cluster.sandblaster{ workers = 2 }, 2 } } do
  local steps = 20
  local r = singa.train{ name = c[1], seed = 1, train_steps = steps, disp_freq = 0, cluster = c[2],
    updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.05 } },
    neuralnet = td.mlp(img, lab) }
  local from_servers, n1 = bytes(r, "update-reply", "server", "bytes_received")
  local to_workers, n2 = bytes(r, "update-reply", "worker", "bytes_sent")
  tap.ok(n1 > 0 and n2 > 0, c[1] .. ": replies counted (" .. n1 .. " from servers, " .. n2 .. " to workers)")
  -- The headers differ (a reply per slice, a notice per param); the values must not.
  local values = to_workers - 56 * n2
  tap.ok(math.abs((from_servers - 56 * n1) * c[3] - values) <= 4 * nvalues,
         string.format("%s: replies' values from the servers %d bytes, to each of its %d workers a group %d", c[1],
                       from_servers - 56 * n1, c[3], values))
  tap.ok(values >= 4 * nvalues * steps,
         string.format("%s: the workers' replies carry their params' values (%d bytes >= %d)", c[1], values, 4 * nvalues * steps))
  local from_w = bytes(r, "update", "worker", "bytes_received")
  local to_s = bytes(r, "update", "server", "bytes_sent")
  tap.ok(from_w >= 4 * nvalues * steps and to_s >= 4 * nvalues * steps,
         string.format("%s: updates carry the gradients' values (from workers %d, to servers %d bytes)", c[1], from_w, to_s))
end
tap.done()

-- Cluster presets: the frameworks of the SINGA paper (section 4.3) as topology tables.  Each
-- returns a plain `cluster` table, so a job switches framework by changing one line:
--   cluster = singa.cluster.downpour{ groups = 4, servers = 2 }
-- Options: the sizes named below, plus `procs` (default 1: every thread in one process; n: the
-- layout for `singa-tui --procs n` or a launcher's n ranks), and every other ClusterProto field
-- (sync_freq, share_memory, workspace, coordinator, bind, heartbeat_timeout, join_timeout,
-- curve, shard_params, ...), copied through.  The list comes from the engine, so a field added
-- there passes through here too.
local core = require "singa.core"

local M = {}

-- The fields a preset computes from its sizes: the topology itself.
local topology = { framework = true, nworker_groups = true, nworkers_per_group = true, nserver_groups = true,
                   nservers_per_group = true, server_worker_separate = true, nworkers_per_procs = true,
                   nservers_per_procs = true }
local passthrough = {}
for _, f in ipairs(core.cluster_fields) do passthrough[f] = not topology[f] end

local function count(opts, name, default)
  local v = opts[name] == nil and default or opts[name]
  if math.type(v) ~= "integer" or v < 1 then
    error(string.format("singa.cluster: option '%s' must be a positive integer, got %s", name, tostring(v)), 3)
  end
  return v
end

-- The `procs` option where a framework allows 1 (the embedded default) or exactly `n`.
local function procs(opts, framework, n, what)
  local p = count(opts, "procs", 1)
  if p ~= 1 and p ~= n then
    error(string.format("singa.cluster.%s: procs must be 1 or %s (%d), got %d", framework, what, n, p), 3)
  end
  return p
end

local function finish(opts, t, known)
  for k, v in pairs(opts) do
    if topology[k] then
      error(string.format("singa.cluster.%s: option '%s' is the preset's to compute (write a plain cluster table "
                          .. "to set it)", t.framework, tostring(k)), 3)
    elseif passthrough[k] and t[k] == nil then
      t[k] = v
    elseif not known[k] and not passthrough[k] then
      error(string.format("singa.cluster.%s: unknown option '%s'", t.framework, tostring(k)), 3)
    end
  end
  return t
end

-- Sandblaster: one synchronous group of `workers` workers and one group of `servers` servers,
-- servers apart from workers.  procs > 1 spreads the workers over procs - 1 processes and puts
-- the servers in the last one.
function M.sandblaster(opts)
  opts = opts or {}
  local w, s, p = count(opts, "workers", 2), count(opts, "servers", 1), count(opts, "procs", 1)
  if p > 1 and w % (p - 1) ~= 0 then
    error(string.format("singa.cluster.sandblaster: %d workers do not fill %d worker processes evenly", w, p - 1), 2)
  end
  return finish(opts, {
    framework = "sandblaster", nworker_groups = 1, nworkers_per_group = w, nserver_groups = 1,
    nservers_per_group = s, server_worker_separate = true,
    nworkers_per_procs = p > 1 and w // (p - 1) or w, nservers_per_procs = s,
  }, { workers = true, servers = true, procs = true })
end

-- AllReduce: one synchronous group of n workers and n servers, a worker and a server per process.
function M.allreduce(opts)
  opts = opts or {}
  local n = count(opts, "workers", 2)
  local p = procs(opts, "allreduce", n, "the number of workers")
  return finish(opts, {
    framework = "allreduce", nworker_groups = 1, nworkers_per_group = n, nserver_groups = 1,
    nservers_per_group = n, nworkers_per_procs = p == 1 and n or 1, nservers_per_procs = p == 1 and n or 1,
  }, { workers = true, procs = true })
end

-- Downpour: `groups` asynchronous groups of `workers` synchronous workers, sharing one group of
-- `servers` servers apart from them.  procs > 1: one process per worker group, then the servers'.
function M.downpour(opts)
  opts = opts or {}
  local g, w, s = count(opts, "groups", 2), count(opts, "workers", 1), count(opts, "servers", 1)
  local p = procs(opts, "downpour", g + 1, "groups + 1")
  return finish(opts, {
    framework = "downpour", nworker_groups = g, nworkers_per_group = w, nserver_groups = 1,
    nservers_per_group = s, server_worker_separate = true,
    nworkers_per_procs = p == 1 and g * w or w, nservers_per_procs = s,
  }, { groups = true, workers = true, servers = true, procs = true })
end

-- Distributed Hogwild: n groups of one worker and n server groups of one server, one of each per
-- process, server groups syncing every sync_freq updates.
function M.hogwild(opts)
  opts = opts or {}
  local n = count(opts, "groups", 2)
  local p = procs(opts, "hogwild", n, "the number of groups")
  return finish(opts, {
    framework = "hogwild", nworker_groups = n, nworkers_per_group = 1, nserver_groups = n,
    nservers_per_group = 1, nworkers_per_procs = p == 1 and n or 1, nservers_per_procs = p == 1 and n or 1,
    sync_freq = opts.sync_freq or 1,
  }, { groups = true, procs = true })
end

return M

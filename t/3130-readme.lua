-- README.md keeps up with the code: every built-in layer type has a row in the layer table, and
-- every cluster preset a line on when to pick it and what `procs` it needs.
local singa = require "singa"
local tap = require "tap"

local f = assert(io.open(os.getenv("top_srcdir") .. "/README.md"))
local readme = f:read("a")
f:close()

local from_plugin = {}
for _, p in ipairs(singa.plugins()) do
  for _, t in ipairs(p.types) do from_plugin[t] = true end
end
-- Partitioning inserts these itself; the README says so where it describes partitioning.
local inserted = { kBridgeSrc = true, kBridgeDst = true }
local missing, builtin = {}, 0
for _, t in ipairs(singa.layer_types()) do
  if not from_plugin[t] then
    builtin = builtin + 1
    local row = readme:find("\n| `" .. t .. "` |", 1, true)
    if not row and not (inserted[t] and readme:find("`" .. t .. "`", 1, true)) then missing[#missing + 1] = t end
  end
end
tap.ok(builtin >= 30 and #missing == 0,
       string.format("the layer table has a row for each of the %d built-in layer types", builtin),
       "missing: " .. table.concat(missing, ", "))

local presets, without = {}, {}
for name, fn in pairs(singa.cluster) do
  if type(fn) == "function" then
    presets[#presets + 1] = name
    local line = readme:match("\n%- `" .. name .. "{[^}]*}`:(.-)\n%-") or readme:match("\n%- `" .. name .. "{[^}]*}`:(.-)\n\n")
    if not (line and line:find("`procs` is", 1, true)) then without[#without + 1] = name end
  end
end
table.sort(presets)
tap.ok(#presets >= 4 and #without == 0,
       string.format("each cluster preset (%s) has a line saying when to pick it and its `procs`",
                     table.concat(presets, ", ")), "without one: " .. table.concat(without, ", "))

tap.ok(readme:find("Run the whole test suite %(about %d+ minutes on 2 cores%)") ~= nil,
       "the README says how long the test suite takes")
tap.done()

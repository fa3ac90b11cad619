-- paramdiff.lua A B: the relative difference ||a - b|| / ||b|| of the params in two files of
-- "name value" lines (one per value, in the same order per name), as the multi-process tests'
-- jobs write them; their other lines (accuracy, dropped, traffic_ranks) are not params.
local other = { accuracy = true, dropped = true, traffic_ranks = true }
local function values(path)
  local by = {}
  for line in io.lines(path) do
    local name, x = line:match("^(%S+) (%S+)$")
    if name and not other[name] then
      by[name] = by[name] or {}
      table.insert(by[name], tonumber(x))
    end
  end
  return by
end
local a, b = values(arg[1]), values(arg[2])
local num, den = 0, 0
for name, vb in pairs(b) do
  local va = a[name] or {}
  for i, x in ipairs(vb) do num = num + ((va[i] or 0) - x) ^ 2; den = den + x * x end
end
print(string.format("%.3g", den > 0 and math.sqrt(num / den) or 1))

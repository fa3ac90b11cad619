-- ckdiff.lua A1 B1 [A2 B2 ...]: for each pair of checkpoints (a file of a distributed step, or a
-- plain file), prints "A's step, the relative difference ||a - b|| / ||b|| of their params, and
-- `identical` when every value is bitwise the same" (`failed REASON` when one does not load).
local singa = require "singa"
for i = 1, #arg, 2 do
  local ok_a, a = pcall(singa.load, arg[i])
  local ok_b, b = pcall(singa.load, arg[i + 1])
  if not (ok_a and ok_b) then
    print(string.format("%s failed %s", arg[i], tostring(ok_a and b or a):gsub("\n", " ")))
  else
    local num, den, same = 0, 0, a.step == b.step
    for name, tb in pairs(b.params) do
      local va, vb = a.params[name] and a.params[name]:totable() or {}, tb:totable()
      local function walk(x, y)
        if type(y) == "table" then
          for k, v in ipairs(y) do walk(type(x) == "table" and x[k] or nil, v) end
        else
          x = tonumber(x) or 0
          num, den = num + (x - y) ^ 2, den + y * y
          if string.pack("<f", x) ~= string.pack("<f", y) then same = false end
        end
      end
      walk(va, vb)
    end
    for name in pairs(a.params) do if not b.params[name] then same, num = false, num + 1 end end
    print(string.format("%d %.3g%s", a.step, den > 0 and math.sqrt(num / den) or 1, same and " identical" or ""))
  end
end

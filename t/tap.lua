-- A minimal TAP producer for tests written in Lua (run by `singa-tui -e`).
local tap = { n = 0, failed = 0 }

local function report(ok, name, diag)
  tap.n = tap.n + 1
  print(string.format("%s %d - %s", ok and "ok" or "not ok", tap.n, name or ""))
  if not ok then
    tap.failed = tap.failed + 1
    if diag then print("# " .. tostring(diag):gsub("\n", "\n# ")) end
  end
  return ok
end

function tap.ok(cond, name, diag) return report(cond and true or false, name, diag) end

function tap.is(got, want, name)
  return report(got == want, name, string.format("got %s, want %s", tostring(got), tostring(want)))
end

function tap.near(got, want, tol, name)
  local ok = type(got) == "number" and math.abs(got - want) <= tol
  return report(ok, name, string.format("got %s, want %s +- %s", tostring(got), tostring(want), tostring(tol)))
end

-- Passes when f(...) raises an error whose message contains `want` (plain text), or every
-- string of `want` when it is a list.
function tap.raises(want, name, f, ...)
  local ok, msg = pcall(f, ...)
  if ok then return report(false, name, "no error raised") end
  msg = tostring(msg)
  local missing = {}
  for _, w in ipairs(type(want) == "table" and want or { want }) do
    if not msg:find(w, 1, true) then missing[#missing + 1] = string.format("%q", w) end
  end
  return report(#missing == 0, name, string.format("message %q lacks %s", msg, table.concat(missing, ", ")))
end

function tap.diag(msg) print("# " .. tostring(msg):gsub("\n", "\n# ")) end

-- Prints the plan; call last.  Exits non-zero when anything failed.
function tap.done()
  print("1.." .. tap.n)
  if tap.failed > 0 then os.exit(1) end
end

return tap

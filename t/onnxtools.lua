-- The ONNX tests' tools: python3-onnx's checker (t/onnx-check.py) and onnxruntime-node
-- (t/onnx-run.js), found where scripts/install-deps.sh puts them ($SINGA_ONNXRUNTIME_DIR,
-- default /usr/local/lib/singa-onnxruntime; Debian's /usr/bin/python3 with python3-onnx).
local M = {}
local src = os.getenv("top_srcdir") or "."
local ort = os.getenv("SINGA_ONNXRUNTIME_DIR") or "/usr/local/lib/singa-onnxruntime"
local python = os.getenv("SINGA_ONNX_PYTHON") or "/usr/bin/python3"

local function q(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local function sh(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("a")
  local ok = p:close()
  return ok, out
end

-- nil when both tools are there, else why not.
function M.missing()
  if not sh(q(python) .. " -c 'import onnx'") then
    return "python3-onnx is not installed (scripts/install-deps.sh installs it)"
  end
  local ok = sh("node -e " .. q("require.resolve('onnxruntime-node', { paths: [" .. string.format("%q", ort) ..
                                 ", " .. string.format("%q", ort .. "/node_modules") .. "] })"))
  if not ok then
    return "onnxruntime-node is not in " .. ort .. " (scripts/install-deps.sh installs it; or set SINGA_ONNXRUNTIME_DIR)"
  end
end

-- onnx.checker.check_model(full_check): ok, and its report (ir_version, opset, inputs, outputs, ops).
function M.check(model) return sh(q(python) .. " " .. q(src .. "/t/onnx-check.py") .. " " .. q(model)) end

-- Runs the model on rows (a list of equal-length lists) shaped `dims` (a list, batch first) in
-- onnxruntime-node: the output as a list of rows, and the runner's JSON line; nil and the error.
function M.run(model, rows, dims, tmp)
  local vals = {}
  for _, r in ipairs(rows) do
    for _, v in ipairs(r) do vals[#vals + 1] = string.pack("<f", v) end
  end
  local fin, fout = tmp .. "/in.f32", tmp .. "/out.f32"
  local f = assert(io.open(fin, "wb"))
  f:write(table.concat(vals))
  f:close()
  os.remove(fout)
  local ok, out = sh("SINGA_ONNXRUNTIME_DIR=" .. q(ort) .. " node " .. q(src .. "/t/onnx-run.js") .. " " .. q(model) .. " " ..
                     q(fin) .. " " .. table.concat(dims, ",") .. " " .. q(fout))
  if not ok then return nil, out end
  f = assert(io.open(fout, "rb"))
  local s = f:read("a")
  f:close()
  local n, res = #s // 4 // #rows, {}
  for i = 1, #rows do
    local row = {}
    for k = 1, n do row[k] = string.unpack("<f", s, 4 * ((i - 1) * n + k - 1) + 1) end
    res[i] = row
  end
  return res, out
end

-- The largest absolute difference between two lists of rows (math.huge when shapes differ).
function M.maxdiff(a, b)
  if #a ~= #b then return math.huge end
  local worst = 0
  for i = 1, #a do
    if #a[i] ~= #b[i] then return math.huge end
    for k = 1, #a[i] do
      local d = math.abs(a[i][k] - b[i][k])
      if d ~= d then return math.huge end
      worst = math.max(worst, d)
    end
  end
  return worst
end

return M

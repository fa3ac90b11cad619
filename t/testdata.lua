-- Small synthetic data sets in the IDX format, made by the tests themselves.
local M = {}

local function write(path, bytes)
  local f = assert(io.open(path, "wb"))
  f:write(bytes)
  f:close()
end

-- Writes n images of rows x cols pixels and their labels.  Each class c has its own bright band
-- of rows, plus noise, so a small net can learn it.
function M.idx(dir, n, classes, rows, cols, seed)
  rows, cols, classes = rows or 8, cols or 8, classes or 4
  local rng = seed or 12345
  local function rand()
    rng = (rng * 1103515245 + 12345) % 2147483648
    return rng / 2147483648
  end
  local px, lb = {}, {}
  for i = 1, n do
    local c = (i - 1) % classes
    lb[i] = string.char(c)
    for r = 0, rows - 1 do
      for k = 0, cols - 1 do
        local v = rand() * 80
        if r % classes == c then v = v + 150 end
        px[#px + 1] = string.char(math.floor(v))
      end
    end
  end
  os.execute("mkdir -p '" .. dir .. "'")
  local images, labels = dir .. "/images-idx3-ubyte", dir .. "/labels-idx1-ubyte"
  write(images, string.pack(">I4I4I4I4", 0x803, n, rows, cols) .. table.concat(px))
  write(labels, string.pack(">I4I4", 0x801, n) .. table.concat(lb))
  return images, labels
end

-- The bytes of a file, or nil when it cannot be read.
function M.read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

function M.write(path, bytes)
  local f = assert(io.open(path, "wb"))
  f:write(bytes)
  f:close()
end

-- The name of a job's checkpoint at `step` in directory d.
function M.ckpt(d, step) return string.format("%s/step%09d.ckpt", d, step) end

-- A fresh scratch directory under the build tree's t/ folder.
function M.tmpdir(name)
  local dir = "t/" .. name .. ".tmp"
  os.execute("rm -rf '" .. dir .. "' && mkdir -p '" .. dir .. "'")
  return dir
end

return M

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

-- { [entry name] = { values } } of a checkpoint's f32 entries (format in docs/05-checkpoints.md),
-- or nil when the file cannot be read.
function M.read_ckpt(path)
  local s = M.read(path)
  if not s then return nil end
  local _, _, count, _, pos = string.unpack("<c8I4I4I8", s)
  local out = {}
  for _ = 1, count do
    local name, dtype, ndim
    name, dtype, ndim, pos = string.unpack("<s2BB", s, pos)
    local n = 1
    for _ = 1, ndim do
      local d
      d, pos = string.unpack("<I4", s, pos)
      n = n * d
    end
    local bytes
    bytes, _, pos = string.unpack("<I8I4", s, pos)
    if dtype == 0 then
      local v = {}
      for i = 1, n do v[i] = string.unpack("<f", s, pos + 4 * (i - 1)) end
      out[name] = v
    end
    pos = pos + bytes
  end
  return out
end

-- The runtime tests' net on idx()'s data: images -> fc1 (`hidden` units, 40 by default) -> tanh
-- -> fc2 (10) -> softmax loss.
function M.mlp(images, labels, hidden)
  return { layer = {
    { name = "data", type = "kIDXData", batchsize = 24, shuffle = true, images = images, labels = labels },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = hidden or 40 },
    { name = "act", type = "kTanh", srclayer = "fc1" },
    { name = "fc2", type = "kInnerProduct", srclayer = "act", num_output = 10 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc2", "label" } },
  } }
end

-- The rejoin tests' net (t/8640-t/8645): mlp() on idx()'s files in `data` with a kSlow layer (the
-- plugin at $SLOW_SO, loaded here) of `sleep_ms` 4 before fc2, so a job lasts long enough to be
-- killed and rejoined in.
function M.slow_mlp(singa, data)
  singa.load_plugin(os.getenv("SLOW_SO"))
  local net = M.mlp(data .. "/images-idx3-ubyte", data .. "/labels-idx1-ubyte")
  for _, l in ipairs(net.layer) do if l.name == "fc2" then l.srclayer = "slow" end end
  table.insert(net.layer, { name = "slow", type = "kSlow", srclayer = "act", sleep_ms = 4, group = -1 })
  return net
end

-- Writes a job result's params (r.params) to file f as "name value" lines, names in order (the
-- format t/paramdiff.lua compares).
function M.write_params(f, params)
  local names = {}
  for name in pairs(params) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local function walk(v)
      if type(v) == "table" then for _, x in ipairs(v) do walk(x) end
      else f:write(string.format("%s %.9g\n", name, v)) end
    end
    walk(params[name]:totable())
  end
end

-- The multi-process tests' jobs (t/*-job.lua): trains `job` (seed 7, kSGD with momentum 0.9 and
-- lr 0.05, mlp() on the data in OUT's folder, procs.sh's gen_data, unless it says otherwise);
-- then rank 0 writes the params to OUT (every rank to OUT.<rank> when `each`), and every rank
-- prints "rank R of N: S steps".
function M.train_mlp(singa, job, out, each)
  local dir = out:match("^(.*)/")
  job.seed = job.seed or 7
  job.updater = job.updater or { type = "kSGD", momentum = 0.9, learning_rate = { type = "kFixed", base_lr = 0.05 } }
  job.neuralnet = job.neuralnet or M.mlp(dir .. "/data/images-idx3-ubyte", dir .. "/data/labels-idx1-ubyte")
  local r = singa.train(job)
  local rank, size = singa.rank()
  if rank == 0 or each then
    local f = assert(io.open(each and out .. "." .. rank or out, "w"))
    M.write_params(f, r.params)
    f:close()
  end
  print(string.format("rank %d of %d: %d steps", rank, size, r.steps))
  return r
end

-- The name of a job's checkpoint at `step` in directory d.
function M.ckpt(d, step) return string.format("%s/step%09d.ckpt", d, step) end

-- A fresh scratch directory under the build tree's t/ folder.
function M.tmpdir(name)
  local dir = "t/" .. name .. ".tmp"
  os.execute("rm -rf '" .. dir .. "' && mkdir -p '" .. dir .. "'")
  return dir
end

-- x rounded to a float32, as the engine holds it.
function M.f32(x) return (string.unpack("<f", string.pack("<f", x))) end

-- Rows of numbers from a CSV file (what kCSVOutput writes).
function M.csv_rows(path)
  local rows = {}
  for line in io.lines(path) do
    local r = {}
    for v in line:gmatch("[^,]+") do r[#r + 1] = tonumber(v) end
    rows[#rows + 1] = r
  end
  return rows
end

return M

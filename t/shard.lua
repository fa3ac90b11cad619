-- SINGA's record files, written by the tests (a test helper, not library code): protobuf
-- records as SINGA's create_shard.cc (v0.1) and create_data.cc (v0.3) wrote them, in DataShard /
-- KVFile containers of [size_t keylen][key][size_t vallen][value] tuples (8 bytes little-endian).
local M = {}

function M.varint(n)
  local out = {}
  repeat
    local b = n & 0x7f
    n = n >> 7 -- logical: a negative int32 becomes 10 bytes, as protobuf writes it
    out[#out + 1] = string.char(b | (n ~= 0 and 0x80 or 0))
  until n == 0
  return table.concat(out)
end
local varint = M.varint

local function bytes_field(num, s) return varint(num << 3 | 2) .. varint(#s) .. s end
M.bytes_field = bytes_field

-- A RecordProto / SingleLabelImageRecord: o.shape, o.label, o.pixel (a string), o.data (floats);
-- o.unpacked writes data one fixed32 field per value, o.packed_shape the shape as a packed run.
function M.record(o)
  local out = {}
  if o.packed_shape then
    local run = {}
    for _, d in ipairs(o.shape) do run[#run + 1] = varint(d) end
    out[#out + 1] = bytes_field(1, table.concat(run))
  else
    for _, d in ipairs(o.shape or {}) do out[#out + 1] = varint(1 << 3 | 0) .. varint(d) end
  end
  if o.label then out[#out + 1] = varint(2 << 3 | 0) .. varint(o.label) end
  if o.pixel then out[#out + 1] = bytes_field(3, o.pixel) end
  if o.data then
    local f = {}
    for i, v in ipairs(o.data) do
      f[i] = o.unpacked and (varint(4 << 3 | 5) .. string.pack("<f", v)) or string.pack("<f", v)
    end
    out[#out + 1] = o.unpacked and table.concat(f) or bytes_field(4, table.concat(f))
  end
  return table.concat(out)
end

-- v0.1's Record wrapper: { type = kSingleLabelImage (0, the default: not written); image = 5 }.
function M.v01(image) return bytes_field(5, image) end

-- The container's bytes for a list of { key, value }.
function M.tuples(list)
  local out = {}
  for i, kv in ipairs(list) do out[i] = string.pack("<I8", #kv[1]) .. kv[1] .. string.pack("<I8", #kv[2]) .. kv[2] end
  return table.concat(out)
end

local function write(path, bytes)
  local f = assert(io.open(path, "wb"))
  f:write(bytes)
  f:close()
end

-- Writes list as a v0.1 DataShard (folder/shard.dat; returns the folder) or a v0.3 KVFile.
function M.write(version, path, list)
  if version == "v01" then
    os.execute("mkdir -p '" .. path .. "'")
    write(path .. "/shard.dat", M.tuples(list))
  else
    write(path, M.tuples(list))
  end
  return path
end

-- An MNIST-format IDX file's bytes (gunzipped when it ends in .gz).
function M.read_idx(path)
  local f = path:match("%.gz$") and assert(io.popen("gzip -dc '" .. path .. "'")) or assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- A shard of an images/labels IDX pair, one record per image as create_shard.cc wrote them
-- (key "%08d", shape [rows, cols], label, pixel bytes); n records at most.
function M.from_idx(version, images, labels, out, n)
  local s, l = M.read_idx(images), M.read_idx(labels)
  local _, count, rows, cols = string.unpack(">I4I4I4I4", s)
  n = math.min(n or count, count)
  local list, size = {}, rows * cols
  for i = 0, n - 1 do
    local rec = M.record{ shape = { rows, cols }, label = l:byte(9 + i), pixel = s:sub(17 + i * size, 16 + (i + 1) * size) }
    list[i + 1] = { string.format("%08d", i), version == "v01" and M.v01(rec) or rec }
  end
  return M.write(version, out, list), n
end

return M

-- Exports the Fashion-MNIST MLP of demos/fmnist_mlp.lua to ONNX and runs it in onnxruntime-node
-- (demos/onnx_predict.js) on the 10,000 test images, comparing its outputs with singa.predict's.
-- Uses the newest checkpoint in ckpt/fmnist-mlp/, training the MLP first (TRAIN_STEPS steps) if
-- there is none.  Run: ./singa-tui -e demos/export_onnx.lua [TRAIN_STEPS [MODEL]]
-- (the same export: ./singa-tui --export-onnx MODEL -e demos/fmnist_mlp.lua)
local singa = require "singa"
local fm = os.getenv("FMNIST_DIR") or "/usr/share/datasets/fashion-mnist/"
local steps = arg and arg[1] or "3000"
local model = arg and arg[2] or "fmnist-mlp.onnx"
local demos = (arg and arg[0] or "demos/export_onnx.lua"):match("^(.*)/") or "."

-- The MLP's job, as demos/fmnist_mlp.lua gives it to singa.train (which is not run here).
local job
do
  local train, stop = singa.train, {}
  singa.train = function(j) job = j; error(stop) end
  local saved = arg
  arg = { [0] = demos .. "/fmnist_mlp.lua", steps }
  local ok, err = pcall(dofile, demos .. "/fmnist_mlp.lua")
  arg, singa.train = saved, train
  if not job then error(ok and "fmnist_mlp.lua did not call singa.train" or err, 0) end
end

local info
if not pcall(function() info = singa.export_onnx(job, model) end) then
  print(string.format("no checkpoint in %s yet: training the MLP for %s steps first", job.checkpoint_path, steps))
  singa.train(job)
  info = singa.export_onnx(job, model)
end
print(string.format("wrote %s: %d nodes, %d bytes, input '%s' (raw pixels), output '%s', params of %s",
                    info.path, info.nodes, info.bytes, info.input, info.output, info.checkpoint))

local probs = model .. ".probs"
local cmd = string.format("node '%s/onnx_predict.js' '%s' '%s' '%s' --out '%s'", demos, model,
                          fm .. "t10k-images-idx3-ubyte.gz", fm .. "t10k-labels-idx1-ubyte.gz", probs)
if not os.execute(cmd) then
  error("onnx_predict.js failed: is onnxruntime-node installed (scripts/install-deps.sh)?", 0)
end

-- The same images through singa.predict.
local want = singa.predict(job, singa.read_idx(fm .. "t10k-images-idx3-ubyte.gz")):totable()
local f = assert(io.open(probs, "rb"))
local bytes = f:read("a")
f:close()
os.remove(probs)
local function argmax(row)
  local best = 1
  for k = 2, #row do if row[k] > row[best] then best = k end end
  return best
end
local worst, same, at = 0, 0, 1
for _, row in ipairs(want) do
  local got = {}
  for k, v in ipairs(row) do
    got[k], at = string.unpack("<f", bytes, at)
    worst = math.max(worst, math.abs(got[k] - v))
  end
  if argmax(got) == argmax(row) then same = same + 1 end
end
print(string.format("onnxruntime vs singa.predict: same class for %d of %d images, largest probability difference %.2g",
                    same, #want, worst))

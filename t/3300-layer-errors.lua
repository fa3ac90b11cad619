-- Bad configurations of the layers of t/2100-layers.lua: each is refused with a message naming the
-- layer, the field or the value.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"

local dir = td.tmpdir("3300-layer-errors")
local img, lab = td.idx(dir, 64, 4)

-- data -> image (8 x 1 x 8 x 8), label (8); fc1 (8 x 4) -> loss.  `extra` layers are added, and
-- `src` (if given) becomes the loss's score source.
local function job(extra, src)
  local layers = {
    { name = "data", type = "kIDXData", batchsize = 8, images = img, labels = lab },
    { name = "image", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "fc1", type = "kInnerProduct", srclayer = "image", num_output = 4 },
  }
  for _, l in ipairs(extra or {}) do layers[#layers + 1] = l end
  layers[#layers + 1] = { name = "loss", type = "kSoftmaxLoss", srclayer = { src or "fc1", "label" } }
  return {
    name = "layer-errors", seed = 1, train_steps = 2,
    updater = { type = "kSGD", learning_rate = { type = "kFixed", base_lr = 0.1 } },
    neuralnet = { layer = layers },
  }
end

local function refuses(want, name, extra, src) return tap.raises(want, name, singa.train, job(extra, src)) end

local function accepts(name, extra, src)
  local ok, msg = pcall(singa.train, job(extra, src))
  return tap.ok(ok, name, not ok and msg or nil)
end

local function act(fields)
  local l = { name = "act", type = "kActivation", srclayer = "fc1" }
  for k, v in pairs(fields) do l[k] = v end
  return { l }
end

-- kActivation
accepts("kActivation RELU in a net", act{ activation = "RELU" }, "act")
refuses({ "layer 'act'", "unknown activation 'RELUU'", "did you mean 'RELU'" }, "kActivation: misspelt activation",
        act{ activation = "RELUU" }, "act")
refuses({ "layer 'act'", "'activation'", "required" }, "kActivation without an activation", act{}, "act")
refuses({ "layer 'act'", "negative_slope", "\"TANH\"" }, "kActivation: negative_slope with TANH",
        act{ activation = "TANH", negative_slope = 0.1 }, "act")
refuses({ "layer 'act'", "'activation'", "string" }, "kActivation: activation of the wrong type",
        act{ activation = 1 }, "act")
refuses({ "layer 'act'", "unknown field 'type_'" }, "kActivation: unknown field", act{ activation = "RELU", type_ = "RELU" }, "act")

-- kLRN
local function lrn(fields, src)
  local l = { name = "norm", type = "kLRN", srclayer = src or "image" }
  for k, v in pairs(fields) do l[k] = v end
  return { l, { name = "fc2", type = "kInnerProduct", srclayer = "norm", num_output = 4 } }
end
accepts("kLRN on images", lrn{}, "fc2")
refuses({ "layer 'norm'", "local_size", "odd", "4" }, "kLRN: even local_size", lrn{ local_size = 4 }, "fc2")
refuses({ "layer 'norm'", "local_size" }, "kLRN: local_size 0", lrn{ local_size = 0 }, "fc2")
refuses({ "layer 'norm'", "knorm", "positive" }, "kLRN: knorm 0", lrn{ knorm = 0 }, "fc2")
refuses({ "layer 'norm'", "alpha" }, "kLRN: negative alpha", lrn{ alpha = -1 }, "fc2")
refuses({ "layer 'norm'", "beta" }, "kLRN: negative beta", lrn{ beta = -0.5 }, "fc2")
refuses({ "layer 'norm'", "N x C x H x W", "'fc1'", "8x4" }, "kLRN on a matrix", lrn({}, "fc1"), "fc2")

-- kConcate
local function concate(fields, a, b)
  local l = { name = "cat", type = "kConcate", srclayer = { "fc1", "fc2" } }
  for k, v in pairs(fields) do l[k] = v end
  return { { name = "fc2", type = "kInnerProduct", srclayer = a or "image", num_output = b or 4 }, l,
           { name = "fc3", type = "kInnerProduct", srclayer = "cat", num_output = 4 } }
end
accepts("kConcate on dim 1 of two 4-wide layers", concate{ concate_dim = 1 }, "fc3")
refuses({ "layer 'cat'", "'fc2'", "8x5", "'fc1'", "8x4", "concate_dim" }, "kConcate dim 0 of 4- and 5-wide layers",
        concate({ concate_dim = 0 }, "image", 5), "fc3")
refuses({ "layer 'cat'", "'image'", "8x1x8x8", "'fc1'", "8x4" }, "kConcate of a matrix and an image",
        { { name = "cat", type = "kConcate", srclayer = { "fc1", "image" }, concate_dim = 1 } }, "fc1")
refuses({ "layer 'cat'", "concate_dim", "0", "1", "2" }, "kConcate: concate_dim 2", concate{ concate_dim = 2 }, "fc3")
refuses({ "layer 'cat'", "num_concates", "3", "2" }, "kConcate: num_concates differs from the sources",
        concate{ concate_dim = 1, num_concates = 3 }, "fc3")
refuses({ "layer 'cat'", "concate_dim", "single dimension" }, "kConcate dim 1 of labels",
        { { name = "cat", type = "kConcate", srclayer = { "label", "label" }, concate_dim = 1 } })

-- kSlice
local function slice(fields, ndst, src)
  local l = { name = "slice", type = "kSlice", srclayer = src or "fc1" }
  for k, v in pairs(fields) do l[k] = v end
  local layers, names = { l }, {}
  for i = 1, ndst or 2 do
    layers[#layers + 1] = { name = "s" .. i, type = "kTanh", srclayer = "slice" }
    names[i] = "s" .. i
  end
  layers[#layers + 1] = { name = "cat", type = "kConcate", srclayer = names, concate_dim = fields.slice_dim or 0 }
  return layers
end
accepts("kSlice dim 1 into 2 and back", slice{ slice_dim = 1, num_slices = 2 }, "cat")
refuses({ "layer 'slice'", "num_slices", "positive" }, "kSlice without num_slices", slice{ slice_dim = 1 }, "cat")
refuses({ "layer 'slice'", "does not divide", "3" }, "kSlice: 4 columns into 3", slice({ slice_dim = 1, num_slices = 3 }, 3), "cat")
refuses({ "layer 'slice'", "3 destinations", "'num_slices' is 2" }, "kSlice: more destinations than slices",
        slice({ slice_dim = 1, num_slices = 2 }, 3), "cat")
refuses({ "layer 'slice'", "slice_dim", "-1" }, "kSlice: slice_dim -1", slice{ slice_dim = -1, num_slices = 2 }, "cat")
refuses({ "layer 'slice'", "slice_dim", "single dimension" }, "kSlice dim 1 of labels",
        { { name = "slice", type = "kSlice", srclayer = "label", slice_dim = 1, num_slices = 1 } })
refuses({ "layer 'acc'", "labels from 'slice[0]'", "shape 4 " }, "a slice's part is named in its destination's messages",
        { { name = "slice", type = "kSlice", srclayer = "label", num_slices = 2 },
          { name = "acc", type = "kAccuracy", srclayer = { "fc1", "slice" } } })

-- kSplit
local function split(n, ndst)
  local layers = { { name = "split", type = "kSplit", srclayer = "fc1", num_splits = n } }
  local names = {}
  for i = 1, ndst do
    layers[#layers + 1] = { name = "s" .. i, type = "kTanh", srclayer = "split" }
    names[i] = "s" .. i
  end
  layers[#layers + 1] = { name = "cat", type = "kConcate", srclayer = names, concate_dim = 1 }
  layers[#layers + 1] = { name = "fc9", type = "kInnerProduct", srclayer = "cat", num_output = 4 }
  return layers
end
accepts("kSplit into 3", split(3, 3), "fc9")
refuses({ "layer 'split'", "3 destinations", "'num_splits' is 2" }, "kSplit: more destinations than splits", split(2, 3), "fc9")
refuses({ "layer 'split'", "num_splits" }, "kSplit: num_splits 0", split(0, 1), "fc9")

-- kAccuracy and kArgSort
refuses({ "layer 'acc'", "topk", "1..4", "5" }, "kAccuracy: topk above the classes",
        { { name = "acc", type = "kAccuracy", srclayer = { "fc1", "label" }, topk = 5 } })
refuses({ "layer 'acc'", "topk", "0" }, "kAccuracy: topk 0", { { name = "acc", type = "kAccuracy", srclayer = { "fc1", "label" }, topk = 0 } })
refuses({ "layer 'acc'", "labels from 'fc1'", "one label per row" }, "kAccuracy: labels of the wrong shape",
        { { name = "acc", type = "kAccuracy", srclayer = { "fc1", "fc1" } } })
refuses({ "layer 'acc'", "needs 2" }, "kAccuracy with one source", { { name = "acc", type = "kAccuracy", srclayer = "fc1" } })
refuses({ "layer 'sort'", "topk", "1..4", "9" }, "kArgSort: topk above the scores",
        { { name = "sort", type = "kArgSort", srclayer = "fc1", topk = 9 } })

-- kOneHot and kEmbedding
local function onehot(fields)
  local l = { name = "hot", type = "kOneHot", srclayer = "label" }
  for k, v in pairs(fields) do l[k] = v end
  return { l, { name = "fc2", type = "kInnerProduct", srclayer = "hot", num_output = 4 } }
end
accepts("kOneHot of the labels", onehot{ vocab_size = 4 }, "fc2")
refuses({ "layer 'hot'", "vocab_size" }, "kOneHot without vocab_size", onehot{}, "fc2")
refuses({ "layer 'hot'", "index 2", "0..1" }, "kOneHot: a label outside the vocabulary", onehot{ vocab_size = 2 }, "fc2")
refuses({ "layer 'hot'", "one integer index per row", "'image'" }, "kOneHot of images",
        { { name = "hot", type = "kOneHot", srclayer = "image", vocab_size = 4 } })

local function emb(fields, src)
  local l = { name = "emb", type = "kEmbedding", srclayer = src or "label" }
  for k, v in pairs(fields) do l[k] = v end
  return { l }
end
accepts("kEmbedding of the labels", emb{ vocab_size = 4, feature_dim = 4 }, "emb")
refuses({ "layer 'emb'", "(kEmbedding)", "index 3", "0..2", "-1" }, "kEmbedding: an index outside the vocabulary",
        emb{ vocab_size = 3, feature_dim = 4 }, "emb")
refuses({ "layer 'emb'", "vocab_size" }, "kEmbedding without vocab_size", emb{ feature_dim = 4 }, "emb")
refuses({ "layer 'emb'", "feature_dim", "0" }, "kEmbedding: feature_dim 0", emb{ vocab_size = 4, feature_dim = 0 }, "emb")
refuses({ "layer 'emb'", "'vocab_size'", "integer" }, "kEmbedding: vocab_size of the wrong type",
        emb{ vocab_size = "ten", feature_dim = 4 }, "emb")
refuses({ "layer 'emb'", "unknown field 'feature_dims'", "did you mean 'feature_dim'" }, "kEmbedding: misspelt field",
        emb{ vocab_size = 4, feature_dims = 4 }, "emb")
refuses({ "layer 'emb'", "one integer index per row", "8x4" }, "kEmbedding of scores", emb({ vocab_size = 4, feature_dim = 4 }, "fc1"), "emb")

-- The same refusals straight from singa.forward.
tap.raises("index 1.5 in row 1", "singa.forward: a fractional index", singa.forward,
           { name = "e", type = "kEmbedding", vocab_size = 4, feature_dim = 2 }, { { shape = { 2 }, data = { 0, 1.5 } } })
tap.raises("index -2 in row 0", "singa.forward: index -2", singa.forward,
           { name = "e", type = "kEmbedding", vocab_size = 4, feature_dim = 2 }, { { shape = { 2 }, data = { -2, 1 } } })
tap.raises("label -1 in row 0", "kAccuracy: label -1 is refused", singa.forward,
           { name = "a", type = "kAccuracy" }, { { shape = { 1, 3 } }, { shape = { 1 }, data = { -1 } } })
tap.raises("'data' must list 4 numbers", "singa.forward: too few values", singa.forward,
           { name = "s", type = "kSoftmax" }, { { shape = { 2, 2 }, data = { 1, 2, 3 } } })
tap.raises("0 to 8 destinations", "singa.forward: too many destinations", singa.forward,
           { name = "s", type = "kSplit" }, { { shape = { 2, 2 } } }, 9)

tap.done()

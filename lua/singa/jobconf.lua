-- SINGA's job.conf (JobProto in protobuf text format, SINGA v0.1.0, v0.2.0 and v0.3.0-rc3) as a
-- singa-tui job.  Three steps: singa.core.read_pbtext parses the text into a schema-free tree;
-- `decode` checks it against SINGA's schema (the tables below, one place for all three
-- versions: a field or enum value marked with the versions that have it) and settles the
-- version; `map_*` build the job as ordered tables, so that `to_lua` writes it back in the
-- conf's order and `plain` gives the table singa.train takes.
local core = require "singa.core"

local M = {}

local VERSIONS = { "v0.1", "v0.2", "v0.3" }

--------------------------------------------------------------------------------------------
-- SINGA's schema.  A field: { name, type, rep = repeated, v = versions ("123" when absent),
-- def = SINGA's default }.  A type is "string", "int", "float", "bool", an enum (E) or a
-- message (S).  An enum value's versions follow it after a colon.
--------------------------------------------------------------------------------------------
local E = {
  Phase = "kUnknown kTrain kVal kTest kPositive kNegative kForward kBackward kLoss kDeploy:23 kAggGrad:23",
  AlgType = "kBP kCD kBPTT:23 kUserAlg",
  UpdaterType = "kSGD kAdaGrad kRMSProp kNesterov kAdaDelta:3 kAdam:3 kAdamMax:3 kUserUpdater",
  ParamType = "kParam kUser",
  ChangeMethod = "kFixed kInverseT kInverse kExponential kLinear kStep kFixedStep kUserChange",
  InitMethod = "kConstant kGaussian kUniform kGaussianSqrtFanIn kUniformSqrtFanIn kUniformSqrtFanInOut kUserInit",
  UnrollConnType = "kUnrollOneToOne kUnrollOneToAll kUnrollFirstToLast kUnrollCustomized",
  ActivationType = "RELU SIGMOID TANH STANH",
  PoolMethod = "MAX AVG",
  LayerType = "kCSVInput:23 kImagePreprocess:23 kPrefetch:12 kRecordInput:23 kLMDBData kLabel kMnist "
    .. "kRGBImage kShardData kCharRNN:23 kRNNLabel:23 kOneHot:23 kConvolution kCConvolution kDropout "
    .. "kDummy:23 kInnerProduct kLRN kPooling kCPooling kRBMHid kRBMVis kReLU kSTanh kSigmoid "
    .. "kSoftmax:23 kGRU:23 kEmbedding:23 kActivation:3 kBM:3 kCudnnConv:23 kCudnnPool:23 "
    .. "kCudnnLRN:23 kCudnnSoftmax:23 kCudnnActivation:23 kCudnnBM:3 kEuclideanLoss kSoftmaxLoss "
    .. "kCudnnSoftmaxLoss:23 kAccuracy:23 kArgSort:23 kCSVOutput:23 kRecordOutput:23 "
    .. "kCharRNNOutput:23 kBridgeDst kBridgeSrc kConcate kSlice kSplit kRNNDummy:23 kUserLayer",
}

local S = {
  JobProto = {
    { "name", "string" }, { "neuralnet", "NetProto" }, { "train_one_batch", "AlgProto" },
    { "updater", "UpdaterProto" }, { "cluster", "ClusterProto" }, { "train_steps", "int" },
    { "disp_freq", "int" }, { "gpu", "int", rep = true, v = "23" }, { "test_freq", "int" },
    { "test_steps", "int" }, { "validate_freq", "int" }, { "validate_steps", "int" },
    { "checkpoint_freq", "int" }, { "checkpoint_path", "string", rep = true },
    { "warmup_steps", "int", def = 0 }, { "debug", "bool", def = false },
    { "reset_param_version", "bool", def = true }, { "num_openblas_threads", "int" },
    { "checkpoint_after", "int" }, { "disp_after", "int" }, { "test_after", "int" },
    { "validate_after", "int" }, { "resume", "bool" }, { "step", "int", def = 0 },
    { "id", "int", def = -1 },
  },
  AlgProto = { { "alg", "AlgType" }, { "user_alg", "string" }, { "cd_conf", "CDProto" } },
  CDProto = { { "cd_k", "int" } },
  NetProto = {
    { "layer", "LayerProto", rep = true }, { "partition_dim", "int" },
    { "layer_group", "LayerGroupProto", rep = true, v = "23" }, { "unroll_len", "int", v = "23" },
  },
  LayerGroupProto = { { "layer", "string", rep = true } },
  UpdaterProto = {
    { "type", "UpdaterType" }, { "user_type", "string" }, { "rmsprop_conf", "RMSPropProto" },
    { "adadelta_conf", "AdaDeltaProto", v = "3" }, { "adam_conf", "AdamProto", v = "3" },
    { "adammax_conf", "AdamMaxProto", v = "3" }, { "learning_rate", "LRGenProto" },
    { "momentum", "float" }, { "weight_decay", "float" }, { "delta", "float" },
    { "clip_low", "float", v = "23" }, { "clip_high", "float", v = "23" },
  },
  ClusterProto = {
    { "nworker_groups", "int" }, { "nserver_groups", "int" }, { "nworkers_per_group", "int" },
    { "nservers_per_group", "int" }, { "nworkers_per_procs", "int" }, { "nservers_per_procs", "int" },
    { "workspace", "string" }, { "server_worker_separate", "bool" }, { "sync_freq", "int" },
    { "start_port", "int", def = 6723 }, { "share_memory", "bool" }, { "poll_time", "int", def = 100 },
  },
  LayerProto = {
    { "name", "string" }, { "srclayers", "string", rep = true }, { "param", "ParamProto", rep = true },
    { "exclude", "Phase", rep = true }, { "include", "Phase", rep = true, v = "23" },
    { "type", "LayerType" }, { "user_type", "string" },
    { "share_src_blobs", "bool", v = "23", def = false }, { "unroll_len", "int", v = "23" },
    { "unroll_index", "int", v = "23", def = 0 },
    { "unroll_conn_type", "UnrollConnType", rep = true, v = "23" },
    { "shift", "int", rep = true, v = "23" }, { "partition_dim", "int" },
    { "partition_id", "int", def = 0 }, { "num_partitions", "int", def = 1 },
    { "store_conf", "StoreProto", v = "23" }, { "prefetch_conf", "PrefetchProto", v = "12" },
    { "lmdbdata_conf", "DataProto" }, { "mnist_conf", "MnistProto" },
    { "rgbimage_conf", "RGBImageProto" }, { "sharddata_conf", "DataProto" },
    { "char_rnn_conf", "CharRNNProto", v = "23" }, { "onehot_conf", "OnehotProto", v = "23" },
    { "activation_conf", "ActivationProto", v = "23" }, { "convolution_conf", "ConvolutionProto" },
    { "dropout_conf", "DropoutProto" }, { "dummy_conf", "DummyProto", v = "23" },
    { "innerproduct_conf", "InnerProductProto" }, { "lrn_conf", "LRNProto" },
    { "pooling_conf", "PoolingProto" }, { "rbm_conf", "RBMProto" }, { "relu_conf", "ReLUProto" },
    { "softmax_conf", "SoftmaxProto", v = "23" }, { "gru_conf", "GRUProto", v = "23" },
    { "embedding_conf", "EmbeddingProto", v = "23" }, { "bm_conf", "BMProto", v = "3" },
    { "softmaxloss_conf", "SoftmaxLossProto" }, { "euclideanloss_conf", "EuclideanLossProto", v = "1" },
    { "argsort_conf", "ArgSortProto", v = "23" }, { "concate_conf", "ConcateProto" },
    { "slice_conf", "SliceProto" }, { "split_conf", "SplitProto" },
    { "rnn_dummy_conf", "RNNDummyProto", v = "23" },
  },
  ParamProto = {
    { "name", "string" }, { "type", "ParamType" }, { "user_type", "string" }, { "init", "ParamGenProto" },
    { "lr_scale", "float" }, { "wd_scale", "float" }, { "share_from", "string" }, { "id", "int" },
    { "owner", "int", def = -1 }, { "partition_dim", "int" }, { "shape", "int", rep = true },
  },
  ParamGenProto = {
    { "type", "InitMethod" }, { "user_type", "string" }, { "value", "float" }, { "mean", "float" },
    { "std", "float" }, { "low", "float" }, { "high", "float" },
  },
  LRGenProto = {
    { "type", "ChangeMethod" }, { "user_type", "string" }, { "base_lr", "float" },
    { "fixedstep_conf", "FixedStepProto" }, { "step_conf", "StepProto" }, { "linear_conf", "LinearProto" },
    { "exponential_conf", "ExponentialProto" }, { "inverse_conf", "InverseProto" },
    { "inverset_conf", "InverseTProto" },
  },
  FixedStepProto = { { "step", "int", rep = true }, { "step_lr", "float", rep = true } },
  StepProto = { { "gamma", "float" }, { "change_freq", "int" } },
  LinearProto = { { "change_freq", "int" }, { "final_lr", "float" } },
  ExponentialProto = { { "change_freq", "int" } },
  InverseTProto = { { "final_lr", "float" } },
  InverseProto = { { "gamma", "float" }, { "pow", "float" } },
  RMSPropProto = { { "rho", "float" } },
  AdaDeltaProto = { { "rho", "float" } },
  AdamProto = { { "beta1", "float" }, { "beta2", "float" } },
  AdamMaxProto = { { "beta1", "float" }, { "beta2", "float" } },
  PrefetchProto = { { "sublayers", "LayerProto", rep = true } },
  ActivationProto = { { "type", "ActivationType" } },
  OnehotProto = { { "vocab_size", "int" } },
  RGBImageProto = { { "scale", "float" }, { "cropsize", "int" }, { "mirror", "bool" }, { "meanfile", "string" } },
  SplitProto = { { "num_splits", "int" } },
  StoreProto = {
    { "backend", "string" }, { "path", "string" }, { "separator", "string" }, { "mean_file", "string" },
    { "std_file", "string" }, { "mean_value", "float" }, { "std_value", "float" },
    { "batchsize", "int", rep = true }, { "shape", "int", rep = true }, { "encoded", "bool" },
    { "random_skip", "int" }, { "has_label", "bool" }, { "prefetching", "bool", v = "3" },
  },
  CharRNNProto = { { "path", "string" }, { "vocab_path", "string" }, { "unroll_len", "int" }, { "batchsize", "int" } },
  EmbeddingProto = { { "vocab_size", "int" }, { "feature_dim", "int" } },
  BMProto = {},
  EuclideanLossProto = {},
  SoftmaxLossProto = { { "topk", "int" }, { "scale", "float" } },
  ArgSortProto = { { "topk", "int" } },
  ConcateProto = { { "concate_dim", "int" }, { "num_concates", "int", v = "23" } },
  ConvolutionProto = {
    { "num_filters", "int" }, { "kernel", "int" }, { "pad", "int" }, { "stride", "int" },
    { "bias_term", "bool", v = "1" }, { "kernel_x", "int", v = "23" }, { "kernel_y", "int", v = "23" },
    { "pad_x", "int", v = "23" }, { "pad_y", "int", v = "23" }, { "stride_x", "int", v = "23" },
    { "stride_y", "int", v = "23" }, { "workspace_byte_limit", "int", v = "23", def = 512 },
  },
  DataProto = { { "path", "string" }, { "batchsize", "int" }, { "random_skip", "int" } },
  MnistProto = {
    { "norm_a", "float" }, { "norm_b", "float" }, { "kernel", "int", def = 0 }, { "sigma", "float", def = 0 },
    { "alpha", "float", def = 0 }, { "beta", "float", def = 0 }, { "gamma", "float", def = 0 },
    { "resize", "int", def = 0 }, { "elastic_freq", "int", def = 0 },
  },
  DummyProto = { { "input", "bool" }, { "output", "bool" }, { "shape", "int", rep = true } },
  RNNDummyProto = {
    { "dynamic_srclayer", "string" }, { "shape", "int", rep = true }, { "integer", "bool" },
    { "low", "float" }, { "high", "float" },
  },
  DropoutProto = { { "dropout_ratio", "float" } },
  RBMProto = { { "hdim", "int" }, { "bias_term", "bool" }, { "gaussian", "bool" } },
  GRUProto = { { "dim_hidden", "int" }, { "bias_term", "bool" } },
  InnerProductProto = { { "num_output", "int" }, { "bias_term", "bool" }, { "transpose", "bool" } },
  LRNProto = { { "local_size", "int" }, { "alpha", "float" }, { "beta", "float" }, { "knorm", "float" } },
  PoolingProto = {
    { "kernel", "int" }, { "pool", "PoolMethod" }, { "pad", "int" }, { "stride", "int" },
    { "kernel_x", "int", v = "23" }, { "kernel_y", "int", v = "23" }, { "pad_x", "int", v = "23" },
    { "pad_y", "int", v = "23" }, { "stride_x", "int", v = "23" }, { "stride_y", "int", v = "23" },
  },
  ReLUProto = { { "negative_slope", "float" } },
  SliceProto = { { "slice_dim", "int" }, { "num_slices", "int", v = "23" } },
  SoftmaxProto = { { "num_softmax_per_instance", "int", def = 1 } },
}

-- Fields singa-tui does not honour: SINGA's meaning and what to do.  Each is refused unless it
-- holds SINGA's default (`def` above), where it changes nothing.
local REFUSED = {
  ["JobProto.gpu"] = "the GPUs to train on: no GPUs here; remove it",
  ["JobProto.warmup_steps"] = "steps SINGA trained in worker group 0 alone before starting the others: "
    .. "singa-tui starts every group together; remove it",
  ["JobProto.debug"] = "SINGA's debug mode (each layer's blobs printed): use singa-tui --summary or "
    .. "profile = true; remove it",
  ["JobProto.reset_param_version"] = "false kept the versions of the params loaded from checkpoint_path: "
    .. "singa-tui does not version params; remove it",
  ["JobProto.step"] = "the step SINGA's own resume wrote: use resume: true",
  ["JobProto.id"] = "the job id SINGA's job manager assigns: remove it",
  ["AlgProto.user_alg"] = "a TrainOneBatch algorithm of your own in C++: not loadable here; use kBP, kBPTT or kCD",
  ["NetProto.layer_group"] = "groups of layers SINGA did not use for training: remove it",
  ["UpdaterProto.user_type"] = "an updater of your own in C++: write it in Lua (updater type kLua, see "
    .. "docs/02-jobs-and-layers.md, \"Updaters and schedules in Lua\")",
  ["LRGenProto.user_type"] = "a schedule of your own in C++: write it in Lua (a function as learning_rate)",
  ["ClusterProto.start_port"] = "SINGA's first port: singa-tui's processes meet at cluster.coordinator "
    .. "(set by --procs); remove it",
  ["ClusterProto.poll_time"] = "how often SINGA's stub polled its sockets (ms): not needed here; remove it",
  ["LayerProto.share_src_blobs"] = "SINGA's in-place memory sharing: singa-tui chooses itself; remove it",
  ["LayerProto.unroll_index"] = "the copy index SINGA's unrolling sets itself: remove it",
  ["LayerProto.unroll_conn_type"] = "how SINGA connected unrolled copies: singa-tui connects a layer's copy to "
    .. "the previous copy of itself (its recurrent source); remove it",
  ["LayerProto.shift"] = "SINGA's shift of unrolled sources: not here; remove it",
  ["LayerProto.partition_id"] = "the part SINGA's partitioning assigns itself: remove it",
  ["LayerProto.num_partitions"] = "set by SINGA's partitioning itself: use cluster.nworkers_per_group",
  ["LayerProto.prefetch_conf"] = "kPrefetch's sublayers (read in a thread): list them as layers of the net",
  ["LayerProto.lmdbdata_conf"] = "LMDB data: not read here; write the data as a KVFile for kRecordInput",
  ["ParamProto.user_type"] = "a Param class of your own in C++: remove it",
  ["ParamProto.id"] = "the id SINGA assigns itself: remove it",
  ["ParamProto.owner"] = "the owner SINGA assigns itself: use share_from",
  ["ParamProto.partition_dim"] = "a param is cut with its layer's partition_dim here: remove it",
  ["ParamProto.shape"] = "the layer gives its params' shapes: remove it",
  ["ParamGenProto.user_type"] = "an init method of your own in C++: use one of kConstant, kGaussian, "
    .. "kUniform, kGaussianSqrtFanIn, kUniformSqrtFanIn, kUniformSqrtFanInOut",
  ["ConvolutionProto.workspace_byte_limit"] = "cuDNN's workspace: no GPUs here; remove it",
  ["SoftmaxProto.num_softmax_per_instance"] = "softmax over groups of an instance's features: not here; remove it",
}
for _, f in ipairs { "kernel", "sigma", "alpha", "beta", "gamma", "resize", "elastic_freq" } do
  REFUSED["MnistProto." .. f] = "SINGA's elastic distortion and resizing of MNIST images: not here; remove it"
end
-- Enum values refused the same way.
local REFUSED_ENUM = {
  kUserAlg = "a TrainOneBatch algorithm of your own in C++ (also SINGA's default when alg is not given): "
    .. "use kBP, kBPTT or kCD",
  kUserUpdater = "an updater of your own in C++ (also SINGA's default when type is not given): give a type, "
    .. "or write it in Lua (kLua)",
  kUserChange = "a schedule of your own in C++ (also SINGA's default when type is not given): give a type, "
    .. "or write it in Lua (a function as learning_rate)",
  kUserInit = "an init method of your own in C++ (also SINGA's default when type is not given): give a type",
  kUser = "a Param class of your own in C++: use kParam",
  kLMDBData = REFUSED["LayerProto.lmdbdata_conf"],
  kPrefetch = REFUSED["LayerProto.prefetch_conf"],
}

-- SINGA's GPU and "C" layer types run as their CPU twins.
local TWIN = {
  kCConvolution = "kConvolution", kCudnnConv = "kConvolution", kCPooling = "kPooling",
  kCudnnPool = "kPooling", kCudnnLRN = "kLRN", kCudnnSoftmax = "kSoftmax",
  kCudnnActivation = "kActivation", kCudnnBM = "kBM", kCudnnSoftmaxLoss = "kSoftmaxLoss",
}
local PHASE = { kTrain = "kTrain", kVal = "kValidation", kTest = "kTest" }

-- Defaults where SINGA's version differs from singa-tui's, written out when the conf leaves the
-- field out (per layer type after the twin mapping; each: field, value per version, and the
-- fields that make it unneeded, as kernel_x and kernel_y do for kernel).
local LAYER_DEFAULTS = {
  kPooling = {
    { "kernel", { nil, 3, 3 }, axes = true },
    { "stride", { nil, 2, 2 }, axes = true },
  },
  kConvolution = { { "kernel", { nil, 3, 3 }, axes = true } },
  kActivation = { { "activation", { nil, "RELU", "RELU" } } },
  kSlice = { { "num_slices", { nil, 1, 1 } } },
}

--------------------------------------------------------------------------------------------
-- Decoding: the parsed tree checked against the schema.  A message becomes
-- { _msg = name, _fields = { {name, value, line, col}, ... in order }, [name] = value or list }.
--------------------------------------------------------------------------------------------
local function vset(s)
  s = s or "123"
  return { s:find "1" ~= nil, s:find "2" ~= nil, s:find "3" ~= nil }
end

local enums = {}
for name, spelled in pairs(E) do
  local e = { names = {} }
  for item in spelled:gmatch "%S+" do
    local id, v = item:match "^([^:]+):?(%d*)$"
    e[id] = vset(v ~= "" and v or nil)
    e.names[#e.names + 1] = id
  end
  enums[name] = e
end
local schema = {}
for name, fields in pairs(S) do
  local m = { names = {}, byname = {} }
  for _, f in ipairs(fields) do
    local spec = { name = f[1], type = f[2], rep = f.rep, v = vset(f.v), vs = f.v or "123", def = f.def }
    m.byname[spec.name] = spec
    m.names[#m.names + 1] = spec.name
  end
  schema[name] = m
end

local function vnames(v)
  local out = {}
  for i = 1, 3 do if v[i] then out[#out + 1] = VERSIONS[i] end end
  return table.concat(out, ", ")
end

local Decoder = {}
Decoder.__index = Decoder

-- The conf's mistakes are the engine's errors: reported as file:line:column and the message.
function Decoder:fail(node, fmt, ...)
  local where = string.format("%s:%d:%d: ", self.file, node.line or 1, node.column or node.col or 1)
  core.conf_error(where .. string.format(fmt, ...))
end

-- Narrows the versions the conf can be to those that have this spelling.
function Decoder:narrow(node, what, v)
  local left = { self.cands[1] and v[1], self.cands[2] and v[2], self.cands[3] and v[3] }
  if not (left[1] or left[2] or left[3]) then
    local o = self.narrowed
    self:fail(node, "%s exists in SINGA %s only, but %s (line %d) in SINGA %s only: a conf is of one version",
              what, vnames(v), o.what, o.line, vnames(o.v))
  end
  if not (v[1] and v[2] and v[3]) then self.narrowed = { what = what, line = node.line, v = v } end
  self.cands = left
end

local function num_text(v) return tostring(math.tointeger(v) or v) end

local function scalar_desc(node)
  if node.message then return "a message" end
  if node.kind == "string" then return string.format("the string %q", node.value) end
  return string.format("'%s'", node.kind == "ident" and node.value or num_text(node.value))
end

local FLOAT_IDENTS = { inf = math.huge, infinity = math.huge, nan = 0 / 0 }

function Decoder:scalar(node, spec, where)
  local t = spec.type
  if node.message then self:fail(node, "%s: expected a value, got a message", where) end
  local k, v = node.kind, node.value
  if t == "string" then
    if k ~= "string" then self:fail(node, "%s: expected a quoted string, got %s", where, scalar_desc(node)) end
    return v
  elseif t == "int" then
    if k ~= "int" then self:fail(node, "%s: expected an integer, got %s", where, scalar_desc(node)) end
    return math.tointeger(v) or v
  elseif t == "float" then
    if k == "int" or k == "float" then return math.tointeger(v) or v end
    if k == "ident" then
      local neg, id = v:match "^(%-?)(.*)$"
      local x = FLOAT_IDENTS[id:lower()]
      if x then return neg == "-" and -x or x end
    end
    self:fail(node, "%s: expected a number, got %s", where, scalar_desc(node))
  elseif t == "bool" then
    if k == "ident" then
      if v == "true" or v == "True" or v == "t" then return true end
      if v == "false" or v == "False" or v == "f" then return false end
    elseif k == "int" and (v == 0 or v == 1) then
      return v == 1
    end
    self:fail(node, "%s: expected true or false, got %s", where, scalar_desc(node))
  end
  local e = enums[t]
  if k == "int" then
    self:fail(node, "%s: give the %s by name, not by number (%s)", where, t, num_text(v))
  end
  if k ~= "ident" then self:fail(node, "%s: expected one of SINGA's %s, got %s", where, t, scalar_desc(node)) end
  if not e[v] then
    local s = v == "kValidation" and "kVal" or core.suggest(v, e.names) -- singa-tui's name of SINGA's phase
    self:fail(node, "%s: unknown %s '%s'%s", where, t, v, s and string.format(" (did you mean '%s'?)", s) or "")
  end
  self:narrow(node, string.format("%s '%s'", t, v), e[v])
  return v
end

function Decoder:message(nodes, mname, where)
  local m = schema[mname]
  local msg = { _msg = mname, _fields = {}, _where = where }
  for _, node in ipairs(nodes) do
    local spec = m.byname[node.name]
    if not spec then
      local s = core.suggest(node.name, m.names)
      self:fail(node, "%s: unknown field '%s' (SINGA's %s has no such field in any version)%s", where, node.name,
                mname, s and string.format("; did you mean '%s'?", s) or "")
    end
    self:narrow(node, string.format("field '%s'", node.name), spec.v)
    local value
    local fwhere = where .. "." .. node.name
    if schema[spec.type] then
      if not node.message then self:fail(node, "%s: expected a message { ... }, got %s", fwhere, scalar_desc(node)) end
      value = self:message(node.message, spec.type, fwhere)
      value.line, value.column = node.line, node.column
    else
      value = self:scalar(node, spec, fwhere)
    end
    local f = { name = node.name, value = value, line = node.line, col = node.column, spec = spec }
    msg._fields[#msg._fields + 1] = f
    if spec.rep then
      msg[node.name] = msg[node.name] or {}
      table.insert(msg[node.name], value)
    else
      if msg[node.name] ~= nil then
        self:fail(node, "%s: field '%s' given twice (it is not repeated)", where, node.name)
      end
      msg[node.name] = value
    end
    local why = REFUSED[mname .. "." .. node.name]
    if why and not (spec.def ~= nil and value == spec.def) then
      self:fail(node, "%s: field '%s' is not supported (SINGA: %s)", where, node.name, why)
    end
    if type(value) == "string" and REFUSED_ENUM[value] and enums[spec.type] then
      self:fail(node, "%s: %s is not supported (SINGA: %s)", fwhere, value, REFUSED_ENUM[value])
    end
  end
  return msg
end

--------------------------------------------------------------------------------------------
-- The job as ordered tables: { _keys = {...}, _notes = { key = comment }, [key] = value }.
--------------------------------------------------------------------------------------------
local function otable() return { _keys = {}, _notes = {} } end

local function set(t, k, v, note)
  if v == nil then return end
  if t[k] == nil then t._keys[#t._keys + 1] = k end
  t[k] = v
  if note then t._notes[k] = note end
end

local function is_otable(v) return type(v) == "table" and v._keys ~= nil end

-- Copies a message's scalar fields in order (a repeated field as a list, or its one value),
-- leaving out `skip`.
local function copy_fields(d, msg, dst, skip)
  local done = {}
  for _, f in ipairs(msg._fields) do
    if not done[f.name] and not (skip and skip[f.name]) and not schema[f.spec.type] then
      done[f.name] = true
      local v = msg[f.name]
      if f.spec.rep and #v == 1 then v = v[1] end
      if dst[f.name] ~= nil then
        d:fail(f, "%s: field '%s' is given twice (once flattened from a *_conf message)", msg._where, f.name)
      end
      set(dst, f.name, v)
    end
  end
end

local function map_init(d, g)
  if not g.type then d:fail(g, "%s: no type (%s)", g._where, REFUSED_ENUM.kUserInit) end
  local t = otable()
  copy_fields(d, g, t)
  return t
end

local function map_param(d, p)
  local t = otable()
  for _, f in ipairs(p._fields) do
    local v = p[f.name]
    if f.name == "init" then
      set(t, "init", map_init(d, v))
    elseif f.name ~= "type" then -- the type can only be kParam once kUser is refused
      set(t, f.name, v)
    end
  end
  return t
end

-- SINGA's GRU lists its params as z_hx, r_hx, c_hx, z_hh, r_hh, c_hh, b_z, b_r, b_c; singa-tui's
-- kGRU as z_hx, z_hh, b_z, r_hx, ... (gate by gate).
local GRU_ORDER = { 1, 4, 7, 2, 5, 8, 3, 6, 9 }

local function map_params(d, layer, ltype, params, t)
  if ltype == "kGRU" then
    if #params ~= 9 then
      d:fail(layer, "layer '%s' (kGRU): %d params; singa-tui's kGRU has SINGA's nine (z, r, c: input weights, "
                 .. "then state weights, then the three biases), so give all nine", layer.name, #params)
    end
    local out = {}
    for i, j in ipairs(GRU_ORDER) do out[i] = params[j] end
    params = out
    t._notes.param = "SINGA's order z_hx, r_hx, c_hx, z_hh, r_hh, c_hh, b_z, b_r, b_c, regrouped by gate"
  elseif ltype == "kRBMHid" and #params >= 1 then
    -- SINGA's kRBMHid declared the weight again (share_from its kRBMVis's); here it has its bias only.
    if not params[1].share_from then
      d:fail(layer, "layer '%s' (kRBMHid): its first param must be SINGA's copy of the kRBMVis weight "
                 .. "(share_from); singa-tui's kRBMHid uses its kRBMVis's weight itself", layer.name)
    end
    table.remove(params, 1)
    t._notes.param = "SINGA's first param (the kRBMVis weight, shared) is its kRBMVis's own here"
  end
  if #params > 0 then
    local list = {}
    for i, p in ipairs(params) do list[i] = map_param(d, p) end
    set(t, "param", list)
  end
end

local function phases_excluded(d, l)
  if not l.include and not l.exclude then return nil end
  local out, seen = {}, {}
  local function check(p, field)
    if not PHASE[p] then
      d:fail(l, "layer '%s': %s %s: SINGA's internal phase %s is not a phase of a net here (use kTrain, kVal or kTest)",
             l.name, field, p, p)
    end
  end
  for _, p in ipairs(l.exclude or {}) do check(p, "exclude") seen[PHASE[p]] = true end
  if l.include then
    local inc = {}
    for _, p in ipairs(l.include) do check(p, "include") inc[PHASE[p]] = true end
    for _, p in ipairs { "kTrain", "kValidation", "kTest" } do
      if not inc[p] then seen[p] = true end
    end
  end
  for _, p in ipairs { "kTrain", "kValidation", "kTest" } do
    if seen[p] then out[#out + 1] = p end
  end
  return #out == 1 and out[1] or out
end

local function map_layer(d, l, ver)
  local t = otable()
  if not l.name then d:fail(l, "a layer without a name (SINGA requires one)") end
  local stype = l.type
  if not stype then
    d:fail(l, "layer '%s': no type (SINGA's default kUserLayer needs user_type)", l.name)
  end
  local ltype = TWIN[stype] or stype
  if stype == "kUserLayer" then
    if not l.user_type then d:fail(l, "layer '%s': kUserLayer without user_type", l.name) end
    ltype = l.user_type
  elseif l.user_type then
    d:fail(l, "layer '%s': user_type is for kUserLayer, not %s", l.name, stype)
  end
  for _, f in ipairs(l._fields) do
    local v = l[f.name]
    if f.name == "name" then
      set(t, "name", v)
    elseif f.name == "type" then
      set(t, "type", ltype, ltype ~= stype and ("SINGA: " .. stype) or nil)
    elseif f.name == "srclayers" then
      if t.srclayer == nil then set(t, "srclayer", #v == 1 and v[1] or v) end
    elseif f.name == "include" or f.name == "exclude" then
      if t.exclude == nil then
        local ex = phases_excluded(d, l)
        set(t, "exclude", ex, l.include and ("SINGA: include " .. table.concat(l.include, ", ")) or nil)
      end
    elseif f.name == "param" then
      if t.param == nil then map_params(d, l, ltype, { table.unpack(v) }, t) end
    elseif f.name == "partition_dim" then
      -- SINGA's -1 (its default) means "the net's"; singa-tui's -1 means "whole, on one worker".
      if v ~= -1 then set(t, "partition_dim", v) end
    elseif f.name == "activation_conf" then
      set(t, "activation", v.type)
    elseif schema[f.spec.type] then -- a *_conf message: flattened
      copy_fields(d, v, t)
    elseif f.name ~= "user_type" then
      set(t, f.name, v)
    end
  end
  for _, def in ipairs(LAYER_DEFAULTS[ltype] or {}) do
    local key, value = def[1], def[2][ver]
    if value ~= nil and t[key] == nil then
      if def.axes and (t[key .. "_x"] ~= nil or t[key .. "_y"] ~= nil) then
        for _, ax in ipairs { "_x", "_y" } do
          if t[key .. ax] == nil then set(t, key .. ax, value, "SINGA " .. VERSIONS[ver] .. "'s default") end
        end
      else
        set(t, key, value, "SINGA " .. VERSIONS[ver] .. "'s default")
      end
    end
  end
  return t
end

local function strip(path) return (path:gsub("/+$", "")) end

-- SINGA wrote WORKSPACE/checkpoint/stepN-workerW[.bin]; singa-tui writes the job's checkpoints
-- as stepNNNNNNNNN.ckpt in its checkpoint folder, which a conf's workspace makes WORKSPACE/checkpoint.
local function map_checkpoint(path)
  local dir, step = path:match "^(.*)/step(%d+)%-worker%d+%.?b?i?n?$"
  if not dir then return path end
  return string.format("%s/step%09d.ckpt", dir, tonumber(step))
end

local function map_lr(d, lr, ver)
  local t = otable()
  local fixedstep = lr.type == "kFixedStep"
  for _, f in ipairs(lr._fields) do
    local v = lr[f.name]
    if schema[f.spec.type] then
      copy_fields(d, v, t)
    elseif f.name == "base_lr" and fixedstep then
      t._notes.type = "SINGA's kFixedStep ignored base_lr " .. tostring(v) .. " (step_lr[1] holds before step[1])"
    else
      set(t, f.name, v)
    end
  end
  if t.base_lr == nil and not fixedstep then set(t, "base_lr", 0.01, "SINGA's default") end
  if fixedstep and type(t.step) ~= "table" then
    t.step, t.step_lr = { t.step }, { t.step_lr }
  end
  return t
end

local function map_updater(d, u, ver)
  local t = otable()
  if not u.type then d:fail(u, "updater: no type (%s)", REFUSED_ENUM.kUserUpdater) end
  -- SINGA clipped only when clip_high > clip_low (both 0 by default: no clipping).
  local clip = (u.clip_high or 0) > (u.clip_low or 0)
  for _, f in ipairs(u._fields) do
    local v = u[f.name]
    if f.name == "learning_rate" then
      set(t, "learning_rate", map_lr(d, v, ver))
    elseif schema[f.spec.type] then
      copy_fields(d, v, t)
    elseif f.name == "clip_low" or f.name == "clip_high" then
      if clip then set(t, f.name, v) end
    else
      set(t, f.name, v)
    end
  end
  if not u.learning_rate then d:fail(u, "updater: no learning_rate (%s)", REFUSED_ENUM.kUserChange) end
  if not u.learning_rate.type then
    d:fail(u.learning_rate, "updater.learning_rate: no type (%s)", REFUSED_ENUM.kUserChange)
  end
  return t
end

local function map_job(d, job, ver)
  local t = otable()
  local cluster = job.cluster or {}
  local ws = cluster.workspace and strip(cluster.workspace)
  for _, f in ipairs(job._fields) do
    local v = job[f.name]
    local n = f.name
    if n == "neuralnet" then
      local net = otable()
      local layers = {}
      for _, nf in ipairs(v._fields) do
        if nf.name == "layer" then
          layers[#layers + 1] = map_layer(d, nf.value, ver)
          if net.layer == nil then set(net, "layer", layers) end
        else
          set(net, nf.name, nf.value)
        end
      end
      set(t, "neuralnet", net)
    elseif n == "train_one_batch" then
      local a = otable()
      if not v.alg then d:fail(v, "train_one_batch: no alg (%s)", REFUSED_ENUM.kUserAlg) end
      set(a, "alg", v.alg)
      if v.cd_conf then copy_fields(d, v.cd_conf, a) end
      set(t, n, a)
    elseif n == "updater" then
      set(t, n, map_updater(d, v, ver))
    elseif n == "cluster" then
      local c = otable()
      copy_fields(d, v, c, { start_port = true, poll_time = true })
      set(t, n, c)
      if ws and t.checkpoint_path == nil then
        set(t, "checkpoint_path", ws .. "/checkpoint", "SINGA's WORKSPACE/checkpoint")
      end
    elseif n == "checkpoint_path" then
      if not ws then
        d:fail(f, "checkpoint_path (SINGA: checkpoints to initialise params from) needs cluster.workspace, "
                   .. "where the job writes its own checkpoints")
      end
      local list = { ws .. "/checkpoint" }
      for _, p in ipairs(v) do
        local m = map_checkpoint(p)
        local dup = false
        for _, q in ipairs(list) do dup = dup or q == m end
        if not dup then list[#list + 1] = m end
      end
      set(t, "checkpoint_path", list, "the job's folder (SINGA's WORKSPACE/checkpoint), then the checkpoints "
          .. "SINGA's checkpoint_path initialises params from")
    elseif n ~= "gpu" and n ~= "warmup_steps" and n ~= "debug" and n ~= "reset_param_version" and n ~= "step"
        and n ~= "id" then
      set(t, n, v)
    end
  end
  return t
end

--------------------------------------------------------------------------------------------
-- Entry points.
--------------------------------------------------------------------------------------------

-- Where the decoded message's fields are, by the name the job gives them: a *_conf message's
-- fields as the layer's (flattened), srclayers as srclayer.
local function field_lines(msg, into)
  for _, f in ipairs(msg._fields) do
    local name = f.name == "srclayers" and "srclayer" or f.name
    if schema[f.spec.type] and f.name ~= "layer" then
      field_lines(f.value, into)
      into[name] = into[name] or f
    elseif into[name] == nil then
      into[name] = f
    end
  end
  return into
end

-- Where the job's layers and sections are in the conf, for M.locate.
local function origin(path, job)
  local o = { file = path, layers = {}, sections = { job = { line = 1, col = 1, fields = field_lines(job, {}) } } }
  for _, f in ipairs(job._fields) do
    if f.name == "neuralnet" then
      for _, lf in ipairs(f.value._fields) do
        if lf.name == "layer" then
          o.layers[#o.layers + 1] = { name = lf.value.name, line = lf.line, col = lf.col, fields = field_lines(lf.value, {}) }
        end
      end
    end
    if schema[f.spec.type] then o.sections[f.name] = { line = f.line, col = f.col, fields = field_lines(f.value, {}) } end
  end
  local u = job.updater
  if u and u.learning_rate then
    local lr = u.learning_rate
    o.sections["updater.learning_rate"] = { line = lr.line, col = lr.column, fields = field_lines(lr, {}) }
  end
  return o
end

-- The layer of origin o an engine's message names ("layer 'data' ..."): of layers of that name
-- (one per phase), the one whose string value (a file) the message quotes, and that field; else
-- the first.
local function named_layer(o, msg)
  local name = msg:match "layer '([^']+)'"
  if not name then return nil end
  local base = name:gsub("#%d+$", ""):gsub("%[%d+%]$", "")
  local first
  for _, l in ipairs(o.layers) do
    if l.name == name or l.name == base then
      first = first or l
      for k, f in pairs(l.fields) do
        if k ~= "name" and type(f.value) == "string" and msg:find("'" .. f.value .. "'", 1, true) then return l, f end
      end
    end
  end
  return first
end

-- The engine's message about the job imported from a conf (origin o), prefixed with the conf's
-- file:line:column of the layer, section or field it names (the file alone when none).
function M.locate(o, msg)
  local field = msg:match "field '([^']+)'"
  local at, quoted = named_layer(o, msg)
  if quoted and not field then return string.format("%s:%d:%d: %s", o.file, quoted.line, quoted.col, msg) end
  if not at then
    local sec = msg:match "^([%w_.]+):"
    at = o.sections[sec] or o.sections.job
  end
  at = field and at.fields[field] or at
  if at == o.sections.job then return string.format("%s: %s", o.file, msg) end
  return string.format("%s:%d:%d: %s", o.file, at.line, at.col, msg)
end

-- The ordered job and the version read: opts.version ("v0.1", "v0.2" or "v0.3") forces one.
function M.read(path, opts)
  opts = opts or {}
  local tree = core.read_pbtext(path)
  local d = setmetatable({ file = path, cands = { true, true, true } }, Decoder)
  local job = d:message(tree, "JobProto", "job")
  job.line, job.column = 1, 1
  local ver
  if opts.version then
    for i, n in ipairs(VERSIONS) do if n == opts.version then ver = i end end
    if not ver then error(string.format("import_conf: unknown SINGA version '%s' (v0.1, v0.2 or v0.3)", opts.version), 2) end
    if not d.cands[ver] then
      core.conf_error(string.format("%s: the conf is not SINGA %s: %s (line %d) is SINGA %s only", path,
                                    opts.version, d.narrowed.what, d.narrowed.line, vnames(d.narrowed.v)))
    end
  else
    for i = 1, 3 do if d.cands[i] then ver = ver or i end end
  end
  for _, req in ipairs { "neuralnet", "updater", "train_steps" } do
    if job[req] == nil then d:fail(job, "job: field '%s' is required", req) end
  end
  return map_job(d, job, ver), VERSIONS[ver], origin(path, job)
end

local function plain(v)
  if type(v) ~= "table" then return v end
  local out = {}
  if is_otable(v) then
    for _, k in ipairs(v._keys) do out[k] = plain(v[k]) end
  else
    for i, x in ipairs(v) do out[i] = plain(x) end
  end
  return out
end

-- singa.import_conf(path [, { version = "v0.3" }]) -> the job table.
function M.import(path, opts)
  local job = M.read(path, opts)
  return plain(job)
end

-- singa-tui -e job.conf: trains the conf's job; the engine's errors name the conf's line.
function M.run(path)
  local job, _, o = M.read(path)
  local ok, err = pcall(require("singa").train, plain(job))
  if ok then return err end
  if type(err) ~= "string" then error(err, 0) end -- a --test or --summary run's end, passed on
  core.conf_error(M.locate(o, err))
end

local function literal(v)
  if type(v) == "string" then return string.format("%q", v) end
  if math.type(v) == "integer" then return tostring(v) end
  if type(v) == "number" then
    if v ~= v then return "0/0" end
    if v == math.huge then return "math.huge" end
    if v == -math.huge then return "-math.huge" end
    local s = string.format("%.9g", v)
    if tonumber(s) ~= v then s = string.format("%.17g", v) end
    if not s:find "[%.eni]" then s = s .. ".0" end
    return s
  end
  return tostring(v)
end

local function inline(v)
  if type(v) ~= "table" then return literal(v) end
  local parts = {}
  if is_otable(v) then
    for _, k in ipairs(v._keys) do parts[#parts + 1] = k .. " = " .. inline(v[k]) end
  else
    for _, x in ipairs(v) do parts[#parts + 1] = inline(x) end
  end
  return "{ " .. table.concat(parts, ", ") .. " }"
end

-- Writes t's fields, one per line, indented; a layer list one layer per block.
local function emit(out, t, indent)
  for _, k in ipairs(t._keys) do
    local v = t[k]
    local note = t._notes[k]
    local comment = note and ("  -- " .. note) or ""
    if k == "layer" then
      out[#out + 1] = indent .. "layer = {" .. comment
      for _, l in ipairs(v) do
        out[#out + 1] = indent .. "  {"
        emit(out, l, indent .. "    ")
        out[#out + 1] = indent .. "  },"
      end
      out[#out + 1] = indent .. "},"
    elseif is_otable(v) and k ~= "init" then
      out[#out + 1] = indent .. k .. " = {" .. comment
      emit(out, v, indent .. "  ")
      out[#out + 1] = indent .. "},"
    elseif k == "param" then
      out[#out + 1] = indent .. "param = {" .. comment
      for _, p in ipairs(v) do out[#out + 1] = indent .. "  " .. inline(p) .. "," end
      out[#out + 1] = indent .. "},"
    else
      out[#out + 1] = indent .. k .. " = " .. inline(v) .. "," .. comment
    end
  end
end

-- The job as a Lua script that runs it (singa-tui --convert).
function M.to_lua(path, opts)
  local job, ver = M.read(path, opts)
  local out = {
    string.format("-- %s (SINGA %s JobProto), converted by singa-tui --convert.", path, ver),
    "-- Run: singa-tui -e THIS_FILE.  Fields are in the conf's order; comments say where SINGA differs.",
    'local singa = require "singa"',
    "local job = {",
  }
  emit(out, job, "  ")
  out[#out + 1] = "}"
  out[#out + 1] = "return singa.train(job)"
  return table.concat(out, "\n") .. "\n"
end

return M

-- singa.import_conf on confs written here: SINGA v0.2 and v0.3 spellings (include, store_conf,
-- kRecordInput, kCConvolution and kCudnn* twins, activation_conf, adam_conf, clipping), each
-- version's defaults, the version rule and its conflicts, the GRU's param order, kRBMHid's
-- shared weight, SINGA's checkpoint names, and every kind of refusal and "did you mean".
local singa = require "singa"
local jobconf = require "singa.jobconf"
local tap = require "tap"
local td = require "testdata"
local sh = require "shard"

local dir = td.tmpdir("7020-import-versions")
local n = 0
local function write(text)
  n = n + 1
  local path = string.format("%s/c%d.conf", dir, n)
  td.write(path, text)
  return path
end

local HEAD = 'name: "t" train_steps: 10 updater { type: kSGD learning_rate { type: kFixed base_lr: 0.1 } }\n'
local function net(layers) return HEAD .. "neuralnet {\n" .. layers .. "\n}\n" end
local function imp(text, opts) return singa.import_conf(write(text), opts) end
local function layer(job, name)
  for _, l in ipairs(job.neuralnet.layer) do if l.name == name then return l end end
end
local function refused(text, want, name) tap.raises(want, name, singa.import_conf, write(text)) end

-- v0.3: kRecordInput over store_conf, include, twins, activation_conf, kBM, adam_conf, clipping.
local v3 = [[
name: "v3" train_steps: 100
updater { type: kAdam adam_conf { beta1: 0.8 beta2: 0.99 } clip_low: -5 clip_high: 5
          learning_rate { type: kStep step_conf { gamma: 0.5 change_freq: 40 } } }
neuralnet {
  partition_dim: 0
  layer { name: "data" type: kRecordInput include: kTrain
          store_conf { backend: "kvfile" path: "train.bin" mean_file: "mean.bin" batchsize: 64
                       shape: 3 shape: 32 shape: 32 random_skip: 10 } }
  layer { name: "data" type: kRecordInput include: kTest include: kVal
          store_conf { backend: "kvfile" path: "test.bin" batchsize: 100 shape: 3 shape: 32 shape: 32 } }
  layer { name: "conv" type: kCudnnConv srclayers: "data" partition_dim: -1
          convolution_conf { num_filters: 8 pad: 1 } param { name: "w" init { type: kGaussian std: 0.01 } } }
  layer { name: "c2" type: kCConvolution srclayers: "conv" convolution_conf { num_filters: 8 kernel: 5 } partition_dim: 1 }
  layer { name: "pool" type: kCudnnPool srclayers: "c2" pooling_conf { pool: AVG } }
  layer { name: "px" type: kCPooling srclayers: "pool" pooling_conf { kernel_x: 2 stride_y: 1 } }
  layer { name: "act" type: kActivation srclayers: "px" activation_conf { type: TANH } }
  layer { name: "relu" type: kActivation srclayers: "act" }
  layer { name: "cact" type: kCudnnActivation srclayers: "relu" activation_conf { type: SIGMOID } }
  layer { name: "bm" type: kCudnnBM srclayers: "cact" }
  layer { name: "ip" type: kInnerProduct srclayers: "bm" innerproduct_conf { num_output: 10 } }
  layer { name: "loss" type: kCudnnSoftmaxLoss srclayers: "ip" srclayers: "data" softmaxloss_conf { topk: 1 } }
}
cluster { workspace: "ws/v3/" nworker_groups: 2 nworkers_per_group: 2 }
]]
local job, ver = jobconf.read(write(v3))
tap.is(ver, "v0.3", "kAdam, adam_conf and kActivation are v0.3 spellings: read as v0.3")
job = singa.import_conf(write(v3))
local d = layer(job, "data")
tap.ok(d.type == "kRecordInput" and d.backend == "kvfile" and d.path == "train.bin" and d.mean_file == "mean.bin"
       and d.batchsize == 64 and d.random_skip == 10 and table.concat(d.shape, "x") == "3x32x32",
       "store_conf is flattened with SINGA's field names (a repeated field with one value as that value)")
tap.is(table.concat(d.exclude, ","), "kValidation,kTest", "include: kTrain is exclude = { kValidation, kTest }")
tap.is(job.neuralnet.layer[2].exclude, "kTrain", "include: kTest, kVal is exclude = kTrain")
local conv = layer(job, "conv")
tap.ok(conv.type == "kConvolution" and conv.kernel == 3 and conv.num_filters == 8 and conv.pad == 1,
       "kCudnnConv runs as kConvolution, with v0.3's default kernel 3 written out")
tap.is(conv.partition_dim, nil, "SINGA's partition_dim -1 (the net's) is left to the net")
tap.is(layer(job, "c2").partition_dim, 1, "a layer's partition_dim 1 stays")
tap.ok(layer(job, "c2").type == "kConvolution" and layer(job, "c2").kernel == 5, "kCConvolution runs as kConvolution")
local pool = layer(job, "pool")
tap.ok(pool.type == "kPooling" and pool.kernel == 3 and pool.stride == 2 and pool.pool == "AVG",
       "kCudnnPool runs as kPooling, with v0.3's defaults kernel 3 and stride 2")
local px = layer(job, "px")
tap.ok(px.kernel_x == 2 and px.kernel_y == 3 and px.stride_y == 1 and px.stride_x == 2 and px.kernel == nil,
       "per-axis pooling fields get the other axis's default")
tap.is(layer(job, "act").activation, "TANH", "activation_conf.type is the layer's activation")
tap.is(layer(job, "relu").activation, "RELU", "kActivation without activation_conf is SINGA's default RELU")
tap.ok(layer(job, "cact").type == "kActivation" and layer(job, "cact").activation == "SIGMOID", "kCudnnActivation runs as kActivation")
tap.is(layer(job, "bm").type, "kBM", "kCudnnBM runs as kBM")
tap.is(layer(job, "loss").type, "kSoftmaxLoss", "kCudnnSoftmaxLoss runs as kSoftmaxLoss")
tap.is(table.concat(layer(job, "loss").srclayer, ","), "ip,data", "srclayers is srclayer")
local u = job.updater
tap.ok(u.type == "kAdam" and u.beta1 == 0.8 and u.beta2 == 0.99 and u.clip_low == -5 and u.clip_high == 5,
       "adam_conf is flattened; clipping kept (clip_high > clip_low)")
local lr = u.learning_rate
tap.ok(lr.type == "kStep" and lr.gamma == 0.5 and lr.change_freq == 40 and lr.base_lr == 0.01,
       "step_conf is flattened, and SINGA's default base_lr 0.01 written out")
tap.ok(job.cluster.workspace == "ws/v3/" and job.cluster.nworker_groups == 2 and job.cluster.nworkers_per_group == 2,
       "cluster fields map as they are")
tap.is(job.checkpoint_path, "ws/v3/checkpoint", "checkpoints go to SINGA's WORKSPACE/checkpoint")

-- v0.2 and v0.1 defaults; the oldest version that has every spelling; a forced version.
local pooled = net('layer { name: "p" type: kPooling pooling_conf { kernel: 2 } }')
job, ver = jobconf.read(write(pooled))
tap.is(ver, "v0.1", "a conf of spellings all versions share is read as the oldest, v0.1")
tap.is(singa.import_conf(write(pooled)).neuralnet.layer[1].stride, nil, "v0.1's pooling stride 1 is singa-tui's own")
tap.is(singa.import_conf(write(pooled), { version = "v0.3" }).neuralnet.layer[1].stride, 2,
       "{ version = 'v0.3' } forces v0.3 and its stride 2")
local v2 = net('layer { name: "p" type: kPooling include: kTrain }')
job, ver = jobconf.read(write(v2))
tap.ok(ver == "v0.2" and job.neuralnet.layer[1].kernel == 3 and job.neuralnet.layer[1].stride == 2,
       "include makes it v0.2, with v0.2's pooling defaults kernel 3, stride 2")
tap.raises("the conf is not SINGA v0.1: field 'include' (line", "a version the conf cannot be is refused",
           singa.import_conf, write(v2), { version = "v0.1" })
tap.raises("unknown SINGA version 'v1.0'", "an unknown version is refused", singa.import_conf, write(pooled), { version = "v1.0" })
refused(net('layer { name: "l" type: kEuclideanLoss euclideanloss_conf { } }\nlayer { name: "a" type: kActivation }'),
        { ":4:19: LayerType 'kActivation' exists in SINGA v0.3 only, but field 'euclideanloss_conf' (line 3) in SINGA v0.1 only" },
        "spellings of two versions in one conf are refused, naming both")
job = imp(net([[layer { name: "s" type: kSlice include: kTrain }
layer { name: "i" type: kImagePreprocess rgbimage_conf { cropsize: 227 mirror: true scale: 0.5 } }]]))
tap.is(layer(job, "s").num_slices, 1, "kSlice: v0.2's default num_slices 1 is written out (singa-tui requires it)")
local ip = layer(job, "i")
tap.ok(ip.type == "kImagePreprocess" and ip.cropsize == 227 and ip.mirror == true and ip.scale == 0.5,
       "kImagePreprocess keeps its name, rgbimage_conf flattened")
job = imp(net('layer { name: "c" type: kConvolution convolution_conf { num_filters: 4 kernel: 3 bias_term: false } }'))
tap.is(job.neuralnet.layer[1].bias_term, false, "v0.1's convolution bias_term maps")

-- The GRU's params in SINGA's order, kRBMHid's copy of the weight, kUserLayer.
local gru = {}
for i, nm in ipairs { "z_hx", "r_hx", "c_hx", "z_hh", "r_hh", "c_hh", "z_b", "r_b", "c_b" } do
  gru[i] = string.format('param { name: "%s" }', nm)
end
job = imp(net('layer { name: "g" type: kGRU gru_conf { dim_hidden: 8 } ' .. table.concat(gru, " ") .. " }"))
local order = {}
for i, p in ipairs(job.neuralnet.layer[1].param) do order[i] = p.name end
tap.is(table.concat(order, " "), "z_hx z_hh z_b r_hx r_hh r_b c_hx c_hh c_b",
       "kGRU: SINGA's params (gate weights, state weights, biases) regrouped gate by gate as singa-tui declares them")
refused(net('layer { name: "g" type: kGRU gru_conf { dim_hidden: 8 } ' .. table.concat(gru, " ", 1, 6) .. " }"),
        "layer 'g' (kGRU): 6 params", "a GRU without SINGA's three biases is refused")
job = imp(net([[layer { name: "v" type: kRBMVis srclayers: "h" rbm_conf { hdim: 4 } param { name: "w" } param { name: "bv" } }
layer { name: "h" type: kRBMHid srclayers: "v" rbm_conf { hdim: 4 } param { name: "w_" share_from: "w" } param { name: "bh" } }]]))
local hid = layer(job, "h")
tap.ok(#hid.param == 1 and hid.param[1].name == "bh" and #layer(job, "v").param == 2,
       "kRBMHid keeps its bias; SINGA's shared copy of the weight is its kRBMVis's own")
refused(net('layer { name: "h" type: kRBMHid rbm_conf { hdim: 4 } param { name: "x" } param { name: "b" } }'),
        "layer 'h' (kRBMHid): its first param must be SINGA's copy of the kRBMVis weight", "a kRBMHid whose first param is not shared")
tap.is(imp(net('layer { name: "u" type: kUserLayer user_type: "kSwish" }')).neuralnet.layer[1].type, "kSwish",
       "kUserLayer runs its user_type (a plugin layer)")
refused(net('layer { name: "u" type: kUserLayer }'), "layer 'u': kUserLayer without user_type", "kUserLayer without user_type")

-- Checkpoints: SINGA's stepN-workerW[.bin] files as singa-tui's, deduplicated over workers.
job = imp(HEAD .. [[checkpoint_path: "a/checkpoint/step100-worker0"
checkpoint_path: "a/checkpoint/step100-worker1.bin" checkpoint_path: "b/ckpt"
neuralnet { } cluster { workspace: "w" }]])
tap.is(table.concat(job.checkpoint_path, " "), "w/checkpoint a/checkpoint/step000000100.ckpt b/ckpt",
       "checkpoint_path: the job's folder, then SINGA's files as singa-tui names them (other paths as given)")
refused(HEAD .. 'checkpoint_path: "a/checkpoint/step1-worker0" neuralnet { }',
        "checkpoint_path (SINGA: checkpoints to initialise params from) needs cluster.workspace", "checkpoint_path without a workspace")

-- Schedules and scalar forms.
local function sched(body) return imp(net("") .. "") and
  imp('train_steps: 1 neuralnet { } updater { type: kSGD learning_rate { ' .. body .. ' } }').updater.learning_rate end
lr = sched("type: kLinear base_lr: 1 linear_conf { change_freq: 5 final_lr: 0.5 }")
tap.ok(lr.change_freq == 5 and lr.final_lr == 0.5, "linear_conf is flattened")
lr = sched("type: kInverseT inverset_conf { final_lr: 9 }")
tap.ok(lr.final_lr == 9 and lr.base_lr == 0.01, "inverset_conf is flattened")
lr = sched("type: kExponential base_lr: 2 exponential_conf { change_freq: 3 }")
tap.ok(lr.change_freq == 3 and lr.base_lr == 2, "exponential_conf is flattened")
lr = sched("type: kFixedStep base_lr: 7 fixedstep_conf { step: 0 step_lr: 0.5 }")
tap.ok(lr.base_lr == nil and lr.step[1] == 0 and lr.step_lr[1] == 0.5,
       "kFixedStep: SINGA ignored base_lr, so it is left out; one step is still a list")
job = imp('train_steps: 1 neuralnet { } resume: t updater { type: kSGD clip_low: -inf clip_high: inf momentum: 0.5f '
          .. 'learning_rate { type: kFixed base_lr: 1e-2 } }')
tap.ok(job.resume == true and job.updater.clip_high == math.huge and job.updater.clip_low == -math.huge
       and math.abs(job.updater.momentum - 0.5) < 1e-12, "t, inf, -inf and 0.5f read as SINGA reads them")
job = imp('train_steps: 1 neuralnet { } updater { type: kSGD clip_low: 0 clip_high: 0 learning_rate { type: kFixed } }')
tap.ok(job.updater.clip_low == nil and job.updater.clip_high == nil, "clip_high <= clip_low: SINGA did not clip, nor does the job")

-- Refusals: SINGA's meaning and what to do.
refused(HEAD .. "gpu: 0 neuralnet { }", { ":1:", "field 'gpu' is not supported (SINGA: the GPUs to train on: no GPUs here; remove it)" }, "gpu")
refused(HEAD .. "warmup_steps: 5 neuralnet { }", "field 'warmup_steps' is not supported (SINGA: steps SINGA trained", "warmup_steps")
tap.ok(pcall(imp, HEAD .. "warmup_steps: 0 debug: false neuralnet { }"), "a refused field holding SINGA's default changes nothing and is accepted")
refused(HEAD .. "debug: true neuralnet { }", "field 'debug' is not supported", "debug")
refused(HEAD .. "neuralnet { } cluster { start_port: 7000 }", "field 'start_port' is not supported (SINGA: SINGA's first port", "start_port")
refused(HEAD .. "neuralnet { } cluster { poll_time: 5 }", "field 'poll_time' is not supported", "poll_time")
refused(net('layer { name: "c" type: kConvolution convolution_conf { workspace_byte_limit: 1024 } }'),
        "cuDNN's workspace: no GPUs here; remove it", "convolution's workspace_byte_limit")
refused(net('layer { name: "m" type: kMnist mnist_conf { norm_a: 255 elastic_freq: 10 } }'),
        "elastic distortion", "kMnist's elastic distortion")
refused(net('layer { name: "d" type: kShardData share_src_blobs: true }'), "field 'share_src_blobs' is not supported", "share_src_blobs")
refused(net('layer { name: "d" type: kPrefetch prefetch_conf { sublayers { name: "x" type: kShardData } } }'),
        "kPrefetch's sublayers (read in a thread): list them as layers of the net", "kPrefetch")
refused(net('layer { name: "d" type: kLMDBData }'), "LMDB data: not read here", "kLMDBData")
refused(net('layer { name: "f" type: kInnerProduct param { name: "w" shape: 3 } }'), "field 'shape' is not supported", "a param's shape")
refused(net('layer { name: "f" type: kInnerProduct param { name: "w" init { std: 1 } } }'),
        "init: no type (an init method of your own in C++", "an init without a type is SINGA's kUserInit, refused")
refused(net('layer { name: "d" type: kShardData include: kPositive }'), "SINGA's internal phase kPositive", "an internal phase")
refused("train_steps: 1 neuralnet { } updater { learning_rate { type: kFixed } }", "updater: no type", "an updater without a type")
refused("train_steps: 1 neuralnet { } updater { type: kSGD learning_rate { base_lr: 1 } }", "learning_rate: no type", "a schedule without a type")
refused("train_steps: 1 neuralnet { } updater { type: kUserUpdater }", "kUserUpdater is not supported", "kUserUpdater")
refused(HEAD .. "train_one_batch { cd_conf { cd_k: 2 } } neuralnet { }", "train_one_batch: no alg", "train_one_batch without alg")
refused('name: "x" neuralnet { }', "job: field 'updater' is required", "a job without an updater")

-- Unknown spellings and wrong types.
refused(HEAD .. "trian_steps: 10 neuralnet { }", { ":2:1: job: unknown field 'trian_steps'", "did you mean 'train_steps'?" },
        "an unknown job field: did you mean")
refused(net('layer { name: "a" type: kInnerProduct srclayer: "x" }'), { "unknown field 'srclayer'", "did you mean 'srclayers'?" },
        "singa-tui's own spelling in a conf: did you mean SINGA's")
refused(net('layer { name: "d" type: kShardData exclude: kValidation }'), { "unknown Phase 'kValidation'", "did you mean 'kVal'?" },
        "singa-tui's kValidation in a conf: did you mean SINGA's kVal")
refused(net('layer { name: "a" type: kInnerProdcut }'), { "unknown LayerType 'kInnerProdcut'", "did you mean 'kInnerProduct'?" },
        "an unknown layer type: did you mean")
refused(net('layer { name: "a" type: kInnerProduct innerproduct_conf { num_ouptut: 3 } }'),
        { "job.neuralnet.layer.innerproduct_conf: unknown field 'num_ouptut'", "did you mean 'num_output'?" }, "a misspelt *_conf field")
refused('train_steps: "10"', ":1:1: job.train_steps: expected an integer, got the string \"10\"", "a string for an integer")
refused("train_steps: 1.5", "expected an integer, got '1.5'", "a float for an integer")
refused("name: t", "job.name: expected a quoted string, got 't'", "an identifier for a string")
refused("resume: 2", "expected true or false, got '2'", "a number for a bool")
refused("train_steps: 1 train_steps: 2", "field 'train_steps' given twice (it is not repeated)", "an optional field twice")
refused("neuralnet: 3", "job.neuralnet: expected a message { ... }, got '3'", "a value for a message")
refused(net('layer { name: "a" type: 205 }'), "give the LayerType by name, not by number (205)", "an enum by number")
refused(net('layer { name: "a" type: kInnerProduct innerproduct_conf { num_output: 3 } num_output: 4 }'),
        "unknown field 'num_output'", "a flattened name written on the layer itself is SINGA's error too")

-- --convert of these confs: the script gives singa.train the imported table.
local function ser(v)
  if type(v) ~= "table" then return tostring(v) .. (math.type(v) or type(v)) end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  local o = {}
  for _, k in ipairs(keys) do o[#o + 1] = tostring(k) .. "=" .. ser(v[k]) end
  return "{" .. table.concat(o, " ") .. "}"
end
local out = jobconf.to_lua(write(v3))
tap.ok(out:find('\n        kernel_x = 2,\n', 1, true) and out:find('\n        kernel_y = 3,  -- SINGA v0.3\'s default\n', 1, true)
       and out:find('type = "kConvolution",  -- SINGA: kCudnnConv\n', 1, true),
       "--convert comments the defaults it wrote out and the types it renamed, not the fields the conf gave", out)
for _, text in ipairs { v3, v2, 'train_steps: 1 neuralnet { } updater { type: kSGD clip_low: -inf clip_high: inf '
                        .. 'learning_rate { type: kFixed base_lr: 1e-7 } } name: "q\\"\\n\\x01"' } do
  local path = write(text)
  local job
  local env = setmetatable({ require = function() return { train = function(j) job = j end } end }, { __index = _G })
  local out = jobconf.to_lua(path)
  assert(load(out, "=converted", "t", env))()
  tap.is(ser(job), ser(singa.import_conf(path)), "the converted script of " .. path .. " trains the imported job")
end

-- The whole v0.3 conf above trains too, a few steps on small KVFiles (CIFAR-shaped records and
-- v0.3's image_mean.bin), its loss reading the labels from the data layer as SINGA's did.
local function records(path, n)
  local list, seed = {}, 5
  for i = 1, n do
    local px = {}
    for k = 1, 3 * 32 * 32 do
      seed = (seed * 1103515245 + 12345) % 2147483648
      px[k] = string.char((seed >> 16) % 256)
    end
    list[i] = { string.format("%05d", i - 1), sh.record { shape = { 3, 32, 32 }, label = (i - 1) % 10, pixel = table.concat(px) } }
  end
  sh.write("v03", dir .. "/" .. path, list)
end
records("train.bin", 64)
records("test.bin", 20)
local mean = {}
for k = 1, 3072 do mean[k] = 127.5 end
sh.write("v03", dir .. "/mean.bin", { { "mean", sh.record { shape = { 3, 32, 32 }, data = mean } } })
local runnable = v3:gsub('"([%w/]+%.bin)"', '"' .. dir .. '/%1"'):gsub('"ws/v3/"', '"' .. dir .. '/ws"')
  :gsub("train_steps: 100", "train_steps: 3 test_freq: 3 test_steps: 1")
local ok, r = pcall(singa.train, singa.import_conf(write(runnable)))
tap.ok(ok and r.steps == 3 and r.test and r.test.loss == r.test.loss,
       "the v0.3 conf trains 3 steps and tests (2 worker groups of 2 workers; the loss's labels from 'data')", tostring(r))

tap.done()

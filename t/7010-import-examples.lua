-- The eight example confs of SINGA v0.1.0 (../shared/singa-examples-v0.1, used in place as data)
-- import to the expected jobs: each layer's type (kC* types as their CPU twins), flattened
-- *_conf fields, srclayer, exclude, params and their init (kRBMHid without SINGA's shared copy
-- of the weight), the updater and its schedule (SINGA's default base_lr written out, kFixedStep
-- without it), the cluster, and SINGA's checkpoint folder and checkpoint_path files as
-- singa-tui's.  Tables are written one line per layer, keys sorted.  And each one's --convert
-- output is stable and, run, gives singa.train the same table.  Skipped without ../shared.
local singa = require "singa"
local jobconf = require "singa.jobconf"
local tap = require "tap"

local top = os.getenv("top_srcdir") or "."
local shared = os.getenv("SINGA_SHARED") or top .. "/../shared"
local examples = shared .. "/singa-examples-v0.1"
if not io.open(examples .. "/mnist/job.conf") then
  print("1..0 # SKIP SINGA's example confs are not at " .. examples .. " (set SINGA_SHARED to the shared folder)")
  os.exit(0)
end

local function ser(v)
  if type(v) ~= "table" then return tostring(v) end
  if #v > 0 then
    local o = {}
    for i, x in ipairs(v) do o[i] = ser(x) end
    return "[" .. table.concat(o, ",") .. "]"
  end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table.sort(keys)
  local o = {}
  for _, k in ipairs(keys) do o[#o + 1] = k .. "=" .. ser(v[k]) end
  return "{" .. table.concat(o, " ") .. "}"
end

local expected = {
  ["mnist/job.conf"] = {
    "{checkpoint_path=examples/mnist/checkpoint cluster={nserver_groups=1 nworker_groups=1 workspace=examples/mnist} disp_freq=10 name=mlp test_freq=60 test_steps=10 train_one_batch={alg=kBP} train_steps=1000 updater={learning_rate={base_lr=0.001 change_freq=60 gamma=0.997 type=kStep} type=kSGD}}",
    "{batchsize=1000 exclude=kTest name=data path=examples/mnist/mnist_train_shard type=kShardData}",
    "{batchsize=1000 exclude=kTrain name=data path=examples/mnist/mnist_test_shard type=kShardData}",
    "{name=mnist norm_a=127.5 norm_b=1 srclayer=data type=kMnist}",
    "{name=label srclayer=data type=kLabel}",
    "{name=fc1 num_output=2500 param=[{init={high=0.05 low=-0.05 type=kUniform} name=w1},{init={high=0.05 low=-0.05 type=kUniform} name=b1}] srclayer=mnist type=kInnerProduct}",
    "{name=tanh1 srclayer=fc1 type=kSTanh}",
    "{name=fc2 num_output=2000 param=[{init={high=0.05 low=-0.05 type=kUniform} name=w2},{init={high=0.05 low=-0.05 type=kUniform} name=b2}] srclayer=tanh1 type=kInnerProduct}",
    "{name=tanh2 srclayer=fc2 type=kSTanh}",
    "{name=fc3 num_output=1500 param=[{init={high=0.05 low=-0.05 type=kUniform} name=w3},{init={high=0.05 low=-0.05 type=kUniform} name=b3}] srclayer=tanh2 type=kInnerProduct}",
    "{name=tanh3 srclayer=fc3 type=kSTanh}",
    "{name=fc4 num_output=1000 param=[{init={high=0.05 low=-0.05 type=kUniform} name=w4},{init={high=0.05 low=-0.05 type=kUniform} name=b4}] srclayer=tanh3 type=kInnerProduct}",
    "{name=tanh4 srclayer=fc4 type=kSTanh}",
    "{name=fc5 num_output=500 param=[{init={high=0.05 low=-0.05 type=kUniform} name=w5},{init={high=0.05 low=-0.05 type=kUniform} name=b5}] srclayer=tanh4 type=kInnerProduct}",
    "{name=tanh5 srclayer=fc5 type=kSTanh}",
    "{name=fc6 num_output=10 param=[{init={high=0.05 low=-0.05 type=kUniform} name=w6},{init={high=0.05 low=-0.05 type=kUniform} name=b6}] srclayer=tanh5 type=kInnerProduct}",
    "{name=loss srclayer=[fc6,label] topk=1 type=kSoftmaxLoss}",
  },
  ["mnist/conv.conf"] = {
    "{checkpoint_path=examples/mnist/checkpoint cluster={nserver_groups=1 nworker_groups=1 workspace=examples/mnist} disp_freq=50 name=conv test_freq=500 test_steps=100 train_one_batch={alg=kBP} train_steps=10000 updater={learning_rate={base_lr=0.01 gamma=0.0001 pow=0.75 type=kInverse} momentum=0.9 type=kSGD weight_decay=0.0005}}",
    "{batchsize=64 exclude=kTest name=data path=examples/mnist/mnist_train_shard type=kShardData}",
    "{batchsize=100 exclude=kTrain name=data path=examples/mnist/mnist_test_shard type=kShardData}",
    "{name=mnist norm_a=255 norm_b=0 srclayer=data type=kMnist}",
    "{name=label srclayer=data type=kLabel}",
    "{kernel=5 name=conv1 num_filters=20 param=[{init={type=kUniformSqrtFanIn} name=w1},{init={type=kConstant value=0} lr_scale=2 name=b1}] srclayer=mnist stride=1 type=kConvolution}",
    "{kernel=2 name=pool1 pool=MAX srclayer=conv1 stride=2 type=kPooling}",
    "{kernel=5 name=conv2 num_filters=50 param=[{init={type=kUniformSqrtFanIn} name=w2},{init={type=kConstant value=0} lr_scale=2 name=b2}] srclayer=pool1 stride=1 type=kConvolution}",
    "{kernel=2 name=pool2 pool=MAX srclayer=conv2 stride=2 type=kPooling}",
    "{name=ip1 num_output=500 param=[{init={type=kUniformSqrtFanIn} name=w3},{init={type=kConstant value=0} lr_scale=2 name=b3}] srclayer=pool2 type=kInnerProduct}",
    "{name=relu1 srclayer=ip1 type=kReLU}",
    "{name=ip2 num_output=10 param=[{init={type=kUniformSqrtFanIn} name=w4},{init={type=kConstant value=0} lr_scale=2 name=b4}] srclayer=relu1 type=kInnerProduct}",
    "{name=loss srclayer=[ip2,label] topk=1 type=kSoftmaxLoss}",
  },
  ["cifar10/job.conf"] = {
    "{checkpoint_path=examples/cifar10/checkpoint cluster={nserver_groups=1 nworker_groups=1 nworkers_per_group=1 nworkers_per_procs=1 workspace=examples/cifar10} disp_freq=30 name=cifar10-convnet test_freq=300 test_steps=100 train_one_batch={alg=kBP} train_steps=1000 updater={learning_rate={step=[0,60000,65000] step_lr=[0.001,0.0001,1e-05] type=kFixedStep} type=kSGD weight_decay=0.004}}",
    "{batchsize=64 exclude=kTest name=data path=examples/cifar10/cifar10_train_shard random_skip=5000 type=kShardData}",
    "{batchsize=100 exclude=kTrain name=data path=examples/cifar10/cifar10_test_shard type=kShardData}",
    "{meanfile=examples/cifar10/image_mean.bin name=rgb srclayer=data type=kRGBImage}",
    "{name=label srclayer=data type=kLabel}",
    "{kernel=5 name=conv1 num_filters=32 pad=2 param=[{init={std=0.0001 type=kGaussian} name=w1},{init={type=kConstant value=0} lr_scale=2 name=b1}] srclayer=rgb stride=1 type=kConvolution}",
    "{kernel=3 name=pool1 pool=MAX srclayer=conv1 stride=2 type=kPooling}",
    "{name=relu1 srclayer=pool1 type=kReLU}",
    "{alpha=5e-05 beta=0.75 local_size=3 name=norm1 srclayer=relu1 type=kLRN}",
    "{kernel=5 name=conv2 num_filters=32 pad=2 param=[{init={std=0.01 type=kGaussian} name=w2},{init={type=kConstant value=0} lr_scale=2 name=b2}] srclayer=norm1 stride=1 type=kConvolution}",
    "{name=relu2 srclayer=conv2 type=kReLU}",
    "{kernel=3 name=pool2 pool=AVG srclayer=relu2 stride=2 type=kPooling}",
    "{alpha=5e-05 beta=0.75 local_size=3 name=norm2 srclayer=pool2 type=kLRN}",
    "{kernel=5 name=conv3 num_filters=64 pad=2 param=[{init={std=0.01 type=kGaussian} name=w3},{init={type=kConstant value=0} name=b3}] srclayer=norm2 stride=1 type=kConvolution}",
    "{name=relu3 srclayer=conv3 type=kReLU}",
    "{kernel=3 name=pool3 pool=AVG srclayer=relu3 stride=2 type=kPooling}",
    "{name=ip1 num_output=10 param=[{init={std=0.01 type=kGaussian} name=w4 wd_scale=250},{init={type=kConstant value=0} lr_scale=2 name=b4 wd_scale=0}] srclayer=pool3 type=kInnerProduct}",
    "{name=loss srclayer=[ip1,label] topk=1 type=kSoftmaxLoss}",
  },
  ["rbm/rbm1.conf"] = {
    "{checkpoint_path=examples/rbm/rbm1/checkpoint cluster={nserver_groups=1 nservers_per_group=1 nworker_groups=1 nworkers_per_group=1 workspace=examples/rbm/rbm1/} disp_freq=100 name=rbm1 test_freq=500 test_steps=100 train_one_batch={alg=kCD} train_steps=6000 updater={learning_rate={base_lr=0.1 type=kFixed} momentum=0.8 type=kSGD weight_decay=0.0002}}",
    "{batchsize=100 exclude=kTest name=data path=examples/mnist/mnist_train_shard type=kShardData}",
    "{batchsize=100 exclude=kTrain name=data path=examples/mnist/mnist_test_shard type=kShardData}",
    "{name=mnist norm_a=255 norm_b=0 srclayer=data type=kMnist}",
    "{hdim=1000 name=RBMVis param=[{init={mean=0 std=0.1 type=kGaussian} name=w1},{init={type=kConstant value=0} name=b11 wd_scale=0}] srclayer=[mnist,RBMHid] type=kRBMVis}",
    "{hdim=1000 name=RBMHid param=[{init={type=kConstant value=0} name=b12 wd_scale=0}] srclayer=RBMVis type=kRBMHid}",
  },
  ["rbm/rbm2.conf"] = {
    "{checkpoint_path=[examples/rbm/rbm2/checkpoint,examples/rbm/rbm1/checkpoint/step000006000.ckpt] cluster={nserver_groups=1 nservers_per_group=1 nworker_groups=1 nworkers_per_group=1 workspace=examples/rbm/rbm2/} disp_freq=100 name=rbm2 test_freq=500 test_steps=100 train_one_batch={alg=kCD} train_steps=6000 updater={learning_rate={base_lr=0.1 type=kFixed} momentum=0.8 type=kSGD weight_decay=0.0002}}",
    "{batchsize=100 exclude=kTest name=data path=examples/mnist/mnist_train_shard type=kShardData}",
    "{batchsize=100 exclude=kTrain name=data path=examples/mnist/mnist_test_shard type=kShardData}",
    "{name=mnist norm_a=255 norm_b=0 srclayer=data type=kMnist}",
    "{name=Inner1 num_output=1000 param=[{name=w1},{name=b12}] srclayer=mnist type=kInnerProduct}",
    "{name=Sigmoid1 srclayer=Inner1 type=kSigmoid}",
    "{hdim=500 name=RBMVis param=[{init={mean=0 std=0.1 type=kGaussian} name=w2},{init={type=kConstant value=0} name=b21 wd_scale=0}] srclayer=[Sigmoid1,RBMHid] type=kRBMVis}",
    "{hdim=500 name=RBMHid param=[{init={type=kConstant value=0} name=b22 wd_scale=0}] srclayer=RBMVis type=kRBMHid}",
  },
  ["rbm/rbm3.conf"] = {
    "{checkpoint_path=[examples/rbm/rbm3/checkpoint,examples/rbm/rbm2/checkpoint/step000006000.ckpt] cluster={nserver_groups=1 nservers_per_group=1 nworker_groups=1 nworkers_per_group=1 workspace=examples/rbm/rbm3/} disp_freq=100 name=rbm3 test_freq=500 test_steps=100 train_one_batch={alg=kCD} train_steps=6000 updater={learning_rate={base_lr=0.1 type=kFixed} momentum=0.8 type=kSGD weight_decay=0.0002}}",
    "{batchsize=100 exclude=kTest name=data path=examples/mnist/mnist_train_shard type=kShardData}",
    "{batchsize=100 exclude=kTrain name=data path=examples/mnist/mnist_test_shard type=kShardData}",
    "{name=mnist norm_a=255 norm_b=0 srclayer=data type=kMnist}",
    "{name=Inner1 num_output=1000 param=[{name=w1},{name=b12}] srclayer=mnist type=kInnerProduct}",
    "{name=Sigmoid1 srclayer=Inner1 type=kSigmoid}",
    "{name=Inner2 num_output=500 param=[{name=w2},{name=b22}] srclayer=Sigmoid1 type=kInnerProduct}",
    "{name=Sigmoid2 srclayer=Inner2 type=kSigmoid}",
    "{hdim=250 name=RBMVis param=[{init={mean=0 std=0.1 type=kGaussian} name=w3},{init={type=kConstant value=0} name=b31 wd_scale=0}] srclayer=[Sigmoid2,RBMHid] type=kRBMVis}",
    "{hdim=250 name=RBMHid param=[{init={type=kConstant value=0} name=b32 wd_scale=0}] srclayer=RBMVis type=kRBMHid}",
  },
  ["rbm/rbm4.conf"] = {
    "{checkpoint_path=[examples/rbm/rbm4/checkpoint,examples/rbm/rbm3/checkpoint/step000006000.ckpt] cluster={nserver_groups=1 nservers_per_group=1 nworker_groups=1 nworkers_per_group=1 workspace=examples/rbm/rbm4/} disp_freq=100 name=rbm4 test_freq=500 test_steps=100 train_one_batch={alg=kCD} train_steps=6000 updater={learning_rate={base_lr=0.001 type=kFixed} momentum=0.8 type=kSGD weight_decay=0.0002}}",
    "{batchsize=100 exclude=kTest name=data path=examples/mnist/mnist_train_shard type=kShardData}",
    "{batchsize=100 exclude=kTrain name=data path=examples/mnist/mnist_test_shard type=kShardData}",
    "{name=mnist norm_a=255 norm_b=0 srclayer=data type=kMnist}",
    "{name=Inner1 num_output=1000 param=[{name=w1},{name=b12}] srclayer=mnist type=kInnerProduct}",
    "{name=Sigmoid1 srclayer=Inner1 type=kSigmoid}",
    "{name=Inner2 num_output=500 param=[{name=w2},{name=b22}] srclayer=Sigmoid1 type=kInnerProduct}",
    "{name=Sigmoid2 srclayer=Inner2 type=kSigmoid}",
    "{name=Inner3 num_output=250 param=[{name=w3},{name=b32}] srclayer=Sigmoid2 type=kInnerProduct}",
    "{name=Sigmoid3 srclayer=Inner3 type=kSigmoid}",
    "{hdim=30 name=RBMVis param=[{init={mean=0 std=0.1 type=kGaussian} name=w4},{init={type=kConstant value=0} name=b41 wd_scale=0}] srclayer=[Sigmoid3,RBMHid] type=kRBMVis}",
    "{gaussian=true hdim=30 name=RBMHid param=[{init={type=kConstant value=0} name=b42 wd_scale=0}] srclayer=RBMVis type=kRBMHid}",
  },
  ["rbm/autoencoder.conf"] = {
    "{checkpoint_path=[examples/rbm/autoencoder/checkpoint,examples/rbm/rbm1/checkpoint/step000006000.ckpt,examples/rbm/rbm2/checkpoint/step000006000.ckpt,examples/rbm/rbm3/checkpoint/step000006000.ckpt,examples/rbm/rbm4/checkpoint/step000006000.ckpt] cluster={nserver_groups=1 nworker_groups=1 workspace=examples/rbm/autoencoder/} disp_freq=100 name=auto-encoder test_freq=1000 test_steps=100 train_one_batch={alg=kBP} train_steps=12200 updater={learning_rate={base_lr=0.01 type=kFixed} type=kAdaGrad}}",
    "{batchsize=1000 exclude=kTest name=data path=examples/mnist/mnist_train_shard type=kShardData}",
    "{batchsize=1000 exclude=kTrain name=data path=examples/mnist/mnist_test_shard type=kShardData}",
    "{name=mnist norm_a=255 norm_b=0 srclayer=data type=kMnist}",
    "{name=label srclayer=data type=kLabel}",
    "{name=Inner1 num_output=1000 param=[{name=w1},{name=b12}] srclayer=mnist type=kInnerProduct}",
    "{name=Sigmoid1 srclayer=Inner1 type=kSigmoid}",
    "{name=Inner2 num_output=500 param=[{name=w2},{name=b22}] srclayer=Sigmoid1 type=kInnerProduct}",
    "{name=Sigmoid2 srclayer=Inner2 type=kSigmoid}",
    "{name=Inner3 num_output=250 param=[{name=w3},{name=b32}] srclayer=Sigmoid2 type=kInnerProduct}",
    "{name=Sigmoid3 srclayer=Inner3 type=kSigmoid}",
    "{name=Inner4 num_output=30 param=[{name=w4},{name=b42}] srclayer=Sigmoid3 type=kInnerProduct}",
    "{name=Inner5 num_output=250 param=[{name=w5 share_from=w4},{name=b41}] srclayer=Inner4 transpose=true type=kInnerProduct}",
    "{name=Sigmoid5 srclayer=Inner5 type=kSigmoid}",
    "{name=Inner6 num_output=500 param=[{name=w6 share_from=w3},{name=b31}] srclayer=Sigmoid5 transpose=true type=kInnerProduct}",
    "{name=Sigmoid6 srclayer=Inner6 type=kSigmoid}",
    "{name=Inner7 num_output=1000 param=[{name=w7 share_from=w2},{name=b21}] srclayer=Sigmoid6 transpose=true type=kInnerProduct}",
    "{name=Sigmoid7 srclayer=Inner7 type=kSigmoid}",
    "{name=Inner8 num_output=784 param=[{name=w8 share_from=w1},{name=b11}] srclayer=Sigmoid7 transpose=true type=kInnerProduct}",
    "{name=Sigmoid8 srclayer=Inner8 type=kSigmoid}",
    "{name=loss srclayer=[Sigmoid8,mnist] type=kEuclideanLoss}",
  },
}

local names = {}
for name in pairs(expected) do names[#names + 1] = name end
table.sort(names)
for _, name in ipairs(names) do
  local want = expected[name]
  local job = singa.import_conf(examples .. "/" .. name)
  local layers = job.neuralnet.layer
  job.neuralnet = nil
  tap.is(ser(job), want[1], name .. ": job fields, updater, schedule, cluster, checkpoint_path")
  tap.is(#layers, #want - 1, name .. ": " .. (#want - 1) .. " layers")
  local bad = {}
  for i = 1, math.max(#layers, #want - 1) do
    local got = layers[i] and ser(layers[i]) or "(none)"
    if got ~= want[i + 1] then bad[#bad + 1] = string.format("layer %d: got %s\n  want %s", i, got, want[i + 1]) end
  end
  tap.ok(#bad == 0, name .. ": each layer's type, fields, sources, phases and params", table.concat(bad, "\n"))
end

-- The converted script, run with a singa.train that keeps its job.
local function run_converted(text)
  local job
  local env = setmetatable({ require = function() return { train = function(j) job = j end } end }, { __index = _G })
  assert(load(text, "=converted", "t", env))()
  return job
end
for _, name in ipairs(names) do
  local path = examples .. "/" .. name
  local text = jobconf.to_lua(path)
  tap.is(jobconf.to_lua(path), text, name .. ": --convert gives the same bytes twice")
  tap.is(ser(run_converted(text)), ser(singa.import_conf(path)), name .. ": the converted script trains the imported job")
end

tap.done()

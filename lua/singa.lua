-- The `singa` module: the C engine (singa.core) plus the parts written in Lua.
local core = require "singa.core"

local singa = {
  version = core.version,
  train = core.train,           -- singa.train(job) -> { steps, seconds, train, test, validation }
  gradcheck_net = core.gradcheck_net, -- singa.gradcheck_net(neuralnet [, seed [, workers]]) -> max_rel_err, worst, checked
  gradcheck = core.gradcheck,   -- singa.gradcheck(layer, inputs [, seed [, destinations]]) -> max_rel_err, worst, checked
  forward = core.forward,       -- singa.forward(layer, inputs [, destinations]) -> { out1, ..., metrics = {...} }
  layer_types = core.layer_types,
  test = core.test,             -- singa.test(job) -> { test = { loss, accuracy }, step, checkpoint }
  predict = core.predict,       -- singa.predict(job, input [, layer]) -> probabilities per input row
  export_onnx = core.export_onnx, -- singa.export_onnx(job, path [, checkpoint]) -> { path, input, output, nodes, bytes, checkpoint, step }
  load = core.load,             -- singa.load(path) -> { step, checkpoint, topology, params = { name = tensor }, updater = { [param] = { slot = tensor } } }
  read_idx = core.read_idx,     -- singa.read_idx(file [, { norm_a, norm_b }]) -> a tensor shaped like the file
  read_csv = core.read_csv,     -- singa.read_csv(file [, { separator, header, label }]) -> features, labels
  tensor = core.tensor,         -- singa.tensor(d1, ...) zeros, or singa.tensor(list of numbers or rows)
  rank = core.rank,             -- singa.rank() -> rank, size of this process in the job (0, 1 alone)
  stats = core.stats,           -- singa.stats() -> { rank, dropped, traffic = { {type, peer, sent, ...}, ... }, workers = { {group, id, work, straggler, ...}, ... } }
  plot = core.plot,             -- singa.plot(metrics_file, out_svg): the loss and accuracy curves as SVG
  cluster = require "singa.cluster", -- topology presets: sandblaster, allreduce, downpour, hogwild
  load_plugin = core.load_plugin, -- singa.load_plugin(path) -> { name, version, description, path, abi, types }
  plugins = core.plugins,       -- singa.plugins() -> the loaded plugins, in load order
  plugin_abi = core.plugin_abi, -- "major.minor" of the plugin ABI (singa/plugin.h)
  graph = core.graph,           -- singa.graph(job [, phase]) -> { workers, layers, nodes }: the net partitioned over a group
  summary = core.summary,       -- singa.summary(job) -> text, { layers = { {name, type, shape, params} }, params, trained }
  params = core.params,
  -- singa.import_conf(path [, { version = "v0.1" | "v0.2" | "v0.3" }]) -> the job of a SINGA job.conf
  import_conf = function(path, opts) return require("singa.jobconf").import(path, opts) end,         -- singa.params() -> { name = tensor }: the running job's params, else the last job's
  -- Steering the running job (the workbench's console): effective before the job's next step.
  pause = core.pause, resume = core.resume, checkpoint = core.checkpoint,
  lr_scale = core.lr_scale,     -- singa.lr_scale([x]) -> x: lr = schedule(step) * x
}

return singa

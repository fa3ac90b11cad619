-- The `singa` module: the C engine (singa.core) plus the parts written in Lua.
local core = require "singa.core"

local singa = {
  version = core.version,
  train = core.train,           -- singa.train(job) -> { steps, seconds, train, test, validation }
  gradcheck = core.gradcheck,   -- singa.gradcheck(layer, inputs [, seed [, destinations]]) -> max_rel_err, worst, checked
  forward = core.forward,       -- singa.forward(layer, inputs [, destinations]) -> { out1, ..., metrics = {...} }
  layer_types = core.layer_types,
}

return singa

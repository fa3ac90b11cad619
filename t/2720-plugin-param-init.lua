-- A param's default init: kConstant without a value is 1, as the init table documents; a layer
-- may give its own default value (singa_layer_param_value); the job's init table overrides
-- both; a plugin built for ABI 1.2 still gets the 0 it was built with; built-in biases stay 0.
-- The plugins are t/plugins/gain.c, built twice.
local singa = require "singa"
local tap = require "tap"

local build = assert(os.getenv("SINGA_TUI"), "SINGA_TUI is not set"):match("^(.*)/[^/]*$") or "."
local libs = build .. "/t/plugins/.libs/"
singa.load_plugin(libs .. "gain.so")
local old = singa.load_plugin(libs .. "gain_old.so")
tap.is(old.abi, "1.2", "gain_old.so is a plugin of ABI 1.2")

local x = { shape = { 2, 3 }, data = { 1, 2, 3, -4, 5, 6 } }
-- The gain forward gives: output / input of the first feature.
local function gain(layer)
  layer.name = "l"
  local out = singa.forward(layer, { x })[1]
  return out[1]
end

tap.is(gain({ type = "kGain" }), 1, "singa_layer_param(..., \"kConstant\") without an init table gives 1")
tap.is(gain({ type = "kGainHalf" }), 0.5, "singa_layer_param_value gives the layer's default value")
tap.is(gain({ type = "kGainHalf", param = { { init = { type = "kConstant", value = 3 } } } }), 3,
       "the job's init value overrides the layer's default")
tap.is(gain({ type = "kGainHalf", param = { { init = { type = "kConstant" } } } }), 1,
       "an init table without value gives the documented 1, not the layer's default")
tap.is(gain({ type = "kGain", param = { { init = { value = 2 } } } }), 2,
       "an init table with a value alone keeps the layer's init type")
tap.is(gain({ type = "kGainHalf", param = { { lr_scale = 2 } } }), 0.5,
       "a param table without init keeps the layer's default value")
tap.is(gain({ type = "kGainOld" }), 0, "a plugin built for ABI 1.2 still gets 0 from kConstant without a table")
tap.is(gain({ type = "kGainOld", param = { { init = { type = "kConstant" } } } }), 1,
       "and 1 with an init table, as before")

-- Built-in biases and kBM's params keep their defaults (biases 0, kBM's scale 1).
local zero_w = { { init = { type = "kConstant", value = 0 } } }
local ip = singa.forward({ name = "ip", type = "kInnerProduct", num_output = 4, param = zero_w }, { x })[1]
tap.ok(ip[1] == 0 and ip[8] == 0, "kInnerProduct's bias starts at 0", table.concat(ip, " "))
local conv = singa.forward({ name = "c", type = "kConvolution", num_filters = 2, kernel = 1, param = zero_w },
                           { { shape = { 1, 1, 2, 2 }, data = { 1, 2, 3, 4 } } })[1]
tap.ok(conv[1] == 0 and conv[8] == 0, "kConvolution's bias starts at 0", table.concat(conv, " "))
local bm = singa.forward({ name = "bm", type = "kBM" }, { { shape = { 2, 1 }, data = { 1, 3 } } })[1]
tap.ok(math.abs(bm[1] + 1) < 1e-3 and math.abs(bm[2] - 1) < 1e-3, "kBM starts with scale 1 and bias 0",
       table.concat(bm, " "))
tap.done()

-- Loading plugins explicitly (singa.load_plugin, a job's `plugins`): each way a plugin can be
-- wrong gives its message naming the file, and a failed load leaves the registry as it was.
-- The broken plugins are built for the purpose from t/plugins/broken.c.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"

local build = assert(os.getenv("SINGA_TUI"), "SINGA_TUI is not set"):match("^(.*)/[^/]*$") or "."
local libs = build .. "/t/plugins/.libs/"
local dir = td.tmpdir("3400-plugin-errors")

local function count_types() return #singa.layer_types() end
local ntypes, nplugins = count_types(), #singa.plugins()

local function fails(file, want, name)
  local path = file:find("/", 1, true) and file or libs .. file
  local w = type(want) == "table" and want or { want }
  table.insert(w, 1, "plugin '" .. path .. "': ")
  tap.raises(w, name, singa.load_plugin, path)
end

fails(dir .. "/no-such.so", "not found", "a missing file")
tap.raises("plugin 'libc.so.6': not found", "a name without a slash is a file here, not a library to search for",
           singa.load_plugin, "libc.so.6")
td.write(dir .. "/text.so", "this is not a shared object, just some text that is long enough\n")
fails(dir .. "/text.so", { "cannot load it", "invalid ELF header" }, "a file that is not ELF: dlopen's reason")
td.write(dir .. "/empty.so", "")
fails(dir .. "/empty.so", "cannot load it", "an empty file")
fails(dir, "not a regular file", "a folder")
fails("no_entry.so", "no entry symbol 'singa_plugin_entry'", "a shared object without the entry symbol")
fails("abi_major.so", { "built for plugin ABI 2.0", "this libsinga has ABI 1.4", "major versions must be equal" },
      "an ABI of another major version: both versions shown")
fails("abi_minor.so", { "built for plugin ABI 1.5", "newer than this libsinga's ABI 1.4" },
      "an ABI of a newer minor version: both versions shown")
fails("dup_core.so", "layer type 'kReLU' is already registered: it is a built-in type",
      "a type named like a built-in one (even when init ignores the failure)")
fails("dup_plugin.so", { "layer type 'kSwish' is already registered by plugin 'swish'", "swish.so" },
      "a type named like another plugin's, naming that plugin and its file")
fails("init_fails.so", "its registration failed: no licence for this layer on this machine",
      "init returning an error, with its message")
fails("bad_type.so", "layer type 'kDouble': min_src 2 and max_src 1 make no range", "a malformed layer type")
fails("no_types.so", "it registers no layer types", "a plugin that registers nothing")

tap.is(count_types(), ntypes, "failed loads leave the layer types as they were (init_fails's kDouble was taken back)")
tap.is(#singa.plugins(), nplugins, "and the list of plugins")

-- A job's `plugins`: loaded before the job; one that fails stops it before training.
local images, labels = td.idx(dir, 12, 2, 2, 3)
local function job(plugins, extra_layer)
  local layers = {
    { name = "data", type = "kIDXData", batchsize = 4, images = images, labels = labels },
    { name = "img", type = "kMnist", srclayer = "data", norm_a = 255 },
    { name = "label", type = "kLabel", srclayer = "data" },
    { name = "fc", type = "kInnerProduct", srclayer = "img", num_output = 2 },
    { name = "loss", type = "kSoftmaxLoss", srclayer = { "fc", "label" } },
  }
  if extra_layer then
    table.insert(layers, 5, extra_layer)
    layers[6].srclayer = { extra_layer.name, "label" }
  end
  return { name = "job-plugins", train_steps = 4, test_steps = 1, plugins = plugins, neuralnet = { layer = layers },
           updater = { learning_rate = { base_lr = 0.1 } }, checkpoint_path = dir .. "/ckpt", overwrite = true }
end
local ran = false
local wrapped = job({ dir .. "/missing.so" })
wrapped.updater.learning_rate = function(step) ran = true; return 0.1 end
tap.raises("plugin '" .. dir .. "/missing.so': not found", "a job naming a missing plugin stops", singa.train, wrapped)
tap.ok(not ran, "before training starts")
tap.raises("no entry symbol", "a job naming a broken plugin stops", singa.train, job(libs .. "no_entry.so"))
tap.raises("field 'plugins'", "a `plugins` field of the wrong type is refused", singa.train, job(5))
local double = { name = "double", type = "kDouble", srclayer = "fc" }
tap.raises("unknown layer type 'kDouble'", "a plugin type is unknown until its plugin is loaded", singa.train, job(nil, double))
local r = singa.train(job({ libs .. "double.so" }, double))
tap.is(r.steps, 4, "a job whose `plugins` names a plugin uses its layer type")
local names = {}
for _, p in ipairs(singa.plugins()) do names[#names + 1] = p.name end
tap.ok(table.concat(names, " "):find("double", 1, true), "the job's plugin stays loaded", table.concat(names, " "))
tap.is(#singa.plugins(), nplugins + 1, "one plugin more")
tap.is(singa.train(job(libs .. "double.so", double)).steps, 4, "naming it again (one path, not a list) is fine")
tap.is(singa.test(job(libs .. "double.so", double)).step, 4, "singa.test loads a job's plugins too")

-- One file under two names is one plugin; another file with the same plugin name is refused.
os.execute(string.format("ln -sf '%s' '%s/link.so' && cp '%s' '%s/copy.so'", libs .. "double.so", dir, libs .. "double.so", dir))
tap.is(singa.load_plugin(dir .. "/link.so").path, libs .. "double.so", "a symbolic link to a loaded plugin gives the loaded one")
fails(dir .. "/copy.so", "a plugin named 'double' is already loaded, from '" .. libs .. "double.so'",
      "a second file with a loaded plugin's name")
tap.is(#singa.plugins(), nplugins + 1, "still one plugin more")

tap.done()

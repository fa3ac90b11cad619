-- singa.pause, resume, checkpoint and lr_scale steer a job only in the workbench; headless
-- (singa-tui -e) they say so instead of doing nothing.
local tap = require "tap"
local singa = require "singa"

for _, name in ipairs { "pause", "resume", "checkpoint", "lr_scale" } do
  tap.ok(type(singa[name]) == "function", "singa." .. name .. " exists")
  tap.raises({ "singa." .. name, "only in the workbench" }, "headless, singa." .. name .. " raises a clear error",
             singa[name])
end

tap.done()

-- What a demo prints last: where its trained model is and how to use it (docs/05-checkpoints.md,
-- "Trained models: test and predict").
local M = {}

-- A word of a shell command line, quoted when it needs to be.
local function quote(s)
  if s:match("^[%w%%+,./:=@_-]+$") then return s end
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

-- model(job, r, predict [, test]): `job` as given to singa.train, `r` what it returned, `predict`
-- what singa.predict gives for this model.  `test = false` when `singa-tui --test` does not
-- apply (it tests the script's first singa.train, with the job's test_steps).
function M.model(job, r, predict, test)
  local dir = job.checkpoint_path
  dir = type(dir) == "table" and dir[1] or dir
  print(string.format("model: %s/step%09d.ckpt (the newest checkpoint in %s/)", dir, r.steps, dir))
  if test ~= false then
    local cmd = { "singa-tui --test -e", quote(arg and arg[0] or "JOB.lua") }
    for _, a in ipairs(arg or {}) do cmd[#cmd + 1] = quote(a) end
    print("  test it:  " .. table.concat(cmd, " "))
  end
  print("  predict:  " .. predict)
end

return M

-- singa.plot(metrics_file, out.svg): a metrics file (JSON lines as --metrics writes them, or CSV)
-- becomes an SVG of the loss and accuracy curves that parses as XML, with one <path> per series
-- (worker group x phase x metric) and labelled axes; a bad file is refused naming its line; the
-- output is written whole or not at all.
local singa = require "singa"
local tap = require "tap"
local td = require "testdata"

local dir = td.tmpdir("6320-plot-svg")
local function write(name, text)
  local f = assert(io.open(dir .. "/" .. name, "w"))
  f:write(text)
  f:close()
  return dir .. "/" .. name
end

-- The SVG's paths as "group phase metric" lines, and its texts, by Python's XML parser.
local function parse(svg)
  local p = io.popen("python3 -c '\n" .. [[
import sys, xml.etree.ElementTree as E
ns = "{http://www.w3.org/2000/svg}"
root = E.parse(sys.argv[1]).getroot()
for p in root.iter(ns + "path"):
    print("path", p.get("data-group"), p.get("data-phase"), p.get("data-metric"), len(p.get("d").split("M")) - 1)
for t in root.iter(ns + "text"):
    print("text", t.text)
]] .. "' " .. svg .. " 2>&1")
  local out = p:read("a")
  p:close()
  return out
end

local jsonl = write("run.jsonl", table.concat({
  '{"step": 10, "phase": "train", "group": 0, "loss": 2.1, "accuracy": 0.2, "images_per_sec": 900}',
  '{"step": 10, "phase": "train", "group": 1, "loss": 2.2, "accuracy": 0.1, "images_per_sec": 900}',
  '{"step": 10, "workers": [{"rank": 0, "host": "h", "group": 0, "id": 0, "compute": 0.001}]}',
  '{"step": 20, "phase": "train", "group": 0, "loss": 1.5, "accuracy": 0.5, "images_per_sec": 900}',
  '{"step": 20, "phase": "train", "group": 1, "loss": null, "accuracy": null, "images_per_sec": 900}',
  '{"step": 30, "phase": "train", "group": 1, "loss": 1.2, "accuracy": 0.6, "images_per_sec": 900}',
  '{"step": 20, "phase": "test", "group": 0, "loss": 1.6, "accuracy": 0.45, "images_per_sec": 0}',
  '{"step": 20, "phase": "validation", "group": 0, "loss": 1.7, "accuracy": 0.4, "images_per_sec": 0}',
  '{"step": 30, "phase": "test", "group": 0, "loss": 1.3, "accuracy": 0.55, "images_per_sec": 0}',
}, "\n") .. "\n")
singa.plot(jsonl, dir .. "/run.svg")
local out = parse(dir .. "/run.svg")
local paths = select(2, out:gsub("\npath ", "\n")) + (out:match("^path ") and 1 or 0)
tap.is(paths, 8, "JSON lines: one path per series (train g0, g1, test g0, validation g0; loss and accuracy)")
tap.ok(out:find("path 0 test loss 2", 1, true) and out:find("path 1 train accuracy 2", 1, true) and
       out:find("path 0 validation accuracy 1", 1, true), "test marks per result; group 1's line breaks at its gap")
tap.ok(out:find("text step\n", 1, true) and out:find("text loss\n", 1, true) and out:find("text accuracy\n", 1, true) and
       out:find("text run.jsonl\n", 1, true), "axes labelled (step, loss, accuracy), the file named")
local left = io.popen("ls " .. dir .. " | grep -c tmp"):read("l")
tap.is(left, "0", "no temporary file left")

local csv = write("run.csv", "step,phase,group,loss,accuracy,steps\n5,train,0,1.5,,5\n10,train,0,1.2,,5\n10,test,0,1.3,,1\n")
singa.plot(csv, dir .. "/csv.svg")
out = parse(dir .. "/csv.svg")
tap.ok(out:find("path 0 train loss 1", 1, true) and out:find("path 0 test loss 1", 1, true) and
       not out:find("accuracy", 1, true), "CSV without accuracy: the loss's two paths, no accuracy panel")

local function refused(name, text, pattern, what)
  local path = text and write(name, text) or dir .. "/" .. name
  local ok, err = pcall(singa.plot, path, dir .. "/bad.svg")
  tap.ok(not ok and tostring(err):find(pattern), what .. ": " .. tostring(err))
end
os.remove(dir .. "/bad.svg")
refused("bad.jsonl", '{"step": 1, "phase": "train", "group": 0, "loss": 1}\n{"step": 2, "phase": "train", "group": 0, "loss": "x"}\n',
        "bad%.jsonl:2: \"loss\" is not a number", "a bad value is refused naming file and line")
refused("bad2.jsonl", '{"step": 1, "phase": "train", "group": 0, "loss": 1}\n{"step": 2, "phase": "dev", "group": 0}\n',
        "bad2%.jsonl:2: \"phase\"", "an unknown phase")
refused("bad.csv", "step,phase,group,loss,accuracy\n1,train,0,1,\n2,train,zero,1,\n", "bad%.csv:3: the group", "a bad CSV row")
refused("garbage.txt", "hello\n", "garbage%.txt:1: neither", "a file that is neither")
refused("empty.jsonl", "", "empty%.jsonl: no loss or accuracy records", "an empty file")
refused("missing.jsonl", nil, "cannot read .*missing%.jsonl", "a missing file")
tap.ok(not io.open(dir .. "/bad.svg"), "nothing written for a bad file")
local ok, err = pcall(singa.plot, jsonl, dir .. "/no/such/dir/out.svg")
tap.ok(not ok and tostring(err):find("cannot write .*out%.svg"), "an unwritable output is refused: " .. tostring(err))
tap.done()

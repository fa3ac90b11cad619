-- The README and the manual it starts (docs/NN-*.md, read in order) keep up with the code:
-- every built-in layer type has a row in the layer table, every cluster preset a line on when to
-- pick it and what `procs` it needs; the README lists the pages in order, and every link of the
-- README and the pages resolves (a file that exists, an anchor that is one of its headings).
local singa = require "singa"
local tap = require "tap"

local top = os.getenv("top_srcdir")
local function slurp(path)
  local f = io.open(path)
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local readme = assert(slurp(top .. "/README.md"))
local pages = {}
local ls = assert(io.popen("cd '" .. top .. "/docs' && ls [0-9][0-9]-*.md"))
for name in ls:lines() do pages[#pages + 1] = name end
ls:close()
local texts = { readme }
for _, name in ipairs(pages) do texts[#texts + 1] = assert(slurp(top .. "/docs/" .. name)) end
local manual = table.concat(texts, "\n")

local from_plugin = {}
for _, p in ipairs(singa.plugins()) do
  for _, t in ipairs(p.types) do from_plugin[t] = true end
end
-- Partitioning inserts these itself; the manual says so where it describes partitioning.
local inserted = { kBridgeSrc = true, kBridgeDst = true }
local missing, builtin = {}, 0
for _, t in ipairs(singa.layer_types()) do
  if not from_plugin[t] then
    builtin = builtin + 1
    local row = manual:find("\n| `" .. t .. "` |", 1, true)
    if not row and not (inserted[t] and manual:find("`" .. t .. "`", 1, true)) then missing[#missing + 1] = t end
  end
end
tap.ok(builtin >= 30 and #missing == 0,
       string.format("the layer table has a row for each of the %d built-in layer types", builtin),
       "missing: " .. table.concat(missing, ", "))

local presets, without = {}, {}
for name, fn in pairs(singa.cluster) do
  if type(fn) == "function" then
    presets[#presets + 1] = name
    local line = manual:match("\n%- `" .. name .. "{[^}]*}`:(.-)\n%-") or manual:match("\n%- `" .. name .. "{[^}]*}`:(.-)\n\n")
    if not (line and line:find("`procs` is", 1, true)) then without[#without + 1] = name end
  end
end
table.sort(presets)
tap.ok(#presets >= 4 and #without == 0,
       string.format("each cluster preset (%s) has a line saying when to pick it and its `procs`",
                     table.concat(presets, ", ")), "without one: " .. table.concat(without, ", "))

tap.ok(readme:find("Run the whole test suite %(about %d+ minutes on 2 cores%)") ~= nil,
       "the README says how long the test suite takes")

-- The README's "Read on" names every page, in the order of their numbers.
local listed = {}
local read_on = readme:match("\n## Read on\n(.-)\n## ") or ""
for page in read_on:gmatch("%]%(docs/(%d%d%-[^)#]+%.md)%)") do listed[#listed + 1] = page end
tap.ok(#pages >= 7 and table.concat(listed, " ") == table.concat(pages, " "),
       string.format("the README's Read on lists the %d pages of docs/ in order", #pages),
       "pages: " .. table.concat(pages, " ") .. "\nlisted: " .. table.concat(listed, " "))

-- GitHub's anchors: the heading lower-cased, without punctuation, spaces as hyphens; a repeated
-- one gets -1, -2, ...
local anchors = {}
local function anchors_of(path)
  if anchors[path] then return anchors[path] end
  local set, seen, fence = {}, {}, false
  for line in ((slurp(path) or "") .. "\n"):gmatch("(.-)\n") do
    if line:match("^```") then fence = not fence end
    local h = not fence and line:match("^#+ (.*)")
    if h then
      local a = h:lower():gsub("[^%w%s_%-]", ""):gsub("%s", "-")
      local n = seen[a]
      seen[a] = (n or -1) + 1
      set[n and (a .. "-" .. (n + 1)) or a] = true
    end
  end
  anchors[path] = set
  return set
end

local function dirname(path) return path:match("^(.*)/") or "." end

-- Links outside code: [text](target), target a path relative to the file, #anchor, or both.
local broken, nlinks = {}, 0
local files = { "README.md" }
for _, name in ipairs(pages) do files[#files + 1] = "docs/" .. name end
for _, file in ipairs(files) do
  local text = slurp(top .. "/" .. file):gsub("\n```.-\n```", "\n"):gsub("``.-``", ""):gsub("`[^`\n]*`", "")
  for target in text:gmatch("%]%(([^)%s]+)%)") do
    if not target:match("^%a[%w+.-]*:") then
      nlinks = nlinks + 1
      local path, anchor = target:match("^([^#]*)#?(.*)$")
      local full = path == "" and top .. "/" .. file or top .. "/" .. dirname(file) .. "/" .. path
      local ok = slurp(full) ~= nil
      if ok and anchor ~= "" then ok = anchors_of(full)[anchor] == true end
      if not ok then broken[#broken + 1] = file .. ": " .. target end
    end
  end
end
tap.ok(nlinks >= 50 and #broken == 0,
       string.format("every one of the %d links of the README and docs/NN-*.md resolves", nlinks),
       table.concat(broken, "\n"))

-- The man page points to the pages by their names.
local man = (slurp(top .. "/docs/singa-tui.1.in") or ""):gsub("\\%-", "-")
local named, gone = 0, {}
for page in man:gmatch("docs/(%d%d%-[%w%-]+%.md)") do
  named = named + 1
  if not slurp(top .. "/docs/" .. page) then gone[#gone + 1] = page end
end
tap.ok(named >= 2 and #gone == 0, string.format("the man page names %d pages of docs/, and they exist", named),
       "missing: " .. table.concat(gone, ", "))
tap.done()

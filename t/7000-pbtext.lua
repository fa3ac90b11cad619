-- The protobuf text-format reader behind singa.import_conf (src/core/pbtext.c, as
-- singa.core.read_pbtext): every form of the syntax, and every error with file:line:column.
local core = require "singa.core"
local tap = require "tap"
local td = require "testdata"

local dir = td.tmpdir("7000-pbtext")
local n = 0
local function parse(text)
  n = n + 1
  local path = string.format("%s/t%d.conf", dir, n)
  td.write(path, text)
  return core.read_pbtext(path), path
end

-- name=kind:value for scalars, name{...} for messages: the whole tree in one line.
local function show(list)
  local out = {}
  for _, f in ipairs(list) do
    if f.message then
      out[#out + 1] = f.name .. "{" .. show(f.message) .. "}"
    else
      local v = f.value
      if math.type(v) == "float" and v == math.floor(v) and v < 2^53 and v > -2^53 then v = math.tointeger(v) end
      out[#out + 1] = string.format("%s=%s:%s", f.name, f.kind, tostring(v))
    end
  end
  return table.concat(out, " ")
end

local function form(text, want, name) tap.is(show(parse(text)), want, name) end

-- Messages, separators and spacing.
form('a: 1 b { c: "x" } d: { e: 2 } f < g: 3 > h: < i: 4 >',
     "a=int:1 b{c=string:x} d{e=int:2} f{g=int:3} h{i=int:4}",
     "nested messages with and without ':', in braces and angle brackets")
form("a:1;b:2,c:3\n\n\t d : 4 ;", "a=int:1 b=int:2 c=int:3 d=int:4", "';' and ',' separators, any spacing")
form("a:1 # one\n# a whole line\nb { # open\n c: 2 # inner\n}\n", "a=int:1 b{c=int:2}", "# comments anywhere")
form("", "", "an empty file is an empty message")
form("layer { name: 'a' } layer { name: 'b' } x: [1, 2, 3] y: [] z: [{ k: 1 }, { k: 2 }]",
     "layer{name=string:a} layer{name=string:b} x=int:1 x=int:2 x=int:3 z{k=int:1} z{k=int:2}",
     "repeated fields: written again, or as a list (of values or messages)")
form("a: kTrain b: MAX c: true d: f e: -inf f: nan", "a=ident:kTrain b=ident:MAX c=ident:true d=ident:f e=ident:-inf f=ident:nan",
     "enums and other identifiers stay identifiers (the schema reads them)")

-- Strings.
form([[a: "double" b: 'single' c: "it's" d: 'say "hi"']], [[a=string:double b=string:single c=string:it's d=string:say "hi"]],
     "both quote kinds")
local t = parse([[a: "\n\t\\\"\'\101\x42\x4a\7\r\?"]])
tap.is(t[1].value, "\n\t\\\"'AB\x4a\7\r?", "escapes: \\n \\t \\\\ \\\" \\' octal \\101, hex \\x42 \\x4a, \\7, \\r, \\?")
form([[a: "one" 'two'
  "three" b: 1]], "a=string:onetwothree b=int:1", "adjacent strings join, across lines")
form([[a: ""]], "a=string:", "an empty string")

-- Numbers.
form("a: 42 b: -7 c: 0x1F d: 0X10 e: 017 f: 0 g: -0x10", "a=int:42 b=int:-7 c=int:31 d=int:16 e=int:15 f=int:0 g=int:-16",
     "integers: decimal, negative, hex and octal")
t = parse("a: 1.5 b: -2.5e-3 c: 1e3 d: .5 e: 3. f: 1.5f g: 2F h: 1E+2 i: 0.0001")
tap.is(show(t), "a=float:1.5 b=float:-0.0025 c=float:1000 d=float:0.5 e=float:3 f=float:1.5 g=float:2 h=float:100 i=float:0.0001",
       "floats: point, exponent, leading or trailing point, f suffix")
tap.is(parse("a: 1")[1].kind, "int", "an integer spelling is kind int (a float field takes it, an int field needs it)")

-- Positions.
t = parse("a: 1\n  b {\n    c: 2\n  }\n")
tap.ok(t[1].line == 1 and t[1].column == 1 and t[2].line == 2 and t[2].column == 3 and
       t[2].message[1].line == 3 and t[2].message[1].column == 5, "every field has its line and column")

-- Errors: file, line, column and what was expected.
local function bad(text, want, name)
  n = n + 1
  local path = string.format("%s/t%d.conf", dir, n)
  td.write(path, text)
  local w = type(want) == "table" and want or { want }
  for i, s in ipairs(w) do w[i] = s:gsub("FILE", path) end
  tap.raises(w, name, core.read_pbtext, path)
end
bad("a: 1\nb {\n  c: 2\n", "FILE:4:1: expected a field name or '}' closing the message, got the end of the file",
    "an unclosed message")
bad("a: 1\n}\n", "FILE:2:1: expected a field name, got '}'", "a stray '}'")
bad("a 1", "FILE:1:3: expected ':' or '{' after the field name, got the number '1'", "a value without ':'")
bad("a: }", "FILE:1:4: expected a value (a number, a string or an identifier), got '}'", "a missing value")
bad('a: "abc\n', [[FILE:1:4: unterminated string (it needs its closing " on the same line)]], "an unterminated string")
bad([[a: 'x\q']], "FILE:1:6: unknown escape '\\q' in a string", "an unknown escape")
bad([[a: "\xZZ"]], "FILE:1:5: \\x needs a hexadecimal digit", "\\x without digits")
bad([[a: "\777"]], "octal escape above \\377", "an octal escape out of range")
bad("a: 09", "FILE:1:4: '09' is not an octal number (a leading 0 means octal)", "a bad octal number")
bad("a: 0x", "FILE:1:4: a hexadecimal number needs digits after 0x", "0x without digits")
bad("a: 1e", "FILE:1:4: an exponent needs digits", "an exponent without digits")
bad("a: 12abc", "FILE:1:4: malformed number '12a'", "letters after a number")
bad("a: 99999999999999999999999", "FILE:1:4: integer '99999999999999999999999' is too large", "an integer beyond 64 bits")
bad("a: - }", "FILE:1:6: expected a number or an identifier after '-', got '}'", "'-' before nothing")
bad("a: [1, 2", "FILE:1:9: expected ',' or ']' in the list of values, got the end of the file", "an unclosed list")
bad("[ext.field]: 1", "FILE:1:1: extension fields ([name]) are not part of SINGA's job.conf", "extensions")
bad("a: 1\n  @", "FILE:2:3: unexpected character '@'", "a stray character")
bad(string.rep("a {", 70) .. string.rep("}", 70), "messages nested more than 64 deep", "nesting too deep")
tap.raises("cannot open '" .. dir .. "/none.conf'", "a missing file", core.read_pbtext, dir .. "/none.conf")

tap.done()

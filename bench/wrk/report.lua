-- wrk script for the Sparkpath benchmark.
--
-- Usage: wrk -t2 -c8 -d3s -s report.lua http://127.0.0.1:PORT -- <requests-file> [rotate]
--
-- <requests-file> holds one request per line: METHOD<TAB>PATH<TAB>HEADERS-JSONISH<TAB>BODY, where
-- headers are "Name: value" pairs separated by "\u001f". Each thread walks the lines round-robin
-- from its own offset, so all connections of a run spread over the same request mix.
--
-- consume (POST /auth/logout): every line is a single-use request; a thread that has used all of
-- its lines stops (the run is then shorter than -d, and requests/s uses the real duration).
--
-- rotate (optional, used for POST /auth/refresh): every line is one single-use refresh token.
-- Each response carries the rotated token, which goes back into the thread's pool, so a token is
-- never presented twice (a reuse would be detected as an attack and revoke the session).
--
-- done() prints one JSON line prefixed with "WRK_JSON " with latency percentiles (microseconds),
-- requests/s, and errors (non-2xx counted in response(), plus wrk's socket errors).

local threads = {}
local counter = 1

function setup(thread)
  thread:set("id", counter)
  table.insert(threads, thread)
  counter = counter + 1
end

local lines = {}
local position = 1
local pool = {}
local rotate = false
local consume = false
local consumed = {}
local non2xx = 0
local statuses = {}
local template = nil

local function split(text, separator)
  local parts = {}
  local start = 1
  while true do
    local i, j = string.find(text, separator, start, true)
    if not i then
      table.insert(parts, string.sub(text, start))
      return parts
    end
    table.insert(parts, string.sub(text, start, i - 1))
    start = j + 1
  end
end

local function parse(line)
  local fields = split(line, "\t")
  local headers = {}
  if fields[3] and fields[3] ~= "" then
    for _, pair in ipairs(split(fields[3], "\031")) do
      local name, value = string.match(pair, "^([^:]+):%s*(.*)$")
      if name then headers[name] = value end
    end
  end
  local body = fields[4]
  if body == "" then body = nil end
  return { method = fields[1], path = fields[2], headers = headers, body = body }
end

function init(args)
  local file = assert(io.open(args[1], "r"))
  for line in file:lines() do
    if line ~= "" then table.insert(lines, line) end
  end
  file:close()
  rotate = args[2] == "rotate"
  consume = args[2] == "consume"
  local threadCount = tonumber(args[3] or "1")
  local threadId = id or 1
  if rotate then
    -- Refresh tokens: thread k owns lines k, k+T, k+2T... so no two threads share a token.
    template = parse(lines[1])
    for i = threadId, #lines, threadCount do
      table.insert(pool, parse(lines[i]).body)
    end
  elseif consume then
    for i = threadId, #lines, threadCount do
      table.insert(consumed, parse(lines[i]))
    end
  else
    for i, line in ipairs(lines) do lines[i] = parse(line) end
    position = ((threadId - 1) * 7) % #lines + 1
  end
end

function request()
  if consume then
    local r = table.remove(consumed, 1)
    if r == nil then
      wrk.thread:stop()
      return wrk.format("GET", "/metadata/health")
    end
    return wrk.format(r.method, r.path, r.headers, r.body)
  end
  if rotate then
    local body = table.remove(pool, 1)
    if body == nil then
      -- Pool empty: every token is in flight. Should not happen with pool >= connections.
      body = '{"refresh_token":"pool-exhausted"}'
    end
    return wrk.format(template.method, template.path, template.headers, body)
  end
  local r = lines[position]
  position = position + 1
  if position > #lines then position = 1 end
  return wrk.format(r.method, r.path, r.headers, r.body)
end

function response(status, headers, body)
  if status < 200 or status > 299 then
    non2xx = non2xx + 1
    statuses[status] = (statuses[status] or 0) + 1
  end
  if rotate then
    local token = body and string.match(body, '"refresh_token"%s*:%s*"([^"]+)"')
    if token then table.insert(pool, '{"refresh_token":"' .. token .. '"}') end
  end
end

function done(summary, latency, requests)
  local non2xxTotal = 0
  local statusCounts = {}
  for _, thread in ipairs(threads) do
    non2xxTotal = non2xxTotal + (thread:get("non2xx") or 0)
  end
  local seconds = summary.duration / 1000000
  local parts = {
    string.format('"requests":%d', summary.requests),
    string.format('"duration_s":%.3f', seconds),
    string.format('"rps":%.2f', summary.requests / seconds),
    string.format('"bytes":%d', summary.bytes),
    string.format('"p50_ms":%.3f', latency:percentile(50) / 1000),
    string.format('"p95_ms":%.3f', latency:percentile(95) / 1000),
    string.format('"p99_ms":%.3f', latency:percentile(99) / 1000),
    string.format('"max_ms":%.3f', latency.max / 1000),
    string.format('"mean_ms":%.3f', latency.mean / 1000),
    string.format('"non2xx":%d', non2xxTotal),
    string.format('"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}',
      summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.status, summary.errors.timeout),
  }
  io.write("WRK_JSON {" .. table.concat(parts, ",") .. "}\n")
end

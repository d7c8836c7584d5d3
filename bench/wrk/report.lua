-- wrk script for the Sparkpath benchmark.
--
-- Usage: wrk -t2 -c8 -d3s -s report.lua http://127.0.0.1:PORT -- <requests-file> <mode> <threads> [run-id] [acked-file]
--
-- <requests-file> holds one request per line: METHOD<TAB>PATH<TAB>HEADERS-JSONISH<TAB>BODY, where
-- headers are "Name: value" pairs separated by "\u001f".
--
-- plain: each thread walks the lines round-robin from its own offset (the hot runs).
--
-- zipf: each request draws a line by Zipf's law (s = 1) over the line numbers: line k with
-- probability (1/k) / H(n), the same distribution pgbench draws from bench_mix. Each thread has
-- its own fixed seed, so a run is repeatable.
--
-- write: zipf, and every request is a new write: "BENCH_KEY" in its body becomes a key no other
-- request of the run uses (<run-id>-<thread>-<counter>), and the "id" of every 2xx answer is
-- kept; done() writes them, one per line, to <acked-file>, for the bench to find in the database.
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
-- Globals, not locals: done() reads them from each thread with thread:get().
non2xx = 0
local statuses = {}
local template = nil
local zipf = false
local write = false
local cumulative = {}
local runId = "run"
local counter = 0
acked = {}
ackedFile = nil

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
  write = args[2] == "write"
  zipf = args[2] == "zipf" or write
  local threadCount = tonumber(args[3] or "1")
  local threadId = id or 1
  runId = args[4] or "run"
  ackedFile = args[5]
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
    if zipf then
      local harmonic = 0
      for k = 1, #lines do harmonic = harmonic + 1 / k end
      local sum = 0
      for k = 1, #lines do
        sum = sum + 1 / k / harmonic
        cumulative[k] = sum
      end
      cumulative[#lines] = 1
      math.randomseed(7919 * threadId + 17)
    end
  end
end

-- The first line whose cumulative probability reaches a uniform draw (binary search).
local function drawLine()
  local u = math.random()
  local lo, hi = 1, #cumulative
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if cumulative[mid] < u then lo = mid + 1 else hi = mid end
  end
  return lines[lo]
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
  if zipf then
    local r = drawLine()
    local body = r.body
    if write and body then
      counter = counter + 1
      body = string.gsub(body, "BENCH_KEY", string.format("%s-%d-%d", runId, id or 1, counter), 1)
    end
    return wrk.format(r.method, r.path, r.headers, body)
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
  if write and status >= 200 and status <= 299 and body then
    -- The top-level id comes first: jsonb orders keys by length.
    local written = string.match(body, '"id"%s*:%s*"([0-9a-f%-]+)"')
    if written then table.insert(acked, written) end
  end
end


function done(summary, latency, requests)
  local non2xxTotal = 0
  local statusCounts = {}
  local ackedParts = {}
  for _, thread in ipairs(threads) do
    non2xxTotal = non2xxTotal + (thread:get("non2xx") or 0)
    local part = thread:get("acked")
    if part and #part > 0 then table.insert(ackedParts, table.concat(part, "\n")) end
  end
  local target = threads[1] and threads[1]:get("ackedFile")
  if target then
    local file = assert(io.open(target, "w"))
    file:write(table.concat(ackedParts, "\n"))
    file:close()
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

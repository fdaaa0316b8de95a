-- predict.lua: a wrk script for `ethost --mode serve`: POST /predict with one request body per line of the
-- file given after `--` (cycled), counting non-200 answers; prints a JSON summary line at the end.
local bodies = {}
local next_body = 0
local path = "/predict"

function init(args)
  local f = assert(io.open(args[1], "r"), "usage: wrk ... -s predict.lua URL -- BODIES.jsonl [PATH]")
  for line in f:lines() do
    if #line > 0 then bodies[#bodies + 1] = line end
  end
  f:close()
  if args[2] then path = args[2] end
  next_body = math.random(#bodies) - 1
end

function request()
  next_body = next_body % #bodies + 1
  return wrk.format("POST", path, { ["Content-Type"] = "application/json" }, bodies[next_body])
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests": %d, "seconds": %.3f, "rps": %.1f, "p50_ms": %.3f, "p90_ms": %.3f, "p99_ms": %.3f, ' ..
    '"max_ms": %.3f, "errors": {"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}}\n',
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1e3, latency:percentile(90) / 1e3, latency:percentile(99) / 1e3,
    latency.max / 1e3, e.connect, e.read, e.write, e.status, e.timeout))
end

-- ARGV: prefix, then the names of batches recorded in Postgres. Takes their counts off what is pending in
-- Redis (pend:S, S found from the client and mode) and drops them; a batch acknowledged before (by another flusher)
-- changes nothing.
local prefix = ARGV[1]
for i = 2, #ARGV do
  local counts = redis.call('HGETALL', ARGV[i])
  for j = 1, #counts, 2 do
    local client, mode, period, field = string.match(counts[j], '^([^|]*)|[^|]*|([^|]*)|[^|]*|([^|]*)|[^|]*|(.*)$')
    local pend = prefix .. 'pend:' .. client .. (mode == 'test' and ':test' or '')
    local n = tonumber(counts[j + 1])
    hincr(pend, field, -n)
    hincr(pend, 'n:' .. period, -n)
  end
  redis.call('DEL', ARGV[i])
  redis.call('LREM', prefix .. 'usage:batches', 0, ARGV[i])
end
apply()
return 1

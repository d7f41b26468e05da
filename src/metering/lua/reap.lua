-- ARGV: current period, then full reservation key names (found by SCAN). Refunds those older than 5 minutes, i.e.
-- with less than 55 of their 60 minutes to live: their process died before settling.
local period, reaped = ARGV[1], 0
for i = 2, #ARGV do
  local ttl = redis.call('PTTL', ARGV[i])
  if ttl >= 0 and ttl < 3300000 then
    local value = redis.call('GET', ARGV[i])
    redis.call('DEL', ARGV[i])
    if value then refund(value, period); reaped = reaped + 1 end
  end
end
return reaped

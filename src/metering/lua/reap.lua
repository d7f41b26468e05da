-- ARGV: current period, then full reservation key names (found by SCAN). Refunds those older than 5 minutes, i.e.
-- with less than 23 h 55 min of their 24 hours to live: their process died before settling. (The day-long life is
-- only a bound: a reservation is settled or reaped within minutes. It keeps a reservation from expiring unrefunded
-- when a failover promotes a server whose clock is ahead; one whose clock is behind reaps that much later.)
local period, reaped = ARGV[1], 0
for i = 2, #ARGV do
  local ttl = redis.call('PTTL', ARGV[i])
  if ttl >= 0 and ttl < 86100000 then
    local value = redis.call('GET', ARGV[i])
    redis.call('DEL', ARGV[i])
    if value then refund(value, period); reaped = reaped + 1 end
  end
end
return reaped

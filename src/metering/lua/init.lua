-- KEYS: st, pend. ARGV: ver, period, monthly, credits, overage_used, overage_allowed, then pack triples
-- (id, remaining, expires_ms). Rebuilds the hot balance from Postgres minus what is spent but not flushed.
local st, pend = KEYS[1], KEYS[2]
local period = ARGV[2]
local function pending(f) return tonumber(redis.call('HGET', pend, f) or '0') end
redis.call('DEL', st)
local ids = {}
for i = 7, #ARGV, 3 do
  local id = ARGV[i]
  table.insert(ids, id)
  redis.call('HSET', st, 'p:' .. id, tonumber(ARGV[i + 1]) - pending('p:' .. id), 'x:' .. id, ARGV[i + 2])
end
redis.call('HSET', st, 'ver', ARGV[1], 'period', period,
  'm', tonumber(ARGV[3]) - pending('m:' .. period) - pending('t:' .. period),
  'c', tonumber(ARGV[4]) - pending('c'),
  'o', tonumber(ARGV[5]) + pending('o:' .. period),
  'ov', ARGV[6], 'pk', table.concat(ids, ','))
return 1

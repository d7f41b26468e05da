-- KEYS: st, pend. ARGV: ver, period, monthly, credits, overage_used, overage_allowed, client, mode, n, then n names
-- of usage batches Postgres has recorded (as of the balances given), then pack triples (id, remaining, expires_ms).
-- Rebuilds the hot balance from Postgres minus what is spent but not flushed. What is pending in Redis includes the
-- batches not yet acknowledged; one that Postgres has recorded already (its acknowledgement not sent yet, or lost in
-- a failover) is in the balances given too, so its counts for this client are not taken off twice.
local st, pend = KEYS[1], KEYS[2]
local period, client, mode = ARGV[2], ARGV[7], ARGV[8]
local packs_from = 10 + tonumber(ARGV[9])
local recorded = {}
for i = 10, packs_from - 1 do
  local counts = redis.call('HGETALL', ARGV[i])
  for j = 1, #counts, 2 do
    local c, m, f = string.match(counts[j], '^([^|]*)|[^|]*|([^|]*)|[^|]*|[^|]*|[^|]*|(.*)$')
    if c == client and m == mode then recorded[f] = (recorded[f] or 0) + tonumber(counts[j + 1]) end
  end
end
local function pending(f) return tonumber(redis.call('HGET', pend, f) or '0') - (recorded[f] or 0) end
redis.call('DEL', st)
local ids = {}
for i = packs_from, #ARGV, 3 do
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

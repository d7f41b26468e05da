// The Redis side of metering: each script is one atomic round trip.
//
// Keys per metered subject S (a client's live pool, or `<client>:test` for its test keys):
//   st:S    hash  ver, period, m (monthly left), c (one-time credits), o (overage used), ov (overage allowed),
//                 pk (pack ids, oldest-expiring first), p:<id> (pack left), x:<id> (pack expiry, ms)
//   pend:S  hash  spent but not yet flushed to Postgres, by ledger field: m:<period>, o:<period>, c, p:<id>,
//                 t:<period> (test pool), n:<period> (charged requests)
// Per client: win:<client>, a sorted set of admitted request ids by time (the sliding 60 s window).
// Per request: res:<request id> = "<pend field>|<st key>|<pend key>" until settled, with a one-hour TTL; the reaper
// refunds reservations older than five minutes (their process died before settling), found by their remaining TTL.
// Stream `usage`: charged requests waiting to be flushed to Postgres (consumer group `flush`), one field `e`:
// "<request id>|<client>|<key>|<mode>|<surface>|<period>|<used at, ms>|<pend field>".

/**
 * KEYS: st, pend, win, res. ARGV: now_ms, rpm, ver, period, request_id, grant field ('m' live, 't' test),
 * free ('1': a free route, only the rate limit applies and nothing is reserved).
 */
export const ADMIT = `
local st, pend, win, res = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local now, rpm = tonumber(ARGV[1]), tonumber(ARGV[2])
local ver, period, rid, grant = ARGV[3], ARGV[4], ARGV[5], ARGV[6]
redis.call('ZREMRANGEBYSCORE', win, '-inf', now - 60000)
local count = redis.call('ZCARD', win)
local oldest = redis.call('ZRANGE', win, 0, 0, 'WITHSCORES')[2]
local reset_ms = oldest and (tonumber(oldest) + 60000 - now) or 60000
local existing = redis.call('GET', res)
if existing then return {1, string.match(existing, '^[^|]*'), count, reset_ms} end
if ARGV[7] == '1' then
  if count >= rpm then return {0, 'rate', count, reset_ms} end
  redis.call('ZADD', win, now, rid)
  redis.call('PEXPIRE', win, 61000)
  if count == 0 then reset_ms = 60000 end
  return {1, '', count + 1, reset_ms}
end
local state = redis.call('HMGET', st, 'ver', 'period', 'm', 'c', 'ov', 'pk')
if state[1] ~= ver or state[2] ~= period then return {-1, '', count, reset_ms} end
if count >= rpm then return {0, 'rate', count, reset_ms} end
local field, stfield
if tonumber(state[3]) > 0 then
  field, stfield = grant .. ':' .. period, 'm'
else
  if state[6] and state[6] ~= '' then
    for id in string.gmatch(state[6], '[^,]+') do
      local left = tonumber(redis.call('HGET', st, 'p:' .. id) or '0')
      local expires = tonumber(redis.call('HGET', st, 'x:' .. id) or '0')
      if left > 0 and expires > now then field, stfield = 'p:' .. id, 'p:' .. id; break end
    end
  end
  if not field and tonumber(state[4]) > 0 then field, stfield = 'c', 'c' end
  if not field and state[5] == '1' then field, stfield = 'o:' .. period, 'o' end
  if not field then return {0, 'credits', count, reset_ms} end
end
if stfield == 'o' then redis.call('HINCRBY', st, 'o', 1) else redis.call('HINCRBY', st, stfield, -1) end
redis.call('HINCRBY', pend, field, 1)
redis.call('ZADD', win, now, rid)
redis.call('PEXPIRE', win, 61000)
redis.call('SET', res, field .. '|' .. st .. '|' .. pend, 'PX', 3600000)
if count == 0 then reset_ms = 60000 end
return {1, field, count + 1, reset_ms}
`;

const REFUND = `
local function refund(value, period)
  local field, st, pend = string.match(value, '^([^|]*)|([^|]*)|(.*)$')
  redis.call('HINCRBY', pend, field, -1)
  local kind, arg = string.match(field, '^(%a):?(.*)$')
  if kind == 'p' then
    if redis.call('HEXISTS', st, field) == 1 then redis.call('HINCRBY', st, field, 1) end
  elseif kind == 'c' then
    redis.call('HINCRBY', st, 'c', 1)
  elseif arg == period then
    if kind == 'o' then redis.call('HINCRBY', st, 'o', -1) else redis.call('HINCRBY', st, 'm', 1) end
  end
end
`;

/**
 * No KEYS (the key prefix comes first in ARGV). ARGV: prefix, current period, then (request id, charge 1|0,
 * event) triples. Charge: the reservation becomes a usage event in the stream. Refund: the credit goes back.
 * A reservation already settled (or reaped) is skipped, so settling twice changes nothing.
 */
export const SETTLE = `${REFUND}
local prefix, period = ARGV[1], ARGV[2]
local done = 0
for i = 3, #ARGV, 3 do
  local rid, charge, event = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local res = prefix .. 'res:' .. rid
  local value = redis.call('GET', res)
  if value then
    redis.call('DEL', res)
    if charge == '1' then
      local field, pend = string.match(value, '^([^|]*)|[^|]*|(.*)$')
      local evperiod = string.match(event, '^[^|]*|[^|]*|[^|]*|[^|]*|[^|]*|([^|]*)')
      redis.call('HINCRBY', pend, 'n:' .. evperiod, 1)
      redis.call('XADD', prefix .. 'usage', '*', 'e', event .. '|' .. field)
    else
      refund(value, period)
    end
    done = done + 1
  end
end
return done
`;

/**
 * ARGV: current period, then full reservation key names (found by SCAN). Refunds those older than 5 minutes, i.e.
 * with less than 55 of their 60 minutes to live: their process died before settling.
 */
export const REAP = `${REFUND}
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
`;

/**
 * KEYS: st, pend. ARGV: ver, period, monthly, credits, overage_used, overage_allowed, then pack triples
 * (id, remaining, expires_ms). Rebuilds the hot balance from Postgres minus what is spent but not flushed.
 */
export const INIT = `
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
`;

/** KEYS: stream. ARGV: group, then (message id, full pend key, field, period) quads. Acks a flushed batch (the
 * flusher trims acknowledged entries from the stream once per batch). */
export const ACK = `
local stream, group = KEYS[1], ARGV[1]
for i = 2, #ARGV, 4 do
  if redis.call('XACK', stream, group, ARGV[i]) == 1 then
    redis.call('HINCRBY', ARGV[i + 1], ARGV[i + 2], -1)
    redis.call('HINCRBY', ARGV[i + 1], 'n:' .. ARGV[i + 3], -1)
  end
end
return 1
`;

-- The usage batches' clock, in µs: Redis's TIME plus a skew, never going back. usage:clock holds hw, the latest time
-- a batch was opened or taken on it, and skew. A server whose TIME is behind its predecessor's (a replica promoted by
-- a failover, whose clock is behind the old master's) reads a time at or before hw: the skew grows by the difference
-- and the clock goes on from hw at the server's own pace, so a batch closes a batch age after it opened, as on the
-- server that opened it, and no name is given twice. The skew is kept (the clock only ever runs ahead of TIME).
local function clock_us(prefix)
  local t = redis.call('TIME')
  local c = redis.call('HMGET', prefix .. 'usage:clock', 'hw', 'skew')
  local hw, skew = tonumber(c[1]) or 0, tonumber(c[2]) or 0
  local now = t[1] * 1000000 + t[2] + skew
  if now <= hw then
    skew = skew + hw + 1 - now
    now = hw + 1
    redis.call('HSET', prefix .. 'usage:clock', 'skew', string.format('%.0f', skew))
  end
  return now
end
-- Records `now` as the clock's high-water mark (a batch opened or taken at it).
local function clock_mark(prefix, now)
  redis.call('HSET', prefix .. 'usage:clock', 'hw', string.format('%.0f', now))
end
-- When a batch closes on that clock, from its name (a name of another shape: closed).
local function closes_us(name) return tonumber(string.match(name, 'usage:batch:(%d+)-[^:]*$')) or 0 end

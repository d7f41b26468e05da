-- One admission: window check, in-flight check, credit check, reservation. Returns ok (1 admitted, 0 refused, -1 the
-- balance is missing or of another version: reload it and admit again), the pend field reserved ('' for a free route,
-- 'rate', 'busy' or 'credits' when refused), the window count and the ms until the window frees a slot.
--
-- In flight per client: fly:<client>, a sorted set of the ids of its admitted requests, scored by when their lease
-- ends. A request leaves it when its answer is done or abandoned (a release, lua/turn.lua); one whose lease ends first
-- (its process died, or it ran longer than the lease) no longer counts.
local FLY_LEASE_MS = 60000
local flies = {}
local function in_flight(fly, now)
  local f = flies[fly]
  if not f then
    redis.call('ZREMRANGEBYSCORE', fly, '-inf', now)
    f = { count = redis.call('ZCARD', fly) }
    flies[fly] = f
  end
  return f
end
local function take_slot(f, fly, now, rid)
  if redis.call('ZADD', fly, now + FLY_LEASE_MS, rid) == 1 then f.count = f.count + 1 end
  redis.call('PEXPIRE', fly, FLY_LEASE_MS + 1000)
end
local function window(win, now)
  local w = wins[win]
  if not w or w.now ~= now then
    redis.call('ZREMRANGEBYSCORE', win, '-inf', now - 60000)
    local oldest = redis.call('ZRANGE', win, 0, 0, 'WITHSCORES')[2]
    w = { now = now, count = redis.call('ZCARD', win), oldest = oldest and tonumber(oldest) }
    wins[win] = w
  end
  return w
end
local function enter(w, win, now, rid)
  if redis.call('ZADD', win, now, rid) == 1 then
    w.count = w.count + 1
    if not w.oldest or now < w.oldest then w.oldest = now end
  else
    w.now = nil -- an existing member moved: read the window again next time
  end
  touched[win] = true
end
local function balance(st)
  local s = states[st]
  if not s then
    local v = redis.call('HMGET', st, 'ver', 'period', 'm', 'c', 'ov', 'pk')
    s = { ver = v[1], period = v[2], m = tonumber(v[3]) or 0, c = tonumber(v[4]) or 0, ov = v[5], pk = v[6], packs = {} }
    states[st] = s
  end
  return s
end
local function pack(s, st, id)
  local p = s.packs[id]
  if not p then
    local v = redis.call('HMGET', st, 'p:' .. id, 'x:' .. id)
    p = { left = tonumber(v[1]) or 0, expires = tonumber(v[2]) or 0 }
    s.packs[id] = p
  end
  return p
end
local function admit(st, pend, win, fly, res, now, rpm, cap, ver, period, rid, grant, free)
  local w = window(win, now)
  local count = w.count
  local reset_ms = w.oldest and (w.oldest + 60000 - now) or 60000
  local existing = redis.call('GET', res)
  if existing then return 1, string.match(existing, '^[^|]*'), count, reset_ms end
  if free == '1' then
    if count >= rpm then return 0, 'rate', count, reset_ms end
    local f = in_flight(fly, now)
    if f.count >= cap then return 0, 'busy', count, reset_ms end
    enter(w, win, now, rid)
    take_slot(f, fly, now, rid)
    if count == 0 then reset_ms = 60000 end
    return 1, '', count + 1, reset_ms
  end
  local s = balance(st)
  if s.ver ~= ver or s.period ~= period then return -1, '', count, reset_ms end
  if count >= rpm then return 0, 'rate', count, reset_ms end
  local f = in_flight(fly, now)
  if f.count >= cap then return 0, 'busy', count, reset_ms end
  local field, stfield
  if s.m > 0 then
    field, stfield = grant .. ':' .. period, 'm'
    s.m = s.m - 1
  else
    if s.pk and s.pk ~= '' then
      for id in string.gmatch(s.pk, '[^,]+') do
        local p = pack(s, st, id)
        if p.left > 0 and p.expires > now then
          field, stfield = 'p:' .. id, 'p:' .. id
          p.left = p.left - 1
          break
        end
      end
    end
    if not field and s.c > 0 then
      field, stfield = 'c', 'c'
      s.c = s.c - 1
    end
    if not field and s.ov == '1' then field, stfield = 'o:' .. period, 'o' end
    if not field then return 0, 'credits', count, reset_ms end
  end
  hincr(st, stfield, stfield == 'o' and 1 or -1)
  hincr(pend, field, 1)
  enter(w, win, now, rid)
  take_slot(f, fly, now, rid)
  redis.call('SET', res, field .. '|' .. st .. '|' .. pend, 'PX', 86400000)
  if count == 0 then reset_ms = 60000 end
  return 1, field, count + 1, reset_ms
end

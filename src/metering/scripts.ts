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
// Usage waiting to be flushed to Postgres, as counts (never a value per request), in batches named when opened:
//   usage:batch:<µs>-<n>  hash  charged requests counted per "<client>|<key>|<mode>|<surface>|<period>|<UTC day>|<pend
//                               field>", named by when it closes (Redis's clock in µs) and a sequence number, so a
//                               name is never given twice, even after Redis has lost its data
//   usage:current         string  the batch settlements write into until it closes; the first settlement after that
//                               opens a new one, closing the batch age (ARGV) later
//   usage:batches         list  every batch not yet recorded and acknowledged, oldest first
// A batch is recorded only once closed, when no settlement can write into it any more. So even if Redis loses its
// last writes (its append-only file is fsynced every second) and comes back with a batch Postgres already holds, that
// batch is still closed: Postgres skips it by name, and new settlements open a new batch. Nothing is counted twice,
// and nothing is written into a batch already recorded, as long as Redis's clock does not go back.

// What one script run has read and written, so that the admissions after the first in a batch read their window and
// balance from here (exactly what Redis holds: every change this run makes is tracked) and the counter increments are
// applied once at the end, summed per hash field. Fewer commands per request is what makes a batch cheaper than
// single calls: inside Redis each redis.call costs several microseconds.
const BATCH = `
local wins, states, incr, touched = {}, {}, {}, {}
local function hincr(key, field, by)
  local h = incr[key]
  if not h then h = {}; incr[key] = h end
  h[field] = (h[field] or 0) + by
end
local function apply()
  for key, h in pairs(incr) do
    for field, by in pairs(h) do if by ~= 0 then redis.call('HINCRBY', key, field, by) end end
  end
  for win in pairs(touched) do redis.call('PEXPIRE', win, 61000) end
end
`;

// One admission: window check, credit check, reservation. Returns ok (1 admitted, 0 refused, -1 the balance is
// missing or of another version: reload it and admit again), the pend field reserved ('' for a free route, 'rate' or
// 'credits' when refused), the window count and the ms until the window frees a slot.
const ADMIT_ONE = `${BATCH}
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
local function admit(st, pend, win, res, now, rpm, ver, period, rid, grant, free)
  local w = window(win, now)
  local count = w.count
  local reset_ms = w.oldest and (w.oldest + 60000 - now) or 60000
  local existing = redis.call('GET', res)
  if existing then return 1, string.match(existing, '^[^|]*'), count, reset_ms end
  if free == '1' then
    if count >= rpm then return 0, 'rate', count, reset_ms end
    enter(w, win, now, rid)
    if count == 0 then reset_ms = 60000 end
    return 1, '', count + 1, reset_ms
  end
  local s = balance(st)
  if s.ver ~= ver or s.period ~= period then return -1, '', count, reset_ms end
  if count >= rpm then return 0, 'rate', count, reset_ms end
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
  redis.call('SET', res, field .. '|' .. st .. '|' .. pend, 'PX', 3600000)
  if count == 0 then reset_ms = 60000 end
  return 1, field, count + 1, reset_ms
end
`;

/** Redis's clock in µs, and when a batch closes on it, from its name (a name of another shape: closed). */
const CLOCK = `
local function clock_us() local t = redis.call('TIME') return t[1] * 1000000 + t[2] end
local function closes_us(name) return tonumber(string.match(name, 'usage:batch:(%d+)-[^:]*$')) or 0 end
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
 * One turn of a process's event loop, in one round trip and one script run: the settlements of the requests it
 * answered, then the admissions of the requests it read. No KEYS (the key prefix comes first in ARGV). ARGV: prefix,
 * current period, the batch age in µs, the number of settlements n, n settlements "<charge 1|0>|<request id>|<usage>" (usage:
 * "<client>|<key>|<mode>|<surface>|<period>|<UTC day>"), then one argument per admission: "subject|client id|now_ms|rpm|ver|period|request_id|grant field|free".
 * (One argument per request rather than one per field: each argument costs the client its encoding and Redis its
 * parsing, more than the script's string.match.)
 *
 * Settlement: charge turns the reservation into one more charged request counted in the current batch; refund gives the
 * credit back. A reservation already settled (or reaped) is skipped, so settling twice changes nothing. The
 * settlements run first, before any admission has read a balance, so admissions see the refunds.
 * Admission: each is exactly one ADMIT_ONE admission, in order, as atomic and exact as one call each.
 * Returns the four values of each admission, one after the other.
 */
export const TURN = `${ADMIT_ONE}${REFUND}${CLOCK}
local prefix, period, batch_us = ARGV[1], ARGV[2], tonumber(ARGV[3])
local first_admission = 5 + tonumber(ARGV[4])
local batch
local function current_batch()
  if batch then return batch end
  local now_us = clock_us()
  batch = redis.call('GET', prefix .. 'usage:current')
  if not batch or now_us >= closes_us(batch) then
    batch = prefix .. 'usage:batch:' .. string.format('%.0f', now_us + batch_us) .. '-' ..
      redis.call('INCR', prefix .. 'usage:seq')
    redis.call('SET', prefix .. 'usage:current', batch)
    redis.call('RPUSH', prefix .. 'usage:batches', batch)
  end
  return batch
end
for i = 5, first_admission - 1 do
  local charge, rid, usage = string.match(ARGV[i], '^(%d)|([^|]*)|(.*)$')
  local value = redis.call('GETDEL', prefix .. 'res:' .. rid)
  if value then
    if charge == '1' then
      local field, pend = string.match(value, '^([^|]*)|[^|]*|(.*)$')
      hincr(pend, 'n:' .. string.match(usage, '^[^|]*|[^|]*|[^|]*|[^|]*|([^|]*)'), 1)
      hincr(current_batch(), usage .. '|' .. field, 1)
    else
      refund(value, period)
    end
  end
end
local out, n = {}, 0
for i = first_admission, #ARGV do
  local subject, client, now, rpm, ver, admit_period, rid, grant, free = string.match(ARGV[i],
    '^([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)$')
  local ok, field, count, reset_ms = admit(prefix .. 'st:' .. subject, prefix .. 'pend:' .. subject,
    prefix .. 'win:' .. client, prefix .. 'res:' .. rid, tonumber(now), tonumber(rpm), ver, admit_period, rid, grant,
    free)
  out[n + 1], out[n + 2], out[n + 3], out[n + 4] = ok, field, count, reset_ms
  n = n + 4
end
apply()
return out
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

/**
 * ARGV: prefix, most. Returns Redis's clock (µs), when the batch still open closes (µs, or -1: none is), then the
 * oldest closed batches, at most `most`, each as { name, [field, count, field, count, ...] }.
 */
export const TAKE = `${CLOCK}
local prefix, most = ARGV[1], tonumber(ARGV[2])
local now_us = clock_us()
local out = {}
for _, name in ipairs(redis.call('LRANGE', prefix .. 'usage:batches', 0, most - 1)) do
  if now_us < closes_us(name) then break end
  out[#out + 1] = { name, redis.call('HGETALL', name) }
end
local current = redis.call('GET', prefix .. 'usage:current')
local open = current and closes_us(current) or -1
if open <= now_us then open = -1 end
return { now_us, open, out }
`;

/**
 * ARGV: prefix, then the names of batches recorded in Postgres. Takes their counts off what is pending in
 * Redis (pend:S, S found from the client and mode) and drops them; a batch acknowledged before (by another flusher)
 * changes nothing.
 */
export const ACK = `${BATCH}
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
`;

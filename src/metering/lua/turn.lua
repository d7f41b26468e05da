-- One turn of a process's event loop, in one round trip and one script run: the settlements of the requests it
-- answered, then the admissions of the requests it read. No KEYS (the key prefix comes first in ARGV). ARGV: prefix,
-- current period, the batch age in µs, the number of settlements n, n settlements "<charge 1|0>|<request id>|<usage>" (usage:
-- "<client>|<key>|<mode>|<surface>|<period>|<UTC day>") or releases "r|<request id>|<client id>", then one argument per
-- admission: "subject|client id|now_ms|rpm|in-flight cap|ver|period|request_id|grant field|free".
-- (One argument per request rather than one per field: each argument costs the client its encoding and Redis its
-- parsing, more than the script's string.match.)
-- Settlement: charge turns the reservation into one more charged request counted in the current batch; refund gives the
-- credit back. A reservation already settled (or reaped) is skipped, so settling twice changes nothing. The
-- settlements run first, before any admission has read a balance, so admissions see the refunds.
-- Release: the request's answer is done (or abandoned): it no longer counts as in flight (admit-one.lua).
-- Admission: each is exactly one admission of admit-one.lua, in order, as atomic and exact as one call each.
-- Returns the four values of each admission, one after the other.
local prefix, period, batch_us = ARGV[1], ARGV[2], tonumber(ARGV[3])
local first_admission = 5 + tonumber(ARGV[4])
local batch
local function current_batch()
  if batch then return batch end
  local now_us = clock_us(prefix)
  batch = redis.call('GET', prefix .. 'usage:current')
  if not batch or now_us >= closes_us(batch) then
    batch = prefix .. 'usage:batch:' .. string.format('%.0f', now_us + batch_us) .. '-' ..
      redis.call('INCR', prefix .. 'usage:seq')
    redis.call('SET', prefix .. 'usage:current', batch)
    redis.call('RPUSH', prefix .. 'usage:batches', batch)
    clock_mark(prefix, now_us)
  end
  return batch
end
for i = 5, first_admission - 1 do
  local charge, rid, usage = string.match(ARGV[i], '^([01r])|([^|]*)|(.*)$')
  local value = charge ~= 'r' and redis.call('GETDEL', prefix .. 'res:' .. rid)
  if charge == 'r' then
    redis.call('ZREM', prefix .. 'fly:' .. usage, rid)
  elseif value then
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
  local subject, client, now, rpm, cap, ver, admit_period, rid, grant, free = string.match(ARGV[i],
    '^([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)$')
  local ok, field, count, reset_ms = admit(prefix .. 'st:' .. subject, prefix .. 'pend:' .. subject,
    prefix .. 'win:' .. client, prefix .. 'fly:' .. client, prefix .. 'res:' .. rid, tonumber(now), tonumber(rpm),
    tonumber(cap), ver, admit_period, rid, grant, free)
  out[n + 1], out[n + 2], out[n + 3], out[n + 4] = ok, field, count, reset_ms
  n = n + 4
end
apply()
return out

-- What one script run has read and written, so that the admissions after the first in a batch read their window and
-- balance from here (exactly what Redis holds: every change this run makes is tracked) and the counter increments are
-- applied once at the end, summed per hash field. Fewer commands per request is what makes a batch cheaper than
-- single calls: inside Redis each redis.call costs several microseconds.
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

-- ARGV: prefix, most. Returns the clock (µs, clock.lua), when the batch still open closes (µs, or -1: none is), then
-- the oldest closed batches, at most `most`, each as { name, [field, count, field, count, ...] }.
-- A batch taken is sealed: if settlements still write into it (usage:current names it), usage:current is dropped,
-- so the next settlement opens a new batch. From here on nothing writes into a taken batch, whatever any clock says;
-- the flush waits for a replica to have the seal (WAIT) before it records the batch in Postgres.
local prefix, most = ARGV[1], tonumber(ARGV[2])
local now_us = clock_us(prefix)
clock_mark(prefix, now_us)
local current = redis.call('GET', prefix .. 'usage:current')
local out = {}
for _, name in ipairs(redis.call('LRANGE', prefix .. 'usage:batches', 0, most - 1)) do
  if now_us < closes_us(name) then break end
  if name == current then
    redis.call('DEL', prefix .. 'usage:current')
    current = nil
  end
  out[#out + 1] = { name, redis.call('HGETALL', name) }
end
local open = current and closes_us(current) or -1
if open <= now_us then open = -1 end
return { now_us, open, out }

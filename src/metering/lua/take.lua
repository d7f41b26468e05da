-- ARGV: prefix, most. Returns Redis's clock (µs), when the batch still open closes (µs, or -1: none is), then the
-- oldest closed batches, at most `most`, each as { name, [field, count, field, count, ...] }.
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

-- Redis's clock in µs, and when a batch closes on it, from its name (a name of another shape: closed).
local function clock_us() local t = redis.call('TIME') return t[1] * 1000000 + t[2] end
local function closes_us(name) return tonumber(string.match(name, 'usage:batch:(%d+)-[^:]*$')) or 0 end

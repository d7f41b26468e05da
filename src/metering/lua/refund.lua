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

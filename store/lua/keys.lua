-- keys.lua: the call's keys named, its op and argument count checked, and
-- the line's state read (one field, s).
-- KEYS: all eleven named; line (its field s) read.
-- ARGV: op, and how many arguments came against how many op sends.
-- Reply: none set here; an unknown op or a wrong count is an error.
if #KEYS ~= 11 then
  return redis.error_reply('ERR line: want 11 keys, got ' .. #KEYS)
end
local line, sessions, called, waiting, arrivals, ended, windows, invites, history, audit, events =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11]

local op = A.op
if not want then
  return redis.error_reply('ERR line: unknown op ' .. string.format('%q', string.sub(op or '', 1, 40)))
end
if #ARGV ~= want then
  return redis.error_reply('ERR line: ' .. op .. ' wants ' .. want .. ' arguments, got ' .. #ARGV)
end

-- The line's state (see "The line's state" below).
local packed = redis.call('HGET', line, 's')

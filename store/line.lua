-- One operation on one room's line, atomically. See package store.
-- KEYS[1]: the room's hash.
-- ARGV: op (join|poll|admit|pause|resume), now (ms), rate (per minute),
--       burst, n (for admit).
-- Returns {epoch, issued, admitted, paused (0|1), ticket (join only, else 0)}.
local key = KEYS[1]
local op = ARGV[1]
local now = tonumber(ARGV[2])
local rate = tonumber(ARGV[3])
local burst = tonumber(ARGV[4])
local n = tonumber(ARGV[5])
if not (now and rate and burst and n) then
  return redis.error_reply('ERR line: bad arguments')
end

local s = redis.call('HMGET', key, 'epoch', 'issued', 'admitted', 'tokens', 'refilled', 'paused')
local epoch = tonumber(s[1]) or now
local issued = tonumber(s[2]) or 0
local admitted = tonumber(s[3]) or 0
local tokens = tonumber(s[4]) or burst
local refilled = tonumber(s[5]) or now
local paused = s[6] == '1'

-- Admit what a continuous scheduler would have admitted since the last call:
-- while tickets were waiting, every token went to the next of them at once;
-- only once the line was empty (or paused) did tokens pile up, to at most
-- the burst. So a sparse poll loses nothing, and a quiet hour saves only
-- the burst.
-- call_in hands whole tokens to waiting tickets in order, unless paused,
-- and returns what is left.
local function call_in(available)
  if paused then
    return available
  end
  local k = math.min(math.floor(available), issued - admitted)
  admitted = admitted + k
  return available - k
end

local available = tokens
if now > refilled then
  available = tokens + (now - refilled) * rate / 60000
  refilled = now
end
tokens = math.min(burst, call_in(available))

local ticket = 0
if op == 'pause' then
  paused = true
elseif op == 'resume' then
  paused = false
elseif op == 'admit' then
  admitted = math.min(issued, admitted + math.max(0, math.floor(n)))
elseif op == 'join' then
  issued = issued + 1
  ticket = issued
elseif op ~= 'poll' then
  return redis.error_reply('ERR line: unknown op ' .. op)
end

-- Saved-up tokens go to whoever is waiting now, a newcomer included.
tokens = call_in(tokens)

redis.call('HSET', key, 'epoch', epoch, 'issued', issued, 'admitted', admitted,
  'tokens', string.format('%.6f', tokens), 'refilled', refilled, 'paused', paused and '1' or '0')
return {epoch, issued, admitted, paused and 1 or 0, ticket}

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

if op == 'pause' then
  paused = true
elseif op == 'resume' then
  paused = false
elseif op == 'admit' then
  admitted = math.min(issued, admitted + math.max(0, math.floor(n)))
elseif op ~= 'join' and op ~= 'poll' then
  return redis.error_reply('ERR line: unknown op ' .. op)
end

local ticket = 0
if op == 'join' then
  issued = issued + 1
  ticket = issued
end

-- Refill the bucket from the time elapsed; a clock that steps back refills
-- nothing rather than draining.
if now > refilled then
  tokens = tokens + (now - refilled) * rate / 60000
  refilled = now
end
if tokens > burst then
  tokens = burst
end

if not paused then
  local k = math.min(math.floor(tokens), issued - admitted)
  if k > 0 then
    admitted = admitted + k
    tokens = tokens - k
  end
end

redis.call('HSET', key, 'epoch', epoch, 'issued', issued, 'admitted', admitted,
  'tokens', string.format('%.6f', tokens), 'refilled', refilled, 'paused', paused and '1' or '0')
return {epoch, issued, admitted, paused and 1 or 0, ticket}

-- One operation on one room's line, atomically. See package store.
--
-- KEYS[1] hash:  epoch, issued, admitted, tokens, refilled, paused, queue_all,
--                random-order windows, and admissions per minute in m0..m4
-- KEYS[2] zset:  live sessions, member = session id, score = expiry (ms)
-- KEYS[3] zset:  called tickets not yet claimed, score = claim deadline (ms)
-- KEYS[4] zset:  waiting tickets, score = last seen (ms)
-- ARGV: op, now (ms), rate (per minute, 0 = none), burst, capacity (0 = none),
--       claim window (ms), session ttl (ms), queue timeout (ms), arg (ticket or
--       n), session id, epoch the ticket was issued in (poll; 0 = any),
--       random window (ms; 0 = first come, first served), a random key for a
--       new line (an existing line keeps the key it was created with)
--
-- "admitted" counts positions in the calling order. In first-come order the
-- position is the ticket; in random order, visitors who arrived within the
-- same window are called in a keyed pseudorandom permutation of that
-- window's tickets, so no per-visitor state is stored and nobody waits
-- behind a later window.
-- ops: join | poll | renew | end | admit | pause | resume | queue_all
-- Returns {epoch, issued, admitted, flags (1 paused, 2 queue-all), ticket,
--          outcome, live sessions, called, admitted in the last 5 minutes}
-- outcome: join/poll 0 waiting, 1 admitted (session id now live), 2 rejoined
--          (the old ticket was lost; ticket is the new one); renew 1 ok,
--          0 gone; other ops 0.
local line, sessions, called, waiting = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local op = ARGV[1]
local now = tonumber(ARGV[2])
local rate = tonumber(ARGV[3])
local burst = tonumber(ARGV[4])
local capacity = tonumber(ARGV[5])
local claim_ms = tonumber(ARGV[6])
local session_ms = tonumber(ARGV[7])
local queue_ms = tonumber(ARGV[8])
local arg = tonumber(ARGV[9])
local sid = ARGV[10]
local ticket_epoch = tonumber(ARGV[11])
local window_ms = tonumber(ARGV[12])
local random_key = ARGV[13] or ''
if not (now and rate and burst and capacity and claim_ms and session_ms and queue_ms and arg and sid and ticket_epoch and window_ms) then
  return redis.error_reply('ERR line: bad arguments')
end

local s = redis.call('HMGET', line, 'epoch', 'issued', 'admitted', 'tokens', 'refilled', 'paused', 'queue_all',
  'w_start', 'w_end', 'open_first', 'open_since', 'closed', 'rkey')
local epoch = tonumber(s[1]) or now
local issued = tonumber(s[2]) or 0
local admitted = tonumber(s[3]) or 0
local tokens = tonumber(s[4]) or burst
local refilled = tonumber(s[5]) or now
local paused = s[6] == '1'
local queue_all = s[7] == '1'
-- Random order: the window being called, the window still filling, and the
-- ends of the windows closed since (a comma-separated list).
local w_start = tonumber(s[8]) or 1
local w_end = tonumber(s[9]) or 0
local open_first = tonumber(s[10]) or 1
local open_since = tonumber(s[11]) or now
local closed = s[12] or ''
random_key = s[13] or random_key
local minute = math.floor(now / 60000)
local admitted_now = 0

-- Forget what has expired: sessions, unclaimed calls, and waiting visitors
-- who stopped polling. Memory follows the live population only.
redis.call('ZREMRANGEBYSCORE', sessions, '-inf', now)
redis.call('ZREMRANGEBYSCORE', called, '-inf', now)
redis.call('ZREMRANGEBYSCORE', waiting, '-inf', now - queue_ms)

-- free is how many more visitors may be called in now: capacity less live
-- sessions and calls still inside their claim window.
local function free()
  if capacity <= 0 then
    return math.huge
  end
  return capacity - redis.call('ZCARD', sessions) - redis.call('ZCARD', called)
end

-- permute maps i in [0, n) to a keyed pseudorandom j in [0, n): two rounds
-- of an odd multiply-add and a xorshift, each a bijection on [0, 2^bits),
-- with cycle walking back into [0, n).
local function permute(i, n, seed)
  if n <= 1 then
    return 0
  end
  local bits = 1
  while 2 ^ bits < n do
    bits = bits + 1
  end
  local m = 2 ^ bits
  local h = redis.sha1hex(random_key .. ':' .. seed)
  local function num(from)
    return tonumber(string.sub(h, from, from + 6), 16)
  end
  local a1, c1, a2, c2 = (num(1) * 2 + 1) % m, num(8) % m, (num(15) * 2 + 1) % m, num(22) % m
  local shift = 2 ^ math.max(1, math.floor(bits / 2))
  local function round(x, a, c)
    x = (a * x + c) % m
    return bit.bxor(x, math.floor(x / shift))
  end
  local x = i
  repeat
    x = round(round(x, a1, c1), a2, c2)
  until x < n
  return x
end

-- ticket_at is the ticket called at position p.
local function ticket_at(p)
  if window_ms <= 0 then
    return p
  end
  if p > w_end then
    -- The next window: the oldest closed one, or, when none has closed,
    -- the one still filling, cut here so nobody waits for it to fill.
    w_start = w_end + 1
    local comma = string.find(closed, ',', 1, true)
    if comma then
      w_end = tonumber(string.sub(closed, 1, comma - 1))
      closed = string.sub(closed, comma + 1)
    elseif closed ~= '' then
      w_end = tonumber(closed)
      closed = ''
    else
      w_end = issued
      open_first, open_since = issued + 1, now
    end
  end
  return w_start + permute(p - w_start, w_end - w_start + 1, epoch .. ':' .. w_start)
end

-- call_in calls up to limit waiting tickets in order and returns the tokens
-- left. Automatic admission (bounded) obeys pause, queue-all, the rate and
-- the capacity; the operator's "admit N" does not. A ticket whose holder
-- stopped polling is passed over without using a place; at most 1000 are
-- passed over per call, so no call walks an unbounded line.
local function call_in(limit, available, bounded)
  if bounded and (paused or queue_all) then
    return available
  end
  local places = math.huge
  if bounded then
    places = free()
  end
  local skips = 1000
  while admitted < issued and limit > 0 and places > 0 and (not bounded or rate <= 0 or available >= 1) do
    admitted = admitted + 1
    local t = ticket_at(admitted)
    if redis.call('ZSCORE', waiting, t) then
      redis.call('ZREM', waiting, t)
      redis.call('ZADD', called, now + claim_ms, t)
      places = places - 1
      limit = limit - 1
      admitted_now = admitted_now + 1
      if bounded and rate > 0 then
        available = available - 1
      end
    else
      skips = skips - 1
      if skips == 0 then
        break
      end
    end
  end
  return available
end

-- settle hands saved-up tokens and free places to whoever waits now.
local function settle()
  tokens = call_in(math.huge, tokens, true)
end

-- Admit what a continuous scheduler would have admitted since the last call:
-- while tickets waited, every token went to the next of them at once; only
-- once the line was empty (or paused) did tokens pile up, to at most the
-- burst. So a sparse poll loses nothing, and a quiet hour saves only the burst.
local available = tokens
if rate > 0 and now > refilled then
  available = tokens + (now - refilled) * rate / 60000
end
refilled = math.max(refilled, now)
tokens = math.min(burst, call_in(math.huge, available, true))

-- claim turns a called ticket into a live session; under queue-all the call
-- is held (its deadline moved on) instead.
local function claim(t)
  if queue_all then
    if redis.call('ZSCORE', called, t) then
      redis.call('ZADD', called, now + claim_ms, t)
    end
    return false
  end
  if redis.call('ZREM', called, t) == 1 then
    redis.call('ZADD', sessions, now + session_ms, sid)
    return true
  end
  return false
end

local ticket, outcome = 0, 0
local function join()
  if window_ms > 0 and now - open_since >= window_ms and issued >= open_first then
    -- The filling window has run its time: close it before this arrival.
    if closed == '' then
      closed = tostring(issued)
    else
      closed = closed .. ',' .. issued
    end
    open_first, open_since = issued + 1, now
  elseif window_ms > 0 and issued < open_first then
    open_since = now
  end
  issued = issued + 1
  ticket = issued
  redis.call('ZADD', waiting, now, ticket)
  settle()
end

if op == 'join' then
  join()
elseif op == 'poll' then
  ticket = arg
elseif op == 'renew' then
  if redis.call('ZSCORE', sessions, sid) then
    redis.call('ZADD', sessions, now + session_ms, sid)
    outcome = 1
  end
elseif op == 'end' then
  redis.call('ZREM', sessions, sid)
  settle()
elseif op == 'admit' then
  call_in(math.max(0, math.floor(arg)), 0, false)
elseif op == 'pause' then
  paused = true
elseif op == 'resume' then
  paused, queue_all = false, false
  settle()
elseif op == 'queue_all' then
  queue_all = true
elseif op ~= 'stats' then
  return redis.error_reply('ERR line: unknown op ' .. op)
end

if op == 'poll' and ticket_epoch ~= epoch then
  -- A ticket from an earlier line (its state was lost or reset) names no
  -- place in this one.
  join()
  outcome = 2
  if claim(ticket) then
    outcome = 1
  end
elseif op == 'join' or op == 'poll' then
  if claim(ticket) then
    outcome = 1
  elseif redis.call('ZSCORE', waiting, ticket) then
    -- Still in line: seen now.
    redis.call('ZADD', waiting, now, ticket)
  elseif redis.call('ZSCORE', called, ticket) then
    -- Called and held under queue-all: keep waiting.
  else
    -- Called but not claimed in time, or passed over while away: the place
    -- is gone, so the visitor draws a new ticket at the back.
    join()
    outcome = 2
    if claim(ticket) then
      outcome = 1
    end
  end
end

-- Count admissions per minute for the wait estimate, in five slots m0..m4
-- holding "minute:count": a slot is reused five minutes on, so the count
-- never outgrows five fields, however long a room sits idle.
local function slot_count(m, value)
  local sep = value and string.find(value, ':', 1, true)
  if sep and tonumber(string.sub(value, 1, sep - 1)) == m then
    return tonumber(string.sub(value, sep + 1)) or 0
  end
  return 0
end
local slots = redis.call('HMGET', line, 'm0', 'm1', 'm2', 'm3', 'm4')
if admitted_now > 0 then
  local i = minute % 5
  local count = slot_count(minute, slots[i + 1]) + admitted_now
  slots[i + 1] = minute .. ':' .. count
  redis.call('HSET', line, 'm' .. i, slots[i + 1])
end
local recent = 0
for back = 0, 4 do
  local m = minute - back
  recent = recent + slot_count(m, slots[(m % 5) + 1])
end
local since = math.max(epoch, (minute - 4) * 60000)

redis.call('HSET', line, 'epoch', epoch, 'issued', issued, 'admitted', admitted,
  'tokens', string.format('%.6f', tokens), 'refilled', refilled,
  'paused', paused and '1' or '0', 'queue_all', queue_all and '1' or '0',
  'w_start', w_start, 'w_end', w_end, 'open_first', open_first, 'open_since', open_since, 'closed', closed, 'rkey', random_key)
local flags = (paused and 1 or 0) + (queue_all and 2 or 0)
return {epoch, issued, admitted, flags, ticket, outcome,
  redis.call('ZCARD', sessions), redis.call('ZCARD', called), recent, since}

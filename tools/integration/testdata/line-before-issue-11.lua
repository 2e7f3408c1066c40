#!lua flags=allow-key-locking
-- One operation on one room's line, atomically. See package store.
--
-- Keys (every one passed in KEYS, all named wr:{room}:..., so a room's keys
-- share one cluster slot and Upstash's allow-key-locking holds):
-- KEYS[1] hash: epoch, issued, admitted, tokens, raw, lt, paused, queue_all,
--               random, w_start, w_end, open_first, open_since, rkey,
--               trim_mark, trim_at, and admissions per minute in m0..m4
-- KEYS[2] zset: live sessions, member = ticket, score = expiry
-- KEYS[3] zset: called tickets not yet claimed, score = claim deadline
-- KEYS[4] zset: waiting tickets, score = last seen
-- KEYS[5] zset: arrivals, member = arrival id, score = its ticket
-- KEYS[6] zset: ended sessions (tombstones), member = ticket, score = until
-- KEYS[7] zset: closed random-order windows, member = score = last ticket
-- Every score that is a time is in line time (below), in milliseconds.
--
-- ARGV: op, now (ms), rate (per minute, 0 = none), burst, capacity (0 =
--       none), claim window (ms), session ttl (ms), queue timeout (ms), arg
--       (a ticket, or n for admit), arrival id (join), epoch of the ticket
--       or session (poll, renew, end), random window (ms; 0 = first come,
--       first served), a random key for a new line (an existing line keeps
--       the key it was created with), catch-up (ms), usable until (ms, end),
--       heartbeat (ms: how long a session pass admits without asking)
-- ops: join | poll | renew | end | admit | pause | resume | queue_all | stats
-- Every argument is checked before anything is written: a bad one, or an
-- unknown op, is an error and changes nothing.
--
-- Returns {epoch, issued, admitted, flags (1 paused, 2 queue-all), ticket,
--          outcome, live sessions, called, admitted in the last 5 minutes,
--          since, called by this call, call from, call to, groups ahead}
-- outcome: join/poll 0 waiting, 1 admitted (the ticket is the live session
--          <epoch>.<ticket>), 2 rejoined (the old ticket was lost; ticket is
--          the new one); renew 1 ok, 0 gone; other ops 0.
--
-- Line time. The script keeps its own clock, lt, advanced by the time
-- between calls as the callers stamp it, but by at most STEP a call; a
-- stamp more than TOLERANCE behind the last resynchronises without
-- advancing. Every deadline (a waiting visitor's last poll, a claim window,
-- a session's expiry, a tombstone) is in line time, so a store outage or a
-- quiet spell longer than STEP costs nobody a place, a call or a session,
-- and an edge whose clock is an hour off moves the line by STEP at most.
-- The price: when calls are more than STEP apart (a near-empty room),
-- deadlines run slower than the wall clock. The token bucket counts real
-- time between calls, at most burst plus catch-up's worth of it.
--
-- "admitted" counts positions in the calling order. In first-come order the
-- position is the ticket; in random order, visitors who arrived within the
-- same window are called in a keyed pseudorandom permutation of that
-- window's tickets, so no per-visitor state is stored and nobody waits
-- behind a later window. Only arithmetic is used, no bitwise library and
-- no hashing helper: Upstash runs its own Lua engine and promises neither.
--
-- Bounded work: one call calls at most MAX_CALLS tickets and passes over
-- at most MAX_CALLS tickets whose holders left; the rest wait for the next
-- call. Per-call cost does not grow with the line or the windows.
local STEP, TOLERANCE = 5000, 2000
local MAX_CALLS = 10000
local MAX_INT = 2 ^ 53

if #KEYS ~= 7 then
  return redis.error_reply('ERR line: want 7 keys, got ' .. #KEYS)
end
local line, sessions, called, waiting, arrivals, ended, windows =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]

-- number parses ARGV[i] as a finite number in [lo, hi] (an integer when
-- whole is set), or answers nil.
local function number(i, lo, hi, whole)
  local x = tonumber(ARGV[i])
  if x == nil or x ~= x or x < lo or x > hi or (whole and math.floor(x) ~= x) then
    return nil
  end
  return x
end

local ops = { join = true, poll = true, renew = true, ['end'] = true, admit = true,
  pause = true, resume = true, queue_all = true, stats = true }
local op = ARGV[1]
if #ARGV ~= 16 then
  return redis.error_reply('ERR line: want 16 arguments, got ' .. #ARGV)
end
if not ops[op] then
  return redis.error_reply('ERR line: unknown op ' .. string.format('%q', string.sub(op, 1, 40)))
end
local now = number(2, 0, MAX_INT, true)
local rate = number(3, 0, 1e9)
local burst = number(4, 0, 1e9, true)
local capacity = number(5, 0, 1e9, true)
local claim_ms = number(6, 0, MAX_INT, true)
local session_ms = number(7, 0, MAX_INT, true)
local queue_ms = number(8, 0, MAX_INT, true)
local arg = number(9, 0, MAX_INT, true)
local arrival = ARGV[10]
local ticket_epoch = number(11, 0, MAX_INT, true)
local window_ms = number(12, 0, MAX_INT, true)
local random_key = ARGV[13]
local catchup_ms = number(14, 0, MAX_INT, true)
local usable_until = number(15, 0, MAX_INT, true)
local heartbeat_ms = number(16, 0, MAX_INT, true)
if not (now and rate and burst and capacity and claim_ms and session_ms and queue_ms and arg
    and ticket_epoch and window_ms and catchup_ms and usable_until and heartbeat_ms) then
  return redis.error_reply('ERR line: bad arguments')
end
if op == 'join' and (#arrival < 1 or #arrival > 128) then
  return redis.error_reply('ERR line: join wants an arrival id of 1 to 128 bytes')
end
if op == 'admit' and arg > MAX_CALLS then
  return redis.error_reply('ERR line: admit at most ' .. MAX_CALLS .. ' at once')
end

local s = redis.call('HMGET', line, 'epoch', 'issued', 'admitted', 'tokens', 'raw', 'lt', 'paused', 'queue_all',
  'random', 'w_start', 'w_end', 'open_first', 'open_since', 'rkey', 'trim_mark', 'trim_at')
if not s[1] then
  -- A new line, or one whose hash was lost: nothing of an older line may
  -- leak into it (its tickets would collide with the new ones).
  redis.call('DEL', sessions, called, waiting, arrivals, ended, windows)
end
local epoch = tonumber(s[1]) or now
local issued = tonumber(s[2]) or 0
local admitted = tonumber(s[3]) or 0
local tokens = tonumber(s[4]) or burst
local raw = tonumber(s[5]) or now
local lt = tonumber(s[6]) or now
local paused = s[7] == '1'
local queue_all = s[8] == '1'
local was_random = s[9] == '1'
-- Random order: the window being called, and the window still filling.
-- The windows closed in between are in KEYS[7].
local w_start = tonumber(s[10]) or 1
local w_end = tonumber(s[11]) or 0
local open_first = tonumber(s[12]) or 1
local open_since = tonumber(s[13]) or now
random_key = s[14] or random_key
local trim_mark = tonumber(s[15]) or 0
local trim_at = tonumber(s[16]) or now
local minute = math.floor(now / 60000)
local called_now = 0

-- The clock: line time advances by the gap since the last call, at most
-- STEP; elapsed is the real gap, for the token bucket.
local elapsed = 0
if now >= raw then
  lt = lt + math.min(now - raw, STEP)
  elapsed = now - raw
  raw = now
elseif now < raw - TOLERANCE then
  raw = now
end

-- A room that changes its calling order mid-line: first-come order
-- restarts at the window being called (its called tickets are passed
-- over); random order starts with everyone waiting as one window.
local random = window_ms > 0
if random ~= was_random then
  redis.call('DEL', windows)
  if random then
    w_start, w_end = admitted + 1, admitted
    open_first, open_since = admitted + 1, lt
  elseif admitted < w_end then
    admitted = w_start - 1
  end
end

-- Forget what has expired: sessions, unclaimed calls, waiting visitors
-- who stopped polling, and tombstones. Memory follows the live population.
redis.call('ZREMRANGEBYSCORE', sessions, '-inf', lt)
redis.call('ZREMRANGEBYSCORE', called, '-inf', lt)
redis.call('ZREMRANGEBYSCORE', waiting, '-inf', lt - queue_ms)
redis.call('ZREMRANGEBYSCORE', ended, '-inf', lt)

-- free is how many more visitors may be called in now: capacity less live
-- sessions (ended ones whose passes still admit included) and calls still
-- inside their claim window.
local function free()
  if capacity <= 0 then
    return math.huge
  end
  return capacity - redis.call('ZCARD', sessions) - redis.call('ZCARD', called)
end

-- round_keys derives a window's round keys from the line's secret key: a
-- polynomial hash of the key and the window modulo a prime below 2^26,
-- then squarings modulo the same prime (every product stays below 2^53,
-- exact in Lua's doubles). A keyed mix, not a cryptographic one: enough
-- that visitors cannot tell the order without the key.
local P = 67108859
local round_keys = {}
local function keys_for(seed)
  local k = round_keys[seed]
  if k then
    return k
  end
  local text = random_key .. ':' .. epoch .. ':' .. seed
  local h = 0
  for i = 1, #text do
    h = (h * 257 + string.byte(text, i) + 1) % P
  end
  k = {}
  for r = 1, 8 do
    h = (h * h + 7919 * r + 1) % P
    k[r] = h
  end
  round_keys[seed] = k
  return k
end

-- permute maps i in [0, n) to a keyed pseudorandom j in [0, n): a
-- four-round Feistel network on [0, half^2) (each round adds a keyed
-- quadratic of one half to the other, a bijection) with cycle walking
-- back into [0, n).
local function permute(i, n, seed)
  if n <= 1 then
    return 0
  end
  local half = 2
  while half * half < n do
    half = half * 2
  end
  local k = keys_for(seed)
  local x = i
  repeat
    local l, r = math.floor(x / half), x % half
    for j = 1, 4 do
      local y = (r + k[2 * j - 1]) % P
      l, r = r, (l + (y * y + k[2 * j]) % P) % half
    end
    x = l * half + r
  until x < n
  return x
end

-- ticket_at is the ticket called at position p (the next one after those
-- called so far).
local function ticket_at(p)
  if not random then
    return p
  end
  if p > w_end then
    -- The next window: the oldest closed one, or, when none has closed,
    -- the one still filling, cut here so nobody waits for it to fill.
    w_start = w_end + 1
    local oldest = redis.call('ZPOPMIN', windows)
    if oldest[1] then
      w_end = tonumber(oldest[1])
    else
      w_end = issued
      open_first, open_since = issued + 1, lt
    end
  end
  return w_start + permute(p - w_start, w_end - w_start + 1, w_start)
end

-- call_in calls up to limit waiting tickets in order and returns the tokens
-- left. Automatic admission (bounded) obeys pause, queue-all, the rate and
-- the capacity; the operator's "admit N" does not. A ticket whose holder
-- stopped polling is passed over without using a place. One script call
-- calls and passes over at most MAX_CALLS tickets each.
local calls_left, skips_left = MAX_CALLS, MAX_CALLS
local function call_in(limit, available, bounded)
  if bounded and (paused or queue_all) then
    return available
  end
  local places = math.huge
  if bounded then
    places = free()
  end
  while admitted < issued and limit > 0 and places > 0 and calls_left > 0 and skips_left > 0
      and (not bounded or rate <= 0 or available >= 1) do
    admitted = admitted + 1
    local t = ticket_at(admitted)
    if redis.call('ZREM', waiting, t) == 1 then
      redis.call('ZADD', called, lt + claim_ms, t)
      places, limit, calls_left = places - 1, limit - 1, calls_left - 1
      called_now = called_now + 1
      if bounded and rate > 0 then
        available = available - 1
      end
    else
      skips_left = skips_left - 1
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
-- burst. A gap since the last call is made up for by at most catch-up's
-- worth beyond the burst, so a quiet spell never calls a crowd at once.
local available = tokens
if rate > 0 then
  available = math.min(tokens + elapsed * rate / 60000, burst + catchup_ms * rate / 60000)
end
tokens = math.min(burst, call_in(math.huge, available, true))

-- new_ticket hands out the next ticket, closing the filling random-order
-- window first when it has run its time.
local function new_ticket()
  if random and lt - open_since >= window_ms and issued >= open_first then
    redis.call('ZADD', windows, issued, issued)
    open_first, open_since = issued + 1, lt
  elseif random and issued < open_first then
    open_since = lt
  end
  issued = issued + 1
  redis.call('ZADD', waiting, lt, issued)
  settle()
  return issued
end

-- standing answers for ticket t of this line: 1 when it is (or now
-- becomes) a live session, 0 while it waits or its call is held under
-- queue-all, nil when its place is lost. Claiming is idempotent: every
-- poll of a claimed ticket answers with the same session, and extends it,
-- since the answer carries a pass that admits for a heartbeat.
local function standing(t)
  if t < 1 or t > issued or redis.call('ZSCORE', ended, t) then
    return nil
  end
  if redis.call('ZSCORE', sessions, t) then
    redis.call('ZADD', sessions, lt + session_ms, t)
    return 1
  end
  if redis.call('ZSCORE', called, t) then
    if queue_all then
      redis.call('ZADD', called, lt + claim_ms, t)
      return 0
    end
    redis.call('ZREM', called, t)
    redis.call('ZADD', sessions, lt + session_ms, t)
    return 1
  end
  if redis.call('ZSCORE', waiting, t) then
    redis.call('ZADD', waiting, lt, t)
    return 0
  end
  return nil
end

local ticket, outcome = 0, 0
if op == 'join' then
  -- A known arrival whose ticket still holds a place is answered as a
  -- poll of that ticket: a replayed arrival never takes a second place.
  local known = tonumber(redis.call('ZSCORE', arrivals, arrival))
  local o = known and standing(known)
  if o then
    ticket, outcome = known, o
  else
    ticket = new_ticket()
    redis.call('ZADD', arrivals, ticket, arrival)
    outcome = standing(ticket) or 0
  end
elseif op == 'poll' then
  -- A ticket of an earlier line (its state was lost or reset), or whose
  -- place is gone (called but not claimed in time, passed over while its
  -- holder was away, or its session ended), is replaced at the back.
  local o = ticket_epoch == epoch and standing(arg)
  if o then
    ticket, outcome = arg, o
  else
    ticket = new_ticket()
    outcome = standing(ticket) == 1 and 1 or 2
  end
elseif op == 'renew' then
  -- A session the store no longer holds (lost with the store's state) is
  -- taken back when a place is free, unless it ended.
  if ticket_epoch == epoch and arg >= 1 and arg <= issued and not redis.call('ZSCORE', ended, arg) then
    if redis.call('ZSCORE', sessions, arg) or (not redis.call('ZSCORE', waiting, arg)
        and not redis.call('ZSCORE', called, arg) and free() >= 1) then
      redis.call('ZADD', sessions, lt + session_ms, arg)
      outcome = 1
    end
  end
elseif op == 'end' then
  -- Never renewed again; the place is held while a pass of it may still
  -- admit without asking, then freed: the ending pass's usable_until, or,
  -- when another tab holds the pass of a later renewal (expiry less the
  -- ttl), that renewal plus a heartbeat.
  if ticket_epoch == epoch and arg >= 1 and arg <= issued then
    redis.call('ZADD', ended, lt + session_ms, arg)
    local expiry = tonumber(redis.call('ZSCORE', sessions, arg))
    if expiry then
      local left = math.max(usable_until - now, expiry - session_ms + heartbeat_ms - lt)
      local hold = lt + math.min(left, session_ms)
      if hold <= lt then
        redis.call('ZREM', sessions, arg)
      elseif hold < expiry then
        redis.call('ZADD', sessions, hold, arg)
      end
    end
  end
  settle()
elseif op == 'admit' then
  call_in(arg, 0, false)
elseif op == 'pause' then
  paused = true
elseif op == 'resume' then
  paused, queue_all = false, false
  settle()
elseif op == 'queue_all' then
  queue_all = true
end

-- The ticket's group, in calling positions: itself in first-come order;
-- in random order its window, and how many windows ahead of it are not
-- fully called yet.
local call_from, call_to, groups_ahead = ticket, ticket, 0
if random and ticket >= w_start and ticket > 0 then
  local current = (admitted < w_end) and 1 or 0
  if ticket <= w_end then
    call_from, call_to = w_start, w_end
  else
    local after = redis.call('ZRANGEBYSCORE', windows, ticket, '+inf', 'LIMIT', 0, 1)
    if after[1] then
      local before = redis.call('ZREVRANGEBYSCORE', windows, '(' .. ticket, '-inf', 'LIMIT', 0, 1)
      call_from, call_to = (tonumber(before[1]) or w_end) + 1, tonumber(after[1])
      groups_ahead = current + redis.call('ZCOUNT', windows, '-inf', '(' .. ticket)
    else
      call_from, call_to = open_first, issued
      groups_ahead = current + redis.call('ZCARD', windows)
    end
  end
end

-- Arrivals are kept a while after the line reaches their ticket (a replay
-- within a claim window, and at least a minute, finds its session), then
-- trimmed in one range: every turn, those reached by the turn before.
if lt >= trim_at then
  redis.call('ZREMRANGEBYSCORE', arrivals, '-inf', trim_mark)
  trim_mark = admitted
  if random and admitted < w_end then
    trim_mark = w_start - 1
  end
  trim_at = lt + math.max(claim_ms, 60000)
end

-- Count admissions per minute for the wait estimate, in five slots m0..m4
-- holding "minute:count": a slot is reused five minutes on, so the count
-- never outgrows five fields, however long a room sits idle. Minutes are
-- the callers' clock: this is a statistic, not a deadline.
local function slot_count(m, value)
  local sep = value and string.find(value, ':', 1, true)
  if sep and tonumber(string.sub(value, 1, sep - 1)) == m then
    return tonumber(string.sub(value, sep + 1)) or 0
  end
  return 0
end
local slots = redis.call('HMGET', line, 'm0', 'm1', 'm2', 'm3', 'm4')
if called_now > 0 then
  local i = minute % 5
  local count = slot_count(minute, slots[i + 1]) + called_now
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
  'tokens', string.format('%.6f', tokens), 'raw', raw, 'lt', lt,
  'paused', paused and '1' or '0', 'queue_all', queue_all and '1' or '0', 'random', random and '1' or '0',
  'w_start', w_start, 'w_end', w_end, 'open_first', open_first, 'open_since', open_since, 'rkey', random_key,
  'trim_mark', trim_mark, 'trim_at', trim_at)
local flags = (paused and 1 or 0) + (queue_all and 2 or 0)
return { epoch, issued, admitted, flags, ticket, outcome,
  redis.call('ZCARD', sessions), redis.call('ZCARD', called), recent, since,
  called_now, call_from, call_to, groups_ahead }

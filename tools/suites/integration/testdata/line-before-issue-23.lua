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
-- KEYS[8] zset: invites used, member = invite id, score = keep-until minute
--               * 1e6 + uses
-- KEYS[9] hash: the room's history, one field per minute of the last day
--               (minute mod 1440), "minute,epoch,issued,admitted,joins,
--               calls,active,waiting,refusals,issued first moved, issued
--               last moved, admitted first moved, admitted last moved"
--               (ms into the minute, -1 when they did not)
-- KEYS[10] list: the operator's audit log, newest first, JSON entries
-- Every score that is a time is in line time (below), in milliseconds.
-- The line's hash also holds the priority lane (p_issued, p_admitted,
-- p_credit, p_trim) and the scheduled event (ev, ev_state, ev_first,
-- ev_start, ev_key, d_first, d_last, d_key), and the operator's live
-- overrides (o_rate, o_burst, o_cap, o_mode; '' for none).
--
-- ARGV: op, now (ms), rate (per minute, 0 = none), burst, capacity (0 =
--       none), claim window (ms), session ttl (ms), queue timeout (ms), arg
--       (a ticket, or n for admit), arrival id (join), epoch of the ticket
--       or session (poll, renew, end), random window (ms; 0 = first come,
--       first served), a random key for a new line (an existing line keeps
--       the key it was created with), catch-up (ms), usable until (ms, end),
--       heartbeat (ms: how long a session pass admits without asking),
--       priority share (0 to 1), invite id, invite uses, invite keep-until
--       (ms; vip), event id ('' for none), its pre-queue start, start and
--       end (ms), its draw key, the configured mode (fifo, random,
--       passthrough, reject: the random window above is the room's whatever
--       the mode), an operator action's audit entry ('' for none: a JSON
--       object without its closing brace), the overrides to set (limits:
--       rate, burst, capacity, mode; '' keeps one), and 1 when the
--       request's pass was refused (counted in the history), else 0
-- ops: join | vip | poll | renew | end | admit | pause | resume | queue_all
--      | limits | clear | reset | stats
-- Every argument is checked before anything is written: a bad one, or an
-- unknown op, is an error and changes nothing.
--
-- Returns {epoch, issued, admitted, flags (1 paused, 2 queue-all), ticket,
--          outcome, live sessions, called, admitted in the last 5 minutes,
--          since, called by this call, call from, call to, groups ahead,
--          priority issued, priority admitted, event state, pre-queue
--          first ticket, drawn first, drawn last, overridden rate (in
--          thousandths), burst and capacity (-1 for none), overridden mode
--          (0 none, 1 fifo, 2 random, 3 passthrough, 4 reject)}
-- outcome: join/vip/poll 0 waiting, 1 admitted (the ticket is the live
--          session <epoch>.<ticket>), 2 rejoined (the old ticket was lost;
--          ticket is the new one), 3 (vip) the invite is used up, 4 closed
--          (the live mode is reject: no ticket handed out, none called);
--          renew 1 ok, 0 gone; other ops 0.
--
-- Operator overrides. limits sets the live rate, burst, capacity or mode,
-- clear clears them all; they replace the configured values in every call
-- until cleared. passthrough calls everyone at once; reject hands out no
-- ticket and calls nobody (live sessions continue). reset starts the line
-- afresh under a new epoch: every ticket and session of the old one is
-- void; the switches, overrides, invites used, history and audit log stay.
-- An action's audit entry is appended in the same call, with the state
-- before and after, and the log is capped at AUDIT_CAP entries.
--
-- History. Every call writes its minute's record: the counters, sessions
-- and waiting tickets as it leaves them, and what it added (tickets handed
-- out, called, requests refused). A record is overwritten a day later, so
-- the history never outgrows 1440 fields.
-- event state, of the event passed: 0 not entered, 1 pre-queue, 2 drawn.
--
-- Priority lane. A vip join (an invite) takes a ticket in the room's
-- priority lane, numbered -1, -2, ...: called first come, first served,
-- ahead of the regular line, but at most the priority share of the
-- admissions while regular tickets wait (a credit earned by each regular
-- call pays for a priority one), so the regular line never stalls; when no
-- regular ticket waits, priority tickets take every place. An invite's uses
-- are counted here, in the same call that hands out the ticket.
--
-- Scheduled events. The first call at or after an event's pre-queue start
-- enters it (exactly once: the event id is kept): tickets from then on form
-- the pre-queue, and nobody from it is called until the draw. The first
-- call at or after the start draws: the pre-queue's tickets are called in
-- the keyed permutation of the draw key (the edge commits to the key's hash
-- when the pre-queue opens and reveals the key after the draw), and later
-- tickets follow in the room's own order. The pre-queue keeps the start
-- it was last passed (the operator may move it) and the key it was entered
-- with: it is drawn at that start even if its event is no longer passed
-- (removed or renamed), so nobody is held for ever and no stray call can
-- draw it early.
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
local MAX_USES = 100000
local AUDIT_CAP, DAY = 1000, 1440

if #KEYS ~= 10 then
  return redis.error_reply('ERR line: want 10 keys, got ' .. #KEYS)
end
local line, sessions, called, waiting, arrivals, ended, windows, invites, history, audit =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10]

-- number parses ARGV[i] as a finite number in [lo, hi] (an integer when
-- whole is set), or answers nil.
local function number(i, lo, hi, whole)
  local x = tonumber(ARGV[i])
  if x == nil or x ~= x or x < lo or x > hi or (whole and math.floor(x) ~= x) then
    return nil
  end
  return x
end

local ops = { join = true, vip = true, poll = true, renew = true, ['end'] = true, admit = true,
  pause = true, resume = true, queue_all = true, stats = true, limits = true, clear = true, reset = true }
local modes = { fifo = 1, random = 2, passthrough = 3, reject = 4 }
local op = ARGV[1]
if #ARGV ~= 32 then
  return redis.error_reply('ERR line: want 32 arguments, got ' .. #ARGV)
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
local arg = number(9, -MAX_INT, MAX_INT, true)
local arrival = ARGV[10]
local ticket_epoch = number(11, 0, MAX_INT, true)
local window_ms = number(12, 0, MAX_INT, true)
local random_key = ARGV[13]
local catchup_ms = number(14, 0, MAX_INT, true)
local usable_until = number(15, 0, MAX_INT, true)
local heartbeat_ms = number(16, 0, MAX_INT, true)
local share = number(17, 0, 1)
local invite = ARGV[18]
local invite_uses = number(19, 0, MAX_USES, true)
local invite_until = number(20, 0, MAX_INT, true)
local ev_id = ARGV[21]
local ev_pq = number(22, 0, MAX_INT, true)
local ev_start = number(23, 0, MAX_INT, true)
local ev_end = number(24, 0, MAX_INT, true)
local ev_key = ARGV[25]
local cfg_mode = ARGV[26]
local audit_entry = ARGV[27]
local set_rate, set_burst, set_cap = ARGV[28], ARGV[29], ARGV[30]
local set_mode = ARGV[31]
local refused = ARGV[32] == '1' and 1 or 0
-- optional parses an override's argument: '' is none (false), anything
-- else must be a decimal number in [0, 1e9] (it is written into the audit
-- log's JSON as it is, so no hex, no exponent).
local function optional(i, whole)
  if ARGV[i] == '' then
    return false
  end
  if not string.match(ARGV[i], '^%d+%.?%d*$') then
    return nil
  end
  return number(i, 0, 1e9, whole)
end
local o_set = { optional(28), optional(29, true), optional(30, true) }
if o_set[1] == nil or o_set[2] == nil or o_set[3] == nil or not modes[cfg_mode]
    or (set_mode ~= '' and not modes[set_mode]) or #audit_entry > 1024 then
  return redis.error_reply('ERR line: bad mode, override or audit entry')
end
if op == 'limits' and not (o_set[1] or o_set[2] or o_set[3] or set_mode ~= '') then
  return redis.error_reply('ERR line: limits wants a value to set')
end
if not (now and rate and burst and capacity and claim_ms and session_ms and queue_ms and arg
    and ticket_epoch and window_ms and catchup_ms and usable_until and heartbeat_ms and share
    and invite_uses and invite_until and ev_pq and ev_start and ev_end) then
  return redis.error_reply('ERR line: bad arguments')
end
if (op == 'join' or op == 'vip') and (#arrival < 1 or #arrival > 128) then
  return redis.error_reply('ERR line: join wants an arrival id of 1 to 128 bytes')
end
if op == 'vip' and (#invite < 1 or #invite > 128 or invite_uses < 1) then
  return redis.error_reply('ERR line: vip wants an invite id of 1 to 128 bytes and at least one use')
end
if #ev_id > 128 or (#ev_id > 0 and (#ev_key < 16 or #ev_key > 128 or not (ev_pq <= ev_start and ev_start < ev_end))) then
  return redis.error_reply('ERR line: an event wants an id of at most 128 bytes, a draw key of 16 to 128 bytes and pre-queue <= start < end')
end
if op == 'admit' and arg > MAX_CALLS then
  return redis.error_reply('ERR line: admit at most ' .. MAX_CALLS .. ' at once')
end

local s = redis.call('HMGET', line, 'epoch', 'issued', 'admitted', 'tokens', 'raw', 'lt', 'paused', 'queue_all',
  'random', 'w_start', 'w_end', 'open_first', 'open_since', 'rkey', 'trim_mark', 'trim_at',
  'p_issued', 'p_admitted', 'p_credit', 'p_trim', 'ev', 'ev_state', 'ev_first', 'ev_start', 'ev_key', 'd_first',
  'd_last', 'd_key', 'rounds', 'o_rate', 'o_burst', 'o_cap', 'o_mode')
-- The overrides, and what an action's audit entry reports as before.
local o_rate, o_burst, o_cap = tonumber(s[30]), tonumber(s[31]), tonumber(s[32])
local o_mode = modes[s[33]] and s[33] or ''
local function state_json(e, i, a, p, q)
  local function opt(v)
    return v and tostring(v) or 'null'
  end
  local m = 'null'
  if o_mode ~= '' then
    m = '"' .. o_mode .. '"'
  end
  return '{"epoch":' .. e .. ',"issued":' .. i .. ',"admitted":' .. a .. ',"paused":' .. tostring(p)
    .. ',"queue_all":' .. tostring(q) .. ',"max_active_users":' .. opt(o_cap) .. ',"new_users_per_minute":'
    .. opt(o_rate) .. ',"burst":' .. opt(o_burst) .. ',"mode":' .. m .. '}'
end
local before = ''
if #audit_entry > 0 then
  before = state_json(tonumber(s[1]) or 0, tonumber(s[2]) or 0, tonumber(s[3]) or 0, s[7] == '1', s[8] == '1')
end
if op == 'limits' then
  o_rate, o_burst, o_cap = o_set[1] or o_rate, o_set[2] or o_burst, o_set[3] or o_cap
  if set_mode ~= '' then
    o_mode = set_mode
  end
elseif op == 'clear' then
  o_rate, o_burst, o_cap, o_mode = nil, nil, nil, ''
elseif op == 'reset' and s[1] then
  -- A new line under a later epoch: only the switches carry over (and
  -- the overrides, read above).
  local paused_was, queue_all_was = s[7], s[8]
  redis.call('DEL', line, sessions, called, waiting, arrivals, ended, windows)
  s = { tostring(math.max(now, tonumber(s[1]) + 1)) }
  s[7], s[8] = paused_was, queue_all_was
end
-- The operator's values replace the configured ones.
rate, burst, capacity = o_rate or rate, o_burst or burst, o_cap or capacity
local mode = cfg_mode
if o_mode ~= '' then
  mode = o_mode
end
if mode == 'passthrough' then
  rate, capacity = 0, 0
end
local closed = mode == 'reject'
if not s[1] then
  -- A new line, or one whose hash was lost: nothing of an older line may
  -- leak into it (its tickets would collide with the new ones). Invites
  -- stay used: a reset must not hand their places out again.
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
local p_issued = tonumber(s[17]) or 0
local p_admitted = tonumber(s[18]) or 0
local p_credit = tonumber(s[19]) or 1
local p_trim = tonumber(s[20]) or 0
local ev = s[21] or ''
local ev_state = tonumber(s[22]) or 0
local ev_first = tonumber(s[23]) or 0
local stored_start = tonumber(s[24]) or 0
local stored_key = s[25] or ''
local d_first = tonumber(s[26]) or 1
local d_last = tonumber(s[27]) or 0
local d_key = s[28] or ''
local minute = math.floor(now / 60000)
local called_now = 0
local issued0, admitted0 = issued, admitted

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
-- A drawn pre-queue being called stays one window, in its drawn order.
local random = mode == 'random' and window_ms > 0
if random ~= was_random then
  redis.call('DEL', windows)
  if random then
    w_start, w_end = admitted + 1, admitted
    if d_first <= admitted and admitted < d_last then
      w_start, w_end = d_first, d_last
    end
    open_first, open_since = w_end + 1, lt
  elseif admitted < w_end then
    admitted = w_start - 1
  end
end

-- The scheduled event. A pre-queue is drawn once its start has come and
-- the previous draw is called through, since one drawn range is kept at a
-- time. In random order the pre-queue becomes one closed window, apart
-- from the windows before it.
local function draw()
  d_first, d_last, d_key = ev_first, issued, stored_key
  ev_state = 2
end
if ev_state == 1 and ev == ev_id then
  stored_start = ev_start -- the operator may move the start
end
if ev_state == 1 and now >= stored_start and admitted >= d_last then
  if random then
    if ev_first - 1 >= open_first then
      redis.call('ZADD', windows, ev_first - 1, ev_first - 1)
    end
    if issued >= ev_first then
      redis.call('ZADD', windows, issued, issued)
    end
    open_first, open_since = issued + 1, lt
  end
  draw()
end
if ev ~= ev_id and ev_state ~= 1 and #ev_id > 0 and now >= ev_pq and now < ev_end then
  if random and issued >= open_first then
    redis.call('ZADD', windows, issued, issued)
  end
  if random then
    open_first, open_since = issued + 1, lt
  end
  ev, ev_state, ev_first, stored_start, stored_key = ev_id, 1, issued + 1, ev_start, ev_key
  if now >= ev_start and admitted >= d_last then
    -- Entered after its start: an empty pre-queue, drawn at once.
    draw()
  end
end
local held = ev_state == 1

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

-- keys_for derives a window's round keys from the line's secret key (or a
-- drawn pre-queue's from its draw key): each round key is a polynomial
-- hash of the key and the window, with a multiplier of its own, modulo a
-- prime below 2^26, then squared (every product stays below 2^53, exact
-- in Lua's doubles). One hash per key, because keys all derived from one
-- 26-bit hash (as with four rounds) allow fewer than 2^25 orders, and so
-- in long ranges some places are likelier than others. A keyed mix, not a
-- cryptographic one: enough that visitors cannot tell the order without
-- the key. Package draw computes the same in Go.
local P = 67108859
local ROUNDS = 12
-- A line that was calling a random window when the script went from four
-- rounds to ROUNDS finishes that window with four, or some of its tickets
-- would never be called; every window begun since uses ROUNDS.
local rounds = tonumber(s[29])
if not rounds then
  rounds = ROUNDS
  if s[1] and was_random and admitted < w_end then
    rounds = 4
  end
end
local round_keys = {}
local function keys_for(seed)
  local k = round_keys[seed]
  if k then
    return k
  end
  local text, n = random_key .. ':' .. epoch .. ':' .. seed, rounds
  if seed == d_first and d_first <= d_last then
    text, n = 'draw:' .. d_key, ROUNDS
  end
  k = {}
  if n == 4 then
    -- The previous script's keys, for the window it began.
    local h = 0
    for i = 1, #text do
      h = (h * 257 + string.byte(text, i) + 1) % P
    end
    for r = 1, 8 do
      h = (h * h + 7919 * r + 1) % P
      k[r] = h
    end
  else
    for r = 1, 2 * n do
      local h, m = 0, 257 + 2 * r
      for i = 1, #text do
        h = (h * m + string.byte(text, i) + 1) % P
      end
      k[r] = (h * h + 7919 * r + 1) % P
    end
  end
  round_keys[seed] = k
  return k
end

-- permute maps i in [0, n) to a keyed pseudorandom j in [0, n): a
-- Feistel network of ROUNDS rounds on [0, half^2) (each round adds a keyed
-- quadratic of one half to the other, a bijection) with cycle walking
-- back into [0, n). Twelve rounds, because with four every place was not
-- equally likely in small windows (a chi-square test in package draw).
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
    for j = 1, #k / 2 do
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
    if d_first <= p and p <= d_last then
      return d_first + permute(p - d_first, d_last - d_first + 1, d_first)
    end
    return p
  end
  if p > w_end then
    -- The next window: the oldest closed one, or, when none has closed,
    -- the one still filling, cut here so nobody waits for it to fill.
    w_start, rounds = w_end + 1, ROUNDS
    local oldest = redis.call('ZPOPMIN', windows)
    if oldest[1] then
      w_end = tonumber(oldest[1])
    else
      w_end = issued
      if held then
        w_end = ev_first - 1
      end
      open_first, open_since = w_end + 1, lt
    end
  end
  return w_start + permute(p - w_start, w_end - w_start + 1, w_start)
end

-- call_in calls up to limit waiting tickets in order and returns the tokens
-- left. Automatic admission (bounded) obeys pause, queue-all, the rate and
-- the capacity; the operator's "admit N" does not. A ticket whose holder
-- stopped polling is passed over without using a place. One script call
-- calls and passes over at most MAX_CALLS tickets each. The next ticket is
-- the priority lane's while it has credit (or no regular ticket waits);
-- nobody from the pre-queue, nor the priority lane, is called before the
-- draw.
local calls_left, skips_left = MAX_CALLS, MAX_CALLS
local earn = 1
if share < 1 then
  earn = share / (1 - share)
end
local function call_in(limit, available, bounded)
  if bounded and (paused or queue_all or closed) then
    return available
  end
  local places = math.huge
  if bounded then
    places = free()
  end
  while limit > 0 and places > 0 and calls_left > 0 and skips_left > 0
      and (not bounded or rate <= 0 or available >= 1) do
    local regular = admitted < issued and not (held and admitted + 1 >= ev_first)
    local t
    if p_admitted < p_issued and not held and (p_credit >= 1 or not regular) then
      p_admitted = p_admitted + 1
      t = -p_admitted
    elseif regular then
      admitted = admitted + 1
      t = ticket_at(admitted)
    else
      break
    end
    if redis.call('ZREM', waiting, t) == 1 then
      redis.call('ZADD', called, lt + claim_ms, t)
      places, limit, calls_left = places - 1, limit - 1, calls_left - 1
      called_now = called_now + 1
      if bounded and rate > 0 then
        available = available - 1
      end
      if t < 0 then
        p_credit = math.max(p_credit - 1, 0)
      else
        -- What is short of a call carries over while the lane waits, so
        -- it gets its share exactly (0.3, 0.9, ...); an idle lane (or one
        -- held for a draw) banks one call at most.
        local bank = 1
        if p_admitted < p_issued and not held then
          bank = 1 + earn
        end
        p_credit = math.min(p_credit + earn, bank)
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
  if random and not held and lt - open_since >= window_ms and issued >= open_first then
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

-- new_priority hands out the priority lane's next ticket.
local function new_priority()
  p_issued = p_issued + 1
  redis.call('ZADD', waiting, lt, -p_issued)
  settle()
  return -p_issued
end

-- valid reports whether t is a ticket this line has handed out.
local function valid(t)
  return (t >= 1 and t <= issued) or (t <= -1 and -t <= p_issued)
end

-- standing answers for ticket t of this line: 1 when it is (or now
-- becomes) a live session, 0 while it waits or its call is held under
-- queue-all, nil when its place is lost. Claiming is idempotent: every
-- poll of a claimed ticket answers with the same session, and extends it,
-- since the answer carries a pass that admits for a heartbeat.
local function standing(t)
  if not valid(t) or redis.call('ZSCORE', ended, t) then
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

-- closed_poll answers for ticket t of this line while the room is closed:
-- a live session stays one; a waiting or called ticket keeps its place
-- (it is seen, and its call held as under queue-all) but is not let in.
local function closed_poll(t)
  if valid(t) and redis.call('ZSCORE', sessions, t) then
    return standing(t)
  end
  if valid(t) then
    if redis.call('ZSCORE', waiting, t) then
      redis.call('ZADD', waiting, lt, t)
    elseif redis.call('ZSCORE', called, t) then
      redis.call('ZADD', called, lt + claim_ms, t)
    end
  end
  return 4
end

local ticket, outcome = 0, 0
local joined = issued + p_issued
if closed and (op == 'join' or op == 'vip') then
  -- A replayed arrival whose ticket became a session is still answered.
  local known = tonumber(redis.call('ZSCORE', arrivals, arrival))
  if known and closed_poll(known) == 1 then
    ticket, outcome = known, 1
  else
    outcome = 4
  end
elseif closed and op == 'poll' then
  ticket, outcome = arg, 4
  if ticket_epoch == epoch then
    outcome = closed_poll(arg)
  end
elseif op == 'join' then
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
elseif op == 'vip' then
  -- As a join, in the priority lane, while the invite has uses left; a
  -- replay is answered with its ticket and uses none. Invites are kept
  -- until the edge says they can no longer be presented.
  redis.call('ZREMRANGEBYSCORE', invites, '-inf', '(' .. (math.floor(now / 60000) * 1e6))
  local known = tonumber(redis.call('ZSCORE', arrivals, arrival))
  local o = known and standing(known)
  if o then
    ticket, outcome = known, o
  else
    local used = (tonumber(redis.call('ZSCORE', invites, invite)) or 0) % 1e6
    if used >= invite_uses then
      outcome = 3
    else
      ticket = new_priority()
      redis.call('ZADD', arrivals, ticket, arrival)
      redis.call('ZADD', invites, math.floor(invite_until / 60000) * 1e6 + used + 1, invite)
      outcome = standing(ticket) or 0
    end
  end
elseif op == 'poll' then
  -- A ticket of an earlier line (its state was lost or reset), or whose
  -- place is gone (called but not claimed in time, passed over while its
  -- holder was away, or its session ended), is replaced at the back.
  -- A lost priority ticket is replaced in the priority lane.
  local o = ticket_epoch == epoch and standing(arg)
  if o then
    ticket, outcome = arg, o
  else
    if arg < 0 then
      ticket = new_priority()
    else
      ticket = new_ticket()
    end
    outcome = standing(ticket) == 1 and 1 or 2
  end
elseif op == 'renew' then
  -- A session the store no longer holds (lost with the store's state) is
  -- taken back when a place is free, unless it ended.
  if ticket_epoch == epoch and valid(arg) and not redis.call('ZSCORE', ended, arg) then
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
  if ticket_epoch == epoch and valid(arg) then
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
if held and ticket >= ev_first then
  call_from, call_to = ev_first, issued
elseif not random and d_first <= ticket and ticket <= d_last then
  call_from, call_to = d_first, d_last
elseif random and ticket >= w_start and ticket > 0 then
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
  redis.call('ZREMRANGEBYSCORE', arrivals, 1, trim_mark)
  redis.call('ZREMRANGEBYSCORE', arrivals, -p_trim, -1)
  trim_mark, p_trim = admitted, p_admitted
  if random and admitted < w_end then
    trim_mark = w_start - 1
  elseif d_first <= admitted and admitted < d_last then
    trim_mark = d_first - 1
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
  'trim_mark', trim_mark, 'trim_at', trim_at, 'p_issued', p_issued, 'p_admitted', p_admitted,
  'p_credit', string.format('%.6f', p_credit), 'p_trim', p_trim, 'ev', ev, 'ev_state', ev_state,
  'ev_first', ev_first, 'ev_start', stored_start, 'ev_key', stored_key, 'd_first', d_first, 'd_last', d_last, 'd_key', d_key,
  'rounds', rounds, 'o_rate', o_rate or '', 'o_burst', o_burst or '', 'o_cap', o_cap or '', 'o_mode', o_mode)

-- This minute's record in the history: the fields of a record a day old
-- are started afresh.
local live, waiting_now = redis.call('ZCARD', sessions), redis.call('ZCARD', waiting)
local refusals = refused
if outcome == 3 or (outcome == 4 and op ~= 'poll') then
  refusals = refusals + 1
end
local slot = tostring(minute % DAY)
local rec = {}
for v in string.gmatch(redis.call('HGET', history, slot) or '', '[^,]+') do
  rec[#rec + 1] = tonumber(v) or 0
end
if rec[1] ~= minute or #rec ~= 13 then
  rec = { minute, 0, 0, 0, 0, 0, 0, 0, 0, -1, -1, -1, -1 }
end
-- When in the minute the counters first and last moved (ms into it), so
-- that a reader can tell a burst from a steady stream.
local into = now - minute * 60000
if issued ~= issued0 then
  rec[10], rec[11] = rec[10] < 0 and into or rec[10], into
end
if admitted ~= admitted0 then
  rec[12], rec[13] = rec[12] < 0 and into or rec[12], into
end
rec[2], rec[3], rec[4], rec[7], rec[8] = epoch, issued, admitted, live, waiting_now
rec[5] = rec[5] + issued + p_issued - joined
rec[6] = rec[6] + called_now
rec[9] = rec[9] + refusals
redis.call('HSET', history, slot, table.concat(rec, ','))

-- The operator's action, with the state before and after it.
if #audit_entry > 0 then
  redis.call('LPUSH', audit, audit_entry .. ',"before":' .. before .. ',"after":'
    .. state_json(epoch, issued, admitted, paused, queue_all) .. '}')
  redis.call('LTRIM', audit, 0, AUDIT_CAP - 1)
end

local flags = (paused and 1 or 0) + (queue_all and 2 or 0)
-- The event's figures are for the event passed, and only once entered.
local state, pq_first, drawn_first, drawn_last = 0, 0, 0, 0
if #ev_id > 0 and ev == ev_id then
  state, pq_first = ev_state, ev_first
  if ev_state == 2 then
    drawn_first, drawn_last = d_first, d_last
  end
end
return { epoch, issued, admitted, flags, ticket, outcome,
  live, redis.call('ZCARD', called), recent, since,
  called_now, call_from, call_to, groups_ahead, p_issued, p_admitted, state, pq_first,
  drawn_first, drawn_last, o_rate and math.floor(o_rate * 1000 + 0.5) or -1, o_burst or -1, o_cap or -1,
  modes[o_mode] or 0 }

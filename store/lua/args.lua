-- args.lua: every argument parsed and checked before anything is written,
-- and an operator action's retry turned into stats.
-- KEYS: audit (its recent entries, for the retry).
-- ARGV: all of the header and of op's tail.
-- Reply: none set here; a bad or missing argument is an error.
-- arg is the argument of that name, in the header or op's tail; '' when
-- op sends none.
local function arg(name)
  return A[name] or ''
end

-- number parses an argument as a finite number in [lo, hi] (an integer
-- when whole is set), or answers nil; one that op does not send is 0.
local function number(name, lo, hi, whole)
  local v = A[name]
  if v == nil or v == '0' then
    return 0
  elseif v == '1' and lo <= 1 and 1 <= hi then
    return 1
  end
  local x = tonumber(v)
  if x == nil or x ~= x or x < lo or x > hi or (whole and math.floor(x) ~= x) then
    return nil
  end
  return x
end

local modes = { fifo = 1, random = 2, passthrough = 3, reject = 4 }
local now = number('now', 0, MAX_INT, true)
local rate = number('rate', 0, 1e9)
local burst = number('burst', 0, 1e9, true)
local capacity = number('capacity', 0, 1e9, true)
local claim_ms = number('claim_ms', 0, MAX_INT, true)
local session_ms = number('session_ms', 0, MAX_INT, true)
local queue_ms = number('queue_ms', 0, MAX_INT, true)
local window_ms = number('window_ms', 0, MAX_INT, true)
local catchup_ms = number('catchup_ms', 0, MAX_INT, true)
local heartbeat_ms = number('heartbeat_ms', 0, MAX_INT, true)
local share = number('share', 0, 1)
local cfg_mode = arg('mode')
local random_key = arg('random_key')
local ev_name = arg('ev_name')
local ev_pq = number('ev_pq', 0, MAX_INT, true)
local ev_start = number('ev_start', 0, MAX_INT, true)
local ev_end = number('ev_end', 0, MAX_INT, true)
local ev_key = arg('ev_key')
local refused = arg('refused') == '1' and 1 or 0
local arrival = arg('arrival')
local t_arg = number('ticket', -MAX_INT, MAX_INT, true)
local ticket_epoch = number('epoch', 0, MAX_INT, true)
local failed_at = number('failed_at', 0, MAX_INT, true)
local usable_until = number('usable_until', 0, MAX_INT, true)
local admit_n = number('n', 0, MAX_CALLS, true)
local invite = arg('invite')
local invite_uses = number('uses', 0, MAX_USES, true)
local invite_until = number('invite_until', 0, MAX_INT, true)
local audit_entry = arg('audit')
local set_mode = arg('set_mode')
-- optional parses an override's argument: '' is none (false), anything
-- else must be a decimal number in [0, 1e9] (it is written into the audit
-- log's JSON as it is, so no hex, no exponent).
local function optional(name, whole)
  if arg(name) == '' then
    return false
  end
  if not string.match(arg(name), '^%d+%.?%d*$') then
    return nil
  end
  return number(name, 0, 1e9, whole)
end
local o_set = { optional('set_rate'), optional('set_burst', true), optional('set_cap', true) }
if o_set[1] == nil or o_set[2] == nil or o_set[3] == nil or not modes[cfg_mode]
    or (set_mode ~= '' and not modes[set_mode]) or #audit_entry > 1024 then
  return redis.error_reply('ERR line: bad mode, override or audit entry')
end
if op == 'limits' and not (o_set[1] or o_set[2] or o_set[3] or set_mode ~= '') then
  return redis.error_reply('ERR line: limits wants a value to set')
end
do
  local k, i = number('shards', 1, 1024, true), number('shard', 0, 1023, true)
  if not (k and i and i < k) then
    return redis.error_reply('ERR line: want 1 to 1024 shards and a shard below them')
  end
end
if not (now and rate and burst and capacity and claim_ms and session_ms and queue_ms and t_arg
    and ticket_epoch and window_ms and catchup_ms and usable_until and heartbeat_ms and share and failed_at
    and admit_n and invite_uses and invite_until and ev_pq and ev_start and ev_end) then
  return redis.error_reply('ERR line: bad arguments')
end
if (op == 'join' or op == 'vip') and (#arrival < 1 or #arrival > 128) then
  return redis.error_reply('ERR line: join wants an arrival id of 1 to 128 bytes')
end
if op == 'vip' and (#invite < 1 or #invite > 128 or invite_uses < 1) then
  return redis.error_reply('ERR line: vip wants an invite id of 1 to 128 bytes and at least one use')
end
-- An action's retry: an action whose id (the audit entry's "id", which
-- Go restricts to [%w._:-]) is among the room's recent audit entries has
-- applied here already (a failure on another shard, or a lost answer, made
-- its caller try again), so it applies nothing and answers the line as it
-- is: an action applies once on each line, whatever its retries.
do
  local id = string.match(audit_entry, '"id":"([%w._:-]+)"')
  if id then
    for _, e in ipairs(redis.call('LRANGE', audit, 0, RECENT_ACTIONS - 1)) do
      if string.find(e, '"id":"' .. id .. '"', 1, true) then
        op, audit_entry = 'stats', ''
        break
      end
    end
  end
end
if #ev_name > 128 or (#ev_name > 0 and (#ev_key < 16 or #ev_key > 128 or not (ev_pq <= ev_start and ev_start < ev_end))) then
  return redis.error_reply('ERR line: an event wants a name of at most 128 bytes, a draw key of 16 to 128 bytes and pre-queue <= start < end')
end

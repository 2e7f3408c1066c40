#!lua flags=allow-key-locking
-- One operation on one room's line, atomically. See package store.
--
-- Keys (every one passed in KEYS, all named wr:{room}:..., so a room's keys
-- share one cluster slot and Upstash's allow-key-locking holds):
-- KEYS[1] hash: the line's state, its numbers in the field s and its
--               strings in rkey, ev, ev_key and d_key (see "The line's
--               state" below): epoch, issued, admitted, tokens, raw, lt,
--               paused, queue_all, random, w_start, w_end, open_first,
--               open_since, trim_mark, trim_at, admissions per minute
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
-- KEYS[11] zset: draw keys drawn, score = their event's end (ms)
-- Every score that is a time is in line time (below), in milliseconds.
-- The line's hash also holds the priority lane (p_issued, p_admitted,
-- p_credit, p_trim) and the scheduled event (ev, ev_pq, ev_state,
-- ev_first, ev_start, ev_key, ev_until, d_first, d_last, d_key), and the
-- operator's live overrides (o_rate, o_burst, o_cap, o_mode; '' for none).
--
-- ARGV: a header every operation sends, then the operation's own tail;
-- the reply: one list, the same for every operation. Both are named in
-- the protocol section below, generated from store/genline/protocol.go,
-- which documents every argument and reply field; the script reads them
-- by name (arg('ticket'), REPLY.outcome), never by position. Every
-- argument is checked before anything is written: a bad one, a missing
-- one, or an unknown op, is an error and changes nothing.
-- outcome: join/vip/poll 0 waiting, 1 admitted (the ticket is the live
--          session <epoch>.<ticket>), 2 lost (poll: the place is gone, and
--          no new one is handed out), 3 (vip) the invite is used up, 4
--          closed (the live mode is reject: no ticket handed out, none
--          called); renew 1 ok, 0 gone; other ops 0.
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
-- History. A call writes its minute's record: the counters, sessions and
-- waiting tickets as it leaves them, and what it added (tickets handed
-- out, called, requests refused); a poll, renewal or stats call that moved
-- nothing, at most once a second. A record is overwritten a day later, so
-- the history never outgrows 1440 fields.
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
-- enters it (exactly once: an event is its name and schedule, and a key
-- once drawn is never entered again): tickets from then on form
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
-- between calls as the callers stamp it; a stamp more than TOLERANCE
-- behind the last resynchronises without advancing. Every deadline (a
-- waiting visitor's last poll, a claim window, a session's expiry, a
-- tombstone) is in line time, which follows the wall clock: a gap counts
-- in full, however long and whoever is in line, so a night with tickets
-- left behind, or visitors polling seldom (a background tab), leaves no
-- deadline standing. The one exception is an outage the edge observed: a
-- caller that reports a store failure since the last call seen here
-- (failed_at: the latest failure its POP saw, or the failed renewal its
-- holder's pass carries, reported on the next call that succeeds) makes
-- the gap count STEP at most, so the outage costs nobody a place, a call
-- or a session. A silence nobody saw fail is a quiet spell, not an
-- outage. The token bucket counts real time between calls, at most burst
-- plus catch-up's worth of it.
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
-- A poll of a ticket more than FAR positions behind the last called, within
-- FAST_WITHIN ms of the last call that did the line's work, is answered
-- without doing it (see "A poll far from the front" below).
local FAR, FAST_WITHIN = 2 * MAX_CALLS, 1000
-- Expired entries are forgotten once a second of line time (SWEEP_EVERY),
-- at most SWEEP from each set; the rest are forgotten by the next sweeps,
-- and are not counted meanwhile.
local SWEEP, SWEEP_EVERY = 5000, 1000
local MAX_INT = 2 ^ 53
local MAX_USES = 100000
-- An arrival is known at least as long as its pass can be presented
-- (queue.ArrivalTTL, in ms): a join that replays it after its place is
-- gone is then answered lost, never given a second place.
local ARRIVAL_MS = 600000
local AUDIT_CAP, DAY = 1000, 1440
-- An action is known by its id among the newest RECENT_ACTIONS entries
-- of the audit log: retries come within minutes, and a room's operators
-- act far less often than that.
local RECENT_ACTIONS = 100

-- BEGIN protocol: generated by go generate ./store from store/genline/protocol.go; DO NOT EDIT.
-- ARGV is the header, then the op's tail, read into A by name (A.now,
-- A.ticket; nil for an argument the op does not send); want is how many
-- arguments the op sends (nil for an op the script does not know). One
-- table built a call: tables of indices cost a tenth of a call.
-- The reply is REPLY.
local A = {
  op = ARGV[1], -- the operation: a key of the tails below
  now = ARGV[2], -- the caller's clock, ms since 1970
  rate = ARGV[3], -- admissions per minute; 0 = no rate
  burst = ARGV[4], -- admissions a quiet room may save up
  capacity = ARGV[5], -- most live sessions plus unclaimed calls; 0 = no cap
  claim_ms = ARGV[6], -- how long a call is held for its ticket
  session_ms = ARGV[7], -- how long a session lives unrenewed
  queue_ms = ARGV[8], -- how long a waiting ticket keeps its place unpolled
  window_ms = ARGV[9], -- the random-order window; 0 = first come, first served
  catchup_ms = ARGV[10], -- rate a call may make up for beyond the burst after a quiet spell
  heartbeat_ms = ARGV[11], -- how long a session pass admits without asking
  share = ARGV[12], -- the priority lane's largest share of admissions, 0 to 1
  mode = ARGV[13], -- the configured mode: fifo, random, passthrough or reject
  random_key = ARGV[14], -- the key of a new line's random order (a line keeps its own)
  ev_name = ARGV[15], -- the room's scheduled event, '' for none
  ev_pq = ARGV[16], -- its pre-queue start, ms
  ev_start = ARGV[17], -- its start (the draw), ms
  ev_end = ARGV[18], -- its end, ms
  ev_key = ARGV[19], -- the draw key of the event as scheduled (name, pre-queue start, start)
  refused = ARGV[20], -- the request's pass was refused (counted in the history)
  shard = ARGV[21], -- which of the room's shards this line is, from 0
  shards = ARGV[22], -- how many shards the room runs as: each takes its share of rate, burst and capacity; 1 = unsharded
  failed_at = ARGV[23], -- ms: the latest store failure the caller observed (its POP's, or the holder's failed renewal); 0 = none
}
local want
if A.op == 'join' then
  A.arrival = ARGV[24] -- the arrival pass's id: one ticket per arrival
  want = 24
elseif A.op == 'vip' then
  A.arrival = ARGV[24] -- the arrival pass's id: one ticket per arrival
  A.invite = ARGV[25] -- the invite's id: its uses are counted under it
  A.uses = ARGV[26] -- how many tickets the invite may hand out
  A.invite_until = ARGV[27] -- ms: until when its count is kept
  want = 27
elseif A.op == 'poll' or A.op == 'renew' then
  A.ticket = ARGV[24] -- the ticket (negative: the priority lane's) or session's ticket
  A.epoch = ARGV[25] -- the line the ticket or session belongs to
  want = 25
elseif A.op == 'end' then
  A.ticket = ARGV[24] -- the ticket (negative: the priority lane's) or session's ticket
  A.epoch = ARGV[25] -- the line the ticket or session belongs to
  A.usable_until = ARGV[26] -- ms: until when the ending pass admits without asking
  want = 26
elseif A.op == 'admit' then
  A.n = ARGV[24] -- how many to call at once, beyond rate and capacity
  A.audit = ARGV[25] -- the operator action's audit entry, a JSON object less its states and closing brace; '' for none
  want = 25
elseif A.op == 'pause' or A.op == 'resume' or A.op == 'queue_all' or A.op == 'clear' or A.op == 'reset' then
  A.audit = ARGV[24] -- the operator action's audit entry, a JSON object less its states and closing brace; '' for none
  want = 24
elseif A.op == 'limits' then
  A.audit = ARGV[24] -- the operator action's audit entry, a JSON object less its states and closing brace; '' for none
  A.set_rate = ARGV[25] -- the live rate to set, '' to keep
  A.set_burst = ARGV[26] -- the live burst to set, '' to keep
  A.set_cap = ARGV[27] -- the live capacity to set, '' to keep
  A.set_mode = ARGV[28] -- the live mode to set, '' to keep
  want = 28
elseif A.op == 'stats' then
  want = 23
end
local REPLY = {
  epoch = 1, -- the line's epoch
  issued = 2, -- the last regular ticket handed out
  admitted = 3, -- the last position called (or passed over)
  flags = 4, -- 1 paused, 2 queue-all
  ticket = 5, -- the caller's ticket
  outcome = 6, -- join/vip/poll: 0 waiting, 1 admitted, 2 lost, 3 invite spent, 4 closed; renew: 1 ok, 0 gone
  live = 7, -- live sessions
  called = 8, -- calls not yet claimed
  recent = 9, -- admissions in the last five minutes
  since = 10, -- ms: since when recent counts
  called_now = 11, -- tickets this call called
  call_from = 12, -- the first calling position the ticket can be called at
  call_to = 13, -- the last
  groups_ahead = 14, -- random order: groups called before the ticket's
  p_issued = 15, -- the priority lane's tickets handed out
  p_admitted = 16, -- and called
  ev_state = 17, -- the event passed: 0 not entered, 1 pre-queue, 2 drawn
  pq_first = 18, -- its first pre-queue ticket
  drawn_first = 19, -- the first drawn ticket
  drawn_last = 20, -- the last drawn ticket
  ev_key = 21, -- the draw key the event was entered with ('' when not entered): its commitment is published, the key revealed once drawn
  o_rate = 22, -- the live rate in thousandths, -1 for none
  o_burst = 23, -- the live burst, -1 for none
  o_cap = 24, -- the live capacity, -1 for none
  o_mode = 25, -- the live mode: 0 none, 1 fifo, 2 random, 3 passthrough, 4 reject
}
local REPLY_LEN = 25
-- END protocol

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

-- A poll far from the front. A waiting ticket more than FAR positions
-- behind the last one called, in a first-come line, within a second of a
-- call that did the line's work, is answered from the state as that call
-- left it, and only marked seen: nothing else is parsed, checked or
-- written. No call now could reach the ticket (one call calls at most
-- MAX_CALLS tickets and passes over at most MAX_CALLS), and all else such
-- a call would do is due at most once a second or line-second (the sweeps,
-- the history's record, the admissions' sum, the arrivals' trim), which
-- the call before has done; the clock and the bucket count from that call,
-- so the next call that does the work counts this gap too. Most calls of
-- a long line are such polls, so this reads only the arguments it uses
-- (now, ticket, epoch, queue_ms; mode, ev_name and refused to know it may
-- answer) and the state's values it needs; every other poll goes on
-- below, where all are checked.
if op == 'poll' and packed and A.refused == '0' and A.mode == 'fifo' and A.ev_name == '' then
  local v = { string.match(packed, '^([^,]*),([^,]*),([^,]*),[^,]*,([^,]*),([^,]*),([^,]*),([^,]*),([^,]*),[^,]*,'
    .. '([^,]*),([^,]*),([^,]*),([^,]*),([^,]*),([^,]*),([^,]*),[^,]*,([^,]*),[^,]*,([^,]*),[^,]*,[^,]*,$') }
  -- v: epoch, issued, admitted, raw, lt, paused, queue_all, random,
  -- trim_at, p_issued, ev_state, swept, noted, minute, recent, the
  -- priority lane's group, the overrides' group.
  local now, t, t_epoch, queue_ms = tonumber(A.now), tonumber(A.ticket), tonumber(A.epoch), tonumber(A.queue_ms)
  local o = { string.match(v[17] or '', '^([^;]*);([^;]*);([^;]*);([^;]*);$') }
  if v[17] and v[8] == '0' and v[11] == '0' and (v[17] == '' or o[4] == '' or o[4] == 'fifo')
      and now and t and t_epoch and queue_ms and now >= 0 and now % 1 == 0 and t % 1 == 0 then
    local epoch, issued, admitted, raw = tonumber(v[1]), tonumber(v[2]), tonumber(v[3]), tonumber(v[4])
    local lt, trim_at, swept, recent = tonumber(v[5]), tonumber(v[9]), tonumber(v[12]), tonumber(v[15])
    local second, minute = math.floor(now / 1000), math.floor(now / 60000)
    local known = epoch and issued and admitted and raw and lt and trim_at and swept and recent
    if known then
      lt = lt + (now - raw)
    end
    if known and t_epoch == epoch and t >= 1 and t <= issued and t - admitted > FAR and now >= raw
        and now - raw <= FAST_WITHIN and tonumber(v[13]) == second and tonumber(v[14]) == minute
        and lt >= swept and lt < swept + SWEEP_EVERY and lt < trim_at then
      local seen = tonumber(redis.call('ZSCORE', waiting, t))
      if seen and seen > lt - queue_ms then
        redis.call('ZADD', waiting, lt, t)
        local o_rate, o_burst, o_cap = tonumber(o[1] or ''), tonumber(o[2] or ''), tonumber(o[3] or '')
        local reply = {}
        reply[REPLY.epoch], reply[REPLY.issued], reply[REPLY.admitted] = epoch, issued, admitted
        reply[REPLY.flags] = (v[6] == '1' and 1 or 0) + (v[7] == '1' and 2 or 0)
        reply[REPLY.ticket], reply[REPLY.outcome] = t, 0
        reply[REPLY.live] = redis.call('ZCOUNT', sessions, '(' .. lt, '+inf')
        reply[REPLY.called] = redis.call('ZCOUNT', called, '(' .. lt, '+inf')
        reply[REPLY.recent], reply[REPLY.since] = recent, math.max(epoch, (minute - 4) * 60000)
        reply[REPLY.called_now], reply[REPLY.call_from], reply[REPLY.call_to] = 0, t, t
        reply[REPLY.groups_ahead], reply[REPLY.p_issued] = 0, tonumber(v[10]) or 0
        reply[REPLY.p_admitted] = v[10] ~= '0' and tonumber(string.match(v[16], '^([^;]*);') or '') or 0
        reply[REPLY.ev_state], reply[REPLY.pq_first], reply[REPLY.drawn_first] = 0, 0, 0
        reply[REPLY.drawn_last], reply[REPLY.ev_key] = 0, ''
        reply[REPLY.o_rate] = o_rate and math.floor(o_rate * 1000 + 0.5) or -1
        reply[REPLY.o_burst], reply[REPLY.o_cap] = o_burst or -1, o_cap or -1
        reply[REPLY.o_mode] = o[4] == 'fifo' and 1 or 0
        return reply
      end
    end
  end
end
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
-- The line's state. Its numbers and switches are one field of the hash,
-- s, read and written whole, because a call reading and writing forty
-- fields by name spent a third of its time finding them: epoch, issued,
-- admitted, tokens, raw, lt, paused, queue_all, random, trim_mark,
-- trim_at, p_issued, ev_state, when the sets were last swept and the
-- history's record last written, the minute of the last five minutes'
-- admissions and their sum, then the groups below, each value followed by
-- a comma ('' for none). Its strings (rkey, ev, ev_key, d_key: a secret,
-- an event's name, draw keys) are fields of their own, read only by the
-- calls that need them (field) and written only when they change. A line
-- an earlier version of this script wrote kept every value in a field of
-- its own (the HMGET below): it is read from them once, and written as s
-- from then on. Below, s and n hold the values as text and as numbers by
-- the index of that HMGET's field (then 40 swept, 41 noted, 42 and 43 the
-- admissions' minute and sum), so that a value a call leaves as it was is
-- written back as the text it was read as.
local cold, cold_set = {}, {}
local s, n, migrated = {}, {}, false
-- Groups of the state's values that most calls leave alone: the random
-- order's windows (w), the priority lane past its count (p), the event
-- past its state (e), the overrides (o), the minutes' admissions (m) and
-- what the history's record has still to be given (h).
-- Each is one value of s, its members each followed by ';' ('' for all
-- at their defaults), split only by a call that needs it (open) and
-- otherwise written back as it was read: a poll of a first-come line with
-- no event, invite or override splits none.
local G = { text = {}, open = {}, w = { 10, 11, 12, 13 }, p = { 18, 19, 20 }, e = { 23, 24, 26, 27, 29, 34 },
  o = { 30, 31, 32, 33 }, m = { 35, 36, 37, 38, 39 }, h = { 44, 45, 46, 47, 48, 49, 50, 51 } }
-- num parses a value: tonumber costs as much as a command, and 0, 1 and
-- '' are common.
local function num(v)
  if v == '0' then
    return 0
  elseif v == '1' then
    return 1
  elseif v ~= '' then
    return tonumber(v)
  end
end
local function open(g)
  if not G.open[g] then
    G.open[g] = true
    local k = 1
    for v in string.gmatch(G.text[g] or '', '([^;]*);') do
      local i = G[g][k]
      s[i], n[i], k = v, num(v), k + 1
    end
  end
end
do
  if packed then
    -- One match splits it (Lua allows 32 captures): ten times cheaper
    -- than a loop.
    local v = { string.match(packed, '^' .. string.rep('([^,]*),', 23) .. '$') }
    if #v ~= 23 and op ~= 'reset' then
      return redis.error_reply('ERR line: the line\'s state is unreadable: nothing changed (a reset starts the line afresh)')
    end
    for j, i in ipairs({ 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 22, 40, 41, 42, 43 }) do
      s[i], n[i] = v[j], num(v[j])
    end
    G.text = { w = v[18], p = v[19], e = v[20], o = v[21], m = v[22], h = v[23] }
    open('o')
    if s[17] ~= '0' then
      open('p')
    end
    if s[22] ~= '0' or #ev_name > 0 then
      open('e')
    end
    if s[9] == '1' or cfg_mode == 'random' or s[33] == 'random' then
      open('w')
    end
  else
    s = redis.call('HMGET', line, 'epoch', 'issued', 'admitted', 'tokens', 'raw', 'lt', 'paused', 'queue_all',
      'random', 'w_start', 'w_end', 'open_first', 'open_since', 'rkey', 'trim_mark', 'trim_at',
      'p_issued', 'p_admitted', 'p_credit', 'p_trim', 'ev', 'ev_state', 'ev_first', 'ev_start', 'ev_key', 'd_first',
      'd_last', 'd_key', 'ev_pq', 'o_rate', 'o_burst', 'o_cap', 'o_mode', 'ev_until', 'm0', 'm1', 'm2', 'm3', 'm4')
    migrated = s[1] and true
    cold.rkey, cold.ev, cold.ev_key, cold.d_key = s[14] or false, s[21] or false, s[25] or false, s[28] or false
    for i = 1, 39 do
      n[i] = tonumber(s[i])
    end
    G.open = { w = true, p = true, e = true, o = true, m = true, h = true }
  end
end
-- field is the line's string field name ('' for none), read on first use.
local function field(name)
  local v = cold[name]
  if v == nil then
    v = redis.call('HGET', line, name) or false
    cold[name] = v
  end
  return v or ''
end
-- set_field changes it, to be written with the state.
local function set_field(name, v)
  if field(name) ~= v then
    cold[name], cold_set[name] = v, true
  end
end
-- The overrides, and what an action's audit entry reports as before.
local o_rate, o_burst, o_cap = n[30], n[31], n[32]
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
-- A capacity below the shard count would leave a shard no share of it,
-- and nobody in that shard's line would ever be called: refused, whether
-- the config or the operator's action sets it, before anything is
-- written. (The rate is split as a fraction and a burst share is at
-- least one, so neither leaves a shard with nothing.)
if A.shards ~= '1' then
  local cap = capacity
  if op == 'limits' and o_set[3] then
    cap = o_set[3]
  end
  if cap > 0 and cap < tonumber(A.shards) then
    return redis.error_reply('ERR line: max_active_users ' .. cap .. ' is below the room\'s ' .. A.shards
      .. ' shards: each shard needs at least one place (clear the live capacity or raise it)')
  end
end
local before = ''
if #audit_entry > 0 then
  before = state_json(n[1] or 0, n[2] or 0, n[3] or 0, s[7] == '1', s[8] == '1')
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
  -- UNLINK frees a long line's sets off the main thread: the call
  -- costs the same whatever the line's length.
  redis.call('UNLINK', line, sessions, called, waiting, arrivals, ended, windows)
  local later = math.max(now, n[1] + 1)
  s, n = { string.format('%d', later), [7] = paused_was, [8] = queue_all_was }, { later }
  G.open = { w = true, p = true, e = true, o = true, m = true, h = true }
  cold, cold_set, migrated = { rkey = false, ev = false, ev_key = false, d_key = false }, {}, false
  set_field('rkey', random_key)
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
-- A shard takes its share of the room's rate, burst and capacity, so
-- that the shards together never pass the room's: the whole shares are
-- split as evenly as they go, the first shards taking one more. A burst
-- share is at least one, or a shard's tokens would never make a call.
-- A capacity share is at least one too: a capacity below the shard count
-- is refused above, but a live one stored before that check may be one,
-- and a shard with no place would never call anyone.
if A.shards ~= '1' then
  local shards, shard = tonumber(A.shards), tonumber(A.shard)
  local function part(total)
    local base = math.floor(total / shards)
    if shard < total % shards then
      return base + 1
    end
    return base
  end
  rate, burst = rate / shards, math.max(part(burst), 1)
  if capacity > 0 then
    capacity = math.max(part(capacity), 1)
  end
end
if not s[1] then
  -- A new line, or one whose hash was lost: nothing of an older line may
  -- leak into it (its tickets would collide with the new ones). Invites
  -- stay used: a reset must not hand their places out again; events
  -- drawn stay drawn, so no draw key is used twice.
  redis.call('UNLINK', sessions, called, waiting, arrivals, ended, windows)
  set_field('rkey', random_key)
end
local epoch = n[1] or now
local issued = n[2] or 0
local admitted = n[3] or 0
local tokens = n[4] or burst
local raw = n[5] or now
local lt = n[6] or now
local paused = s[7] == '1'
local queue_all = s[8] == '1'
local was_random = s[9] == '1'
-- Random order: the window being called, and the window still filling.
-- The windows closed in between are in KEYS[7].
local w_start = n[10] or 1
local w_end = n[11] or 0
local open_first = n[12] or 1
local open_since = n[13] or now
local trim_mark = n[15] or 0
local trim_at = n[16] or now
local p_issued = n[17] or 0
local p_admitted = n[18] or 0
local p_credit = n[19] or 1
local p_trim = n[20] or 0
local ev_state = n[22] or 0
local ev_first = n[23] or 0
local stored_start = n[24] or 0
local d_first = n[26] or 1
local d_last = n[27] or 0
local stored_pq = n[29]
local stored_until = n[34] or 0
-- When the sets were last swept (line time), and the history's record
-- last written (the caller's second).
local marks = { swept = n[40] or 0, noted = n[41] or 0 }
if migrated and s[21] and not stored_pq then
  -- An event entered by the script before events were told apart by
  -- their schedule: it is the event passed if the name is.
  stored_pq = s[21] == ev_name and ev_pq or -1
end
local minute = math.floor(now / 60000)
local called_now = 0
local issued0, admitted0 = issued, admitted

-- The clock: line time advances by the gap since the last call, unless
-- the caller observed the store fail after the last call seen here (its
-- clock within TOLERANCE of ours): that gap is an outage, and counts STEP
-- at most. A failure before the last call explains nothing since, and a
-- silence nobody saw fail counts in full, tickets waiting or not, so
-- sessions and tickets lapse on time. elapsed is the real gap, for the
-- token bucket.
local elapsed = 0
if now >= raw then
  local gap = now - raw
  local step = gap
  if gap > STEP and failed_at > 0 and failed_at >= raw - TOLERANCE then
    step = STEP
  end
  lt = lt + step
  elapsed = gap
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
-- An event is known by its schedule as well as its name: the edge derives
-- its draw key from (name, pre-queue start, start). The event entered is
-- the one passed while its name and pre-queue start are (same); its start
-- may move while its pre-queue is open, keeping the key it was entered
-- with. Every key drawn is kept in KEYS[11] (score: its event's end) and
-- never entered again, so a reused name (or a start moved after the draw)
-- is a new event with a pre-queue and a key of its own, no key is drawn
-- twice, and a line reset before its draw enters its event again.
local same = #ev_name > 0 and stored_pq == ev_pq and field('ev') == ev_name
local function draw()
  d_first, d_last = ev_first, issued
  set_field('d_key', field('ev_key'))
  ev_state = 2
  redis.call('ZADD', events, stored_until, field('ev_key'))
end
if ev_state == 1 and same then
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
if ev_state ~= 1 and #ev_name > 0 and now >= ev_pq and now < ev_end and not (same and stored_start == ev_start)
    and not redis.call('ZSCORE', events, ev_key) then
  -- Schedules whose events ended a day ago can no longer be entered.
  redis.call('ZREMRANGEBYSCORE', events, '-inf', '(' .. (now - DAY * 60000))
  if random and issued >= open_first then
    redis.call('ZADD', windows, issued, issued)
  end
  if random then
    open_first, open_since = issued + 1, lt
  end
  ev_state, ev_first, stored_start = 1, issued + 1, ev_start
  set_field('ev', ev_name)
  set_field('ev_key', ev_key)
  stored_pq, stored_until, same = ev_pq, ev_end, true
  if now >= ev_start and admitted >= d_last then
    -- Entered after its start: an empty pre-queue, drawn at once.
    draw()
  end
end
local held = ev_state == 1

-- Forget what has expired: sessions, unclaimed calls, waiting visitors
-- who stopped polling, and tombstones. Memory follows the live population.
-- At most SWEEP of each once a second, the oldest first (a quiet spell
-- can expire a million tickets at once): a sweep costs four commands, too
-- many for every call of a busy line. What is not swept yet is no longer
-- counted, since every reader below asks whether an entry is still alive
-- (alive), not only whether it is there.
local floor = { [sessions] = lt, [called] = lt, [waiting] = lt - queue_ms, [ended] = lt }
if lt >= marks.swept + SWEEP_EVERY or lt < marks.swept then
  for key, at in pairs(floor) do
    local n = redis.call('ZCOUNT', key, '-inf', at)
    if n > 0 then
      redis.call('ZREMRANGEBYRANK', key, 0, math.min(n, SWEEP) - 1)
    end
  end
  marks.swept = lt
end
-- alive is whether t is in key and has not expired.
local function alive(key, t)
  local score = tonumber(redis.call('ZSCORE', key, t))
  return score ~= nil and score > floor[key]
end
-- count is how many entries of key have not expired: counted once a call
-- and again only after the set changes (zadd, zrem).
local counted = {}
local function count(key)
  local n = counted[key]
  if not n then
    n = redis.call('ZCOUNT', key, '(' .. floor[key], '+inf')
    counted[key] = n
  end
  return n
end
local function zadd(key, score, t)
  counted[key] = nil
  redis.call('ZADD', key, score, t)
end
-- touch moves the expiry of t, alive in key: the count stays.
local function touch(key, score, t)
  redis.call('ZADD', key, score, t)
end
local function zrem(key, t)
  counted[key] = nil
  redis.call('ZREM', key, t)
end

-- free is how many more visitors may be called in now: capacity less live
-- sessions (ended ones whose passes still admit included) and calls still
-- inside their claim window.
local function free()
  if capacity < 0 then
    return 0
  end
  if capacity <= 0 then
    return math.huge
  end
  return capacity - count(sessions) - count(called)
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
local round_keys = {}
local function keys_for(seed)
  local k = round_keys[seed]
  if k then
    return k
  end
  local text
  if seed == d_first and d_first <= d_last then
    text = 'draw:' .. field('d_key')
  else
    text = field('rkey') .. ':' .. epoch .. ':' .. seed
  end
  k = {}
  for r = 1, 2 * ROUNDS do
    local h, m = 0, 257 + 2 * r
    for i = 1, #text do
      h = (h * m + string.byte(text, i) + 1) % P
    end
    k[r] = (h * h + 7919 * r + 1) % P
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
    w_start = w_end + 1
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
    if alive(waiting, t) then
      zrem(waiting, t)
      zadd(called, lt + claim_ms, t)
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
  zadd(waiting, lt, issued)
  settle()
  return issued
end

-- new_priority hands out the priority lane's next ticket.
local function new_priority()
  p_issued = p_issued + 1
  zadd(waiting, lt, -p_issued)
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
  if not valid(t) then
    return nil
  end
  -- A ticket still waiting was never called, so it is no session and
  -- none ended: most polls end here.
  if alive(waiting, t) then
    touch(waiting, lt, t)
    return 0
  end
  if alive(ended, t) then
    return nil
  end
  if alive(sessions, t) then
    touch(sessions, lt + session_ms, t)
    return 1
  end
  if alive(called, t) then
    if queue_all then
      touch(called, lt + claim_ms, t)
      return 0
    end
    zrem(called, t)
    zadd(sessions, lt + session_ms, t)
    return 1
  end
  return nil
end

-- closed_poll answers for ticket t of this line while the room is closed:
-- a live session stays one; a waiting or called ticket keeps its place
-- (it is seen, and its call held as under queue-all) but is not let in.
local function closed_poll(t)
  if valid(t) and alive(sessions, t) and not alive(ended, t) then
    return standing(t)
  end
  if valid(t) then
    if alive(waiting, t) then
      touch(waiting, lt, t)
    elseif alive(called, t) then
      touch(called, lt + claim_ms, t)
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
  ticket, outcome = t_arg, 4
  if ticket_epoch == epoch then
    outcome = closed_poll(t_arg)
  end
elseif op == 'join' then
  -- A known arrival is answered as a poll of its ticket: lost once the
  -- ticket holds no place. One arrival (one solution) buys one place; its
  -- holder comes back through the door as a new arrival.
  local known = tonumber(redis.call('ZSCORE', arrivals, arrival))
  if known then
    ticket, outcome = known, standing(known) or 2
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
  -- holder was away, or its session ended), is lost. No place is handed
  -- out here: only join and vip hand them out, the doors the edge's join
  -- limit and an invite's uses guard.
  ticket, outcome = t_arg, ticket_epoch == epoch and standing(t_arg) or 2
elseif op == 'renew' then
  -- Only a live session is renewed. One the store no longer holds (it
  -- expired, or was lost with the store's state) is not taken back: its
  -- holder joins again as a newcomer, through the same guards.
  if ticket_epoch == epoch and valid(t_arg) and not alive(ended, t_arg) and alive(sessions, t_arg) then
    touch(sessions, lt + session_ms, t_arg)
    outcome = 1
  end
elseif op == 'end' then
  -- Never renewed again; the place is held while a pass of it may still
  -- admit without asking, then freed: the ending pass's usable_until, or,
  -- when another tab holds the pass of a later renewal (expiry less the
  -- ttl), that renewal plus a heartbeat.
  if ticket_epoch == epoch and valid(t_arg) then
    zadd(ended, lt + session_ms, t_arg)
    local expiry = alive(sessions, t_arg) and tonumber(redis.call('ZSCORE', sessions, t_arg))
    if expiry then
      local left = math.max(usable_until - now, expiry - session_ms + heartbeat_ms - lt)
      local hold = lt + math.min(left, session_ms)
      if hold <= lt then
        zrem(sessions, t_arg)
      elseif hold < expiry then
        touch(sessions, hold, t_arg)
      end
    end
  end
  settle()
elseif op == 'admit' then
  call_in(admit_n, 0, false)
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
-- within a claim window, and while its pass can be presented, finds its
-- ticket), then trimmed in one range: every turn, those reached by the
-- turn before. A turn is ARRIVAL_MS of line time (which runs no faster
-- than the wall clock): one range a turn, the admissions of one turn.
if lt >= trim_at then
  redis.call('ZREMRANGEBYSCORE', arrivals, 1, trim_mark)
  redis.call('ZREMRANGEBYSCORE', arrivals, -p_trim, -1)
  trim_mark, p_trim = admitted, p_admitted
  if random and admitted < w_end then
    trim_mark = w_start - 1
  elseif d_first <= admitted and admitted < d_last then
    trim_mark = d_first - 1
  end
  trim_at = lt + math.max(claim_ms, ARRIVAL_MS)
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
-- The sum is kept with the minute it was taken in, and taken again only
-- when that minute has passed or this call called someone.
local recent, slots = n[43], nil
if n[42] ~= minute or called_now > 0 or not recent then
  open('m')
  slots = { s[35], s[36], s[37], s[38], s[39] }
  if called_now > 0 then
    local i = minute % 5
    slots[i + 1] = minute .. ':' .. (slot_count(minute, slots[i + 1]) + called_now)
  end
  recent = 0
  for back = 0, 4 do
    local m = minute - back
    recent = recent + slot_count(m, slots[(m % 5) + 1])
  end
end
local since = math.max(epoch, (minute - 4) * 60000)

-- The history's record of this minute: the counters, and the sessions
-- and waiting tickets as the call leaves them. A poll, renewal or stats
-- call that moved nothing writes it at most once a second (noted), since
-- polls are most of a busy line's calls; every other call writes it.
local refusals = refused
if outcome == 3 or (outcome == 4 and op ~= 'poll') then
  refusals = refusals + 1
end
-- The history. What a call adds to its minute's record (tickets handed
-- out, called, refusals, when the counters moved) is kept in the state
-- (group h, pending) and added to the record by the first call of each
-- second, with the counters, sessions and waiting tickets as that call
-- leaves them: reading and writing the record costs a call of each second,
-- not every call. An operator's action writes it at once. Pending counts
-- of a minute gone by are added to that minute's record first.
local pending
do
  local second = math.floor(now / 1000)
  local flush = second ~= marks.noted or not (op == 'poll' or op == 'renew' or op == 'stats' or op == 'join'
    or op == 'vip' or op == 'end')
  if flush or refusals > 0 or issued ~= issued0 or admitted ~= admitted0 or issued + p_issued ~= joined then
    open('h')
    local function fresh(m)
      return { m = m, joins = 0, calls = 0, refusals = 0, i_first = -1, i_last = -1, a_first = -1, a_last = -1 }
    end
    local function record(p, is, ad)
      local slot = tostring(p.m % DAY)
      local rec = {}
      for v in string.gmatch(redis.call('HGET', history, slot) or '', '[^,]+') do
        rec[#rec + 1] = tonumber(v) or 0
      end
      if rec[1] ~= p.m or #rec ~= 13 then
        rec = { p.m, 0, 0, 0, 0, 0, 0, 0, 0, -1, -1, -1, -1 }
      end
      -- When in the minute the counters first and last moved (ms into
      -- it), so that a reader can tell a burst from a steady stream.
      if p.i_first >= 0 then
        rec[10], rec[11] = rec[10] < 0 and p.i_first or rec[10], p.i_last
      end
      if p.a_first >= 0 then
        rec[12], rec[13] = rec[12] < 0 and p.a_first or rec[12], p.a_last
      end
      rec[2], rec[3], rec[4], rec[7], rec[8] = epoch, is, ad, count(sessions), count(waiting)
      rec[5], rec[6], rec[9] = rec[5] + p.joins, rec[6] + p.calls, rec[9] + p.refusals
      redis.call('HSET', history, slot, table.concat(rec, ','))
    end
    pending = { m = n[44], joins = n[45] or 0, calls = n[46] or 0, refusals = n[47] or 0, i_first = n[48] or -1,
      i_last = n[49] or -1, a_first = n[50] or -1, a_last = n[51] or -1 }
    if pending.m ~= minute then
      if pending.m and (pending.joins > 0 or pending.calls > 0 or pending.refusals > 0) then
        record(pending, issued0, admitted0)
      end
      pending = fresh(minute)
    end
    local into = now - minute * 60000
    if issued ~= issued0 then
      pending.i_first, pending.i_last = pending.i_first < 0 and into or pending.i_first, into
    end
    if admitted ~= admitted0 then
      pending.a_first, pending.a_last = pending.a_first < 0 and into or pending.a_first, into
    end
    pending.joins = pending.joins + issued + p_issued - joined
    pending.calls = pending.calls + called_now
    pending.refusals = pending.refusals + refusals
    if flush then
      record(pending, issued, admitted)
      pending, marks.noted = false, second
    end
  end
end

-- A value the call left as it was is written as it was read; others
-- with %d where whole, since formatting a number as Lua does (%.14g)
-- costs ten times as much. (In a block: the script's locals would pass
-- the 200 registers a Lua function may use, and gopher-lua, the embedded
-- Redis of make serve, would refuse it.)
do
  local function int(i, v, format)
    if v == n[i] then
      return s[i]
    end
    return string.format(format or '%d', v)
  end
  local function flag(b)
    return b and '1' or '0'
  end
  -- A group is written from its values when the call opened it, or began
  -- to use it (the random order, an invite, an event).
  local w, p, e, m = G.text.w, G.text.p, G.text.e, G.text.m
  if G.open.w or random then
    w = table.concat({ int(10, w_start), int(11, w_end), int(12, open_first), int(13, open_since), '' }, ';')
  end
  if G.open.p or p_issued > 0 then
    p = table.concat({ int(18, p_admitted), int(19, p_credit, '%.6f'), int(20, p_trim), '' }, ';')
  end
  if G.open.e or ev_state ~= 0 then
    e = table.concat({ int(23, ev_first), int(24, stored_start), int(26, d_first), int(27, d_last),
      stored_pq and int(29, stored_pq) or '', int(34, stored_until), '' }, ';')
  end
  if slots then
    m = table.concat({ slots[1] or '', slots[2] or '', slots[3] or '', slots[4] or '', slots[5] or '', '' }, ';')
  end
  local o = ''
  if o_rate or o_burst or o_cap or o_mode ~= '' then
    o = table.concat({ o_rate and tostring(o_rate) or '', o_burst and int(31, o_burst) or '',
      o_cap and int(32, o_cap) or '', o_mode, '' }, ';')
  end
  local h = G.text.h
  if pending then
    h = table.concat({ int(44, pending.m), int(45, pending.joins), int(46, pending.calls), int(47, pending.refusals),
      int(48, pending.i_first), int(49, pending.i_last), int(50, pending.a_first), int(51, pending.a_last), '' }, ';')
  elseif pending == false then
    h = ''
  end
  local packed = table.concat({ int(1, epoch), int(2, issued), int(3, admitted), int(4, tokens, '%.6f'), int(5, raw),
    int(6, lt), flag(paused), flag(queue_all), flag(random), int(15, trim_mark), int(16, trim_at), int(17, p_issued),
    int(22, ev_state), int(40, marks.swept), int(41, marks.noted), int(42, minute), int(43, recent),
    w or '', p or '', e or '', o, m or '', h or '', '' }, ',')
  local strings = {}
  for name in pairs(cold_set) do
    strings[#strings + 1], strings[#strings + 2] = name, cold[name]
  end
  redis.call('HSET', line, 's', packed, unpack(strings))
end
if migrated then
  redis.call('HDEL', line, 'epoch', 'issued', 'admitted', 'tokens', 'raw', 'lt', 'paused', 'queue_all',
    'random', 'w_start', 'w_end', 'open_first', 'open_since', 'trim_mark', 'trim_at', 'p_issued', 'p_admitted',
    'p_credit', 'p_trim', 'ev_state', 'ev_first', 'ev_start', 'd_first', 'd_last', 'ev_pq', 'o_rate', 'o_burst',
    'o_cap', 'o_mode', 'ev_until', 'm0', 'm1', 'm2', 'm3', 'm4')
end

local live = count(sessions)

-- The operator's action, with the state before and after it.
if #audit_entry > 0 then
  redis.call('LPUSH', audit, audit_entry .. ',"before":' .. before .. ',"after":'
    .. state_json(epoch, issued, admitted, paused, queue_all) .. '}')
  redis.call('LTRIM', audit, 0, AUDIT_CAP - 1)
end

-- The event's figures are for the event passed, and only once entered:
-- while its pre-queue is open (its start may have moved), and once drawn
-- at the start passed.
local ev_state_out, pq_first, drawn_first, drawn_last, key_out = 0, 0, 0, 0, ''
if same and (ev_state == 1 or stored_start == ev_start) then
  ev_state_out, pq_first, key_out = ev_state, ev_first, field('ev_key')
  if ev_state == 2 then
    drawn_first, drawn_last = d_first, d_last
  end
end
local reply = {}
reply[REPLY.epoch], reply[REPLY.issued], reply[REPLY.admitted] = epoch, issued, admitted
reply[REPLY.flags] = (paused and 1 or 0) + (queue_all and 2 or 0)
reply[REPLY.ticket], reply[REPLY.outcome] = ticket, outcome
reply[REPLY.live], reply[REPLY.called] = live, count(called)
reply[REPLY.recent], reply[REPLY.since], reply[REPLY.called_now] = recent, since, called_now
reply[REPLY.call_from], reply[REPLY.call_to], reply[REPLY.groups_ahead] = call_from, call_to, groups_ahead
reply[REPLY.p_issued], reply[REPLY.p_admitted] = p_issued, p_admitted
reply[REPLY.ev_state], reply[REPLY.pq_first] = ev_state_out, pq_first
reply[REPLY.drawn_first], reply[REPLY.drawn_last], reply[REPLY.ev_key] = drawn_first, drawn_last, key_out
reply[REPLY.o_rate] = o_rate and math.floor(o_rate * 1000 + 0.5) or -1
reply[REPLY.o_burst], reply[REPLY.o_cap], reply[REPLY.o_mode] = o_burst or -1, o_cap or -1, modes[o_mode] or 0
return reply

-- farpoll.lua: the poll operation's fast path, a poll far from the front
-- answered from the state as the last call that did the work left it.
-- KEYS: line (its state, as keys.lua read it); waiting (the ticket is
--   marked seen); sessions and called (counted).
-- ARGV: op, mode, ev_name, refused, now, ticket, epoch, queue_ms.
-- Reply: every field, for such a poll; the call ends here.
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

-- history.lua: what the call did, added to its minute's record.
-- KEYS: history; sessions, waiting (counted).
-- ARGV: now, refused, op.
-- Reply: none set here.
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

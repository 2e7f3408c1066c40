-- reply.lua: the operator's audit entry, and the reply.
-- KEYS: audit (the entry pushed, the log trimmed); sessions, called
--   (counted); line (ev_key).
-- ARGV: audit, ev_start.
-- Reply: every field.
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

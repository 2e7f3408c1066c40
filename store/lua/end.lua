-- end.lua: the end operation: a session ends, its place held while its
-- pass may still admit. (A branch of the dispatch closed.lua opens.)
-- KEYS: ended, sessions; waiting, called (settle).
-- ARGV: ticket, epoch, usable_until, now, session_ms, heartbeat_ms.
-- Reply: called_now (settle).
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

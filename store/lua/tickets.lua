-- tickets.lua: handing out tickets and answering for one: new_ticket,
-- new_priority, valid, standing, closed_poll.
-- KEYS: waiting, sessions, called, ended; windows (a random-order window
--   closes).
-- ARGV: window_ms, claim_ms, session_ms.
-- Reply: issued, p_issued (when a ticket is handed out).
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

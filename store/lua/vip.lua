-- vip.lua: the vip operation: an invite's arrival takes a ticket in the
-- priority lane. (A branch of the dispatch closed.lua opens.)
-- KEYS: invites, arrivals; waiting (new_priority); sessions, called, ended
--   (standing).
-- ARGV: now, arrival, invite, uses, invite_until.
-- Reply: ticket, outcome.
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

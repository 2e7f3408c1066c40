-- join.lua: the join operation: an arrival takes a ticket, once.
-- (A branch of the dispatch closed.lua opens.)
-- KEYS: arrivals; waiting, windows (new_ticket); sessions, called, ended
--   (standing).
-- ARGV: arrival.
-- Reply: ticket, outcome.
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

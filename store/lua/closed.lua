-- closed.lua: join, vip and poll while the room is closed (the live mode
-- is reject). It opens the operations' dispatch, whose branches follow,
-- one part each, to actions.lua, which ends it; joined is the tickets
-- handed out before the op, for history.lua.
-- KEYS: arrivals; waiting, sessions, called, ended (closed_poll).
-- ARGV: op, arrival, ticket, epoch.
-- Reply: ticket, outcome.
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

-- renew.lua: the renew operation: a live session lives on.
-- (A branch of the dispatch closed.lua opens.)
-- KEYS: sessions, ended.
-- ARGV: ticket, epoch, session_ms.
-- Reply: outcome.
elseif op == 'renew' then
  -- Only a live session is renewed. One the store no longer holds (it
  -- expired, or was lost with the store's state) is not taken back: its
  -- holder joins again as a newcomer, through the same guards.
  if ticket_epoch == epoch and valid(t_arg) and not alive(ended, t_arg) and alive(sessions, t_arg) then
    touch(sessions, lt + session_ms, t_arg)
    outcome = 1
  end

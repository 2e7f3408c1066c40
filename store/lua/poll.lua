-- poll.lua: the poll operation (one farpoll.lua did not answer): how a
-- ticket stands. (A branch of the dispatch closed.lua opens.)
-- KEYS: waiting, sessions, called, ended (standing).
-- ARGV: ticket, epoch.
-- Reply: ticket, outcome.
elseif op == 'poll' then
  -- A ticket of an earlier line (its state was lost or reset), or whose
  -- place is gone (called but not claimed in time, passed over while its
  -- holder was away, or its session ended), is lost. No place is handed
  -- out here: only join and vip hand them out, the doors the edge's join
  -- limit and an invite's uses guard.
  ticket, outcome = t_arg, ticket_epoch == epoch and standing(t_arg) or 2

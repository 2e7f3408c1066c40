-- actions.lua: the admit, pause, resume and queue_all operations (the
-- operator's switches); it ends the dispatch closed.lua opens. The stats
-- operation has no branch: it does what every call does.
-- KEYS: waiting, called (call_in, settle).
-- ARGV: n.
-- Reply: flags, called_now.
elseif op == 'admit' then
  call_in(admit_n, 0, false)
elseif op == 'pause' then
  paused = true
elseif op == 'resume' then
  paused, queue_all = false, false
  settle()
elseif op == 'queue_all' then
  queue_all = true
end

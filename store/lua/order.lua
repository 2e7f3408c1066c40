-- order.lua: a change of the calling order (first come or random) since
-- the last call.
-- KEYS: windows (cleared when the order changes).
-- ARGV: window_ms (and the mode policy.lua settled).
-- Reply: admitted (first-come order restarts at the window being called).
-- A room that changes its calling order mid-line: first-come order
-- restarts at the window being called (its called tickets are passed
-- over); random order starts with everyone waiting as one window.
-- A drawn pre-queue being called stays one window, in its drawn order.
local random = mode == 'random' and window_ms > 0
if random ~= was_random then
  redis.call('DEL', windows)
  if random then
    w_start, w_end = admitted + 1, admitted
    if d_first <= admitted and admitted < d_last then
      w_start, w_end = d_first, d_last
    end
    open_first, open_since = w_end + 1, lt
  elseif admitted < w_end then
    admitted = w_start - 1
  end
end

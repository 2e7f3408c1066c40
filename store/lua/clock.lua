-- clock.lua: line time, advanced by the gap since the last call.
-- KEYS: none.
-- ARGV: now, failed_at.
-- Reply: none set here.
-- The clock: line time advances by the gap since the last call, unless
-- the caller observed the store fail after the last call seen here (its
-- clock within TOLERANCE of ours): that gap is an outage, and counts STEP
-- at most. A failure before the last call explains nothing since, and a
-- silence nobody saw fail counts in full, tickets waiting or not, so
-- sessions and tickets lapse on time. elapsed is the real gap, for the
-- token bucket.
local elapsed = 0
if now >= raw then
  local gap = now - raw
  local step = gap
  if gap > STEP and failed_at > 0 and failed_at >= raw - TOLERANCE then
    step = STEP
  end
  lt = lt + step
  elapsed = gap
  raw = now
elseif now < raw - TOLERANCE then
  raw = now
end

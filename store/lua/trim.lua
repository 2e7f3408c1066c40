-- trim.lua: arrivals the line is done with, trimmed once a turn.
-- KEYS: arrivals.
-- ARGV: claim_ms.
-- Reply: none set here.
-- Arrivals are kept a while after the line reaches their ticket (a replay
-- within a claim window, and while its pass can be presented, finds its
-- ticket), then trimmed in one range: every turn, those reached by the
-- turn before. A turn is ARRIVAL_MS of line time (which runs no faster
-- than the wall clock): one range a turn, the admissions of one turn.
if lt >= trim_at then
  redis.call('ZREMRANGEBYSCORE', arrivals, 1, trim_mark)
  redis.call('ZREMRANGEBYSCORE', arrivals, -p_trim, -1)
  trim_mark, p_trim = admitted, p_admitted
  if random and admitted < w_end then
    trim_mark = w_start - 1
  elseif d_first <= admitted and admitted < d_last then
    trim_mark = d_first - 1
  end
  trim_at = lt + math.max(claim_ms, ARRIVAL_MS)
end

-- values.lua: the line's values as locals (a new line's sets emptied
-- first), and what the call started from.
-- KEYS: sessions, called, waiting, arrivals, ended, windows (unlinked for a
--   new line); line (its rkey, for a new line).
-- ARGV: now, burst, random_key, ev_name, ev_pq.
-- Reply: epoch, issued, admitted, flags, p_issued, p_admitted, as the line
--   stood (later parts move them).
if not s[1] then
  -- A new line, or one whose hash was lost: nothing of an older line may
  -- leak into it (its tickets would collide with the new ones). Invites
  -- stay used: a reset must not hand their places out again; events
  -- drawn stay drawn, so no draw key is used twice.
  redis.call('UNLINK', sessions, called, waiting, arrivals, ended, windows)
  set_field('rkey', random_key)
end
local epoch = n[1] or now
local issued = n[2] or 0
local admitted = n[3] or 0
local tokens = n[4] or burst
local raw = n[5] or now
local lt = n[6] or now
local paused = s[7] == '1'
local queue_all = s[8] == '1'
local was_random = s[9] == '1'
-- Random order: the window being called, and the window still filling.
-- The windows closed in between are in KEYS[7].
local w_start = n[10] or 1
local w_end = n[11] or 0
local open_first = n[12] or 1
local open_since = n[13] or now
local trim_mark = n[15] or 0
local trim_at = n[16] or now
local p_issued = n[17] or 0
local p_admitted = n[18] or 0
local p_credit = n[19] or 1
local p_trim = n[20] or 0
local ev_state = n[22] or 0
local ev_first = n[23] or 0
local stored_start = n[24] or 0
local d_first = n[26] or 1
local d_last = n[27] or 0
local stored_pq = n[29]
local stored_until = n[34] or 0
-- When the sets were last swept (line time), and the history's record
-- last written (the caller's second).
local marks = { swept = n[40] or 0, noted = n[41] or 0 }
if migrated and s[21] and not stored_pq then
  -- An event entered by the script before events were told apart by
  -- their schedule: it is the event passed if the name is.
  stored_pq = s[21] == ev_name and ev_pq or -1
end
local minute = math.floor(now / 60000)
local called_now = 0
local issued0, admitted0 = issued, admitted

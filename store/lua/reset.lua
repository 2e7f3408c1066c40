-- reset.lua: the reset operation: the line starts afresh under a later
-- epoch. (A branch of the if overrides.lua opens; it ends here.)
-- KEYS: line, sessions, called, waiting, arrivals, ended, windows (unlinked).
-- ARGV: now, random_key.
-- Reply: epoch (the new line's), and everything else afresh.
elseif op == 'reset' and s[1] then
  -- A new line under a later epoch: only the switches carry over (and
  -- the overrides, read above).
  local paused_was, queue_all_was = s[7], s[8]
  -- UNLINK frees a long line's sets off the main thread: the call
  -- costs the same whatever the line's length.
  redis.call('UNLINK', line, sessions, called, waiting, arrivals, ended, windows)
  local later = math.max(now, n[1] + 1)
  s, n = { string.format('%d', later), [7] = paused_was, [8] = queue_all_was }, { later }
  G.open = { w = true, p = true, e = true, o = true, m = true, h = true }
  cold, cold_set, migrated = { rkey = false, ev = false, ev_key = false, d_key = false }, {}, false
  set_field('rkey', random_key)
end

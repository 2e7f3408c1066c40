-- group.lua: the ticket's group, in calling positions.
-- KEYS: windows.
-- ARGV: none.
-- Reply: call_from, call_to, groups_ahead.
-- The ticket's group, in calling positions: itself in first-come order;
-- in random order its window, and how many windows ahead of it are not
-- fully called yet.
local call_from, call_to, groups_ahead = ticket, ticket, 0
if held and ticket >= ev_first then
  call_from, call_to = ev_first, issued
elseif not random and d_first <= ticket and ticket <= d_last then
  call_from, call_to = d_first, d_last
elseif random and ticket >= w_start and ticket > 0 then
  local current = (admitted < w_end) and 1 or 0
  if ticket <= w_end then
    call_from, call_to = w_start, w_end
  else
    local after = redis.call('ZRANGEBYSCORE', windows, ticket, '+inf', 'LIMIT', 0, 1)
    if after[1] then
      local before = redis.call('ZREVRANGEBYSCORE', windows, '(' .. ticket, '-inf', 'LIMIT', 0, 1)
      call_from, call_to = (tonumber(before[1]) or w_end) + 1, tonumber(after[1])
      groups_ahead = current + redis.call('ZCOUNT', windows, '-inf', '(' .. ticket)
    else
      call_from, call_to = open_first, issued
      groups_ahead = current + redis.call('ZCARD', windows)
    end
  end
end

-- overrides.lua: the limits and clear operations (the operator's live
-- overrides), the shards' check of the capacity, and the state an action's
-- audit entry reports as before. (The if that limits opens, reset.lua ends.)
-- KEYS: none.
-- ARGV: op, capacity, shards, set_rate, set_burst, set_cap, set_mode,
--   audit.
-- Reply: o_rate, o_burst, o_cap, o_mode.
-- The overrides, and what an action's audit entry reports as before.
local o_rate, o_burst, o_cap = n[30], n[31], n[32]
local o_mode = modes[s[33]] and s[33] or ''
local function state_json(e, i, a, p, q)
  local function opt(v)
    return v and tostring(v) or 'null'
  end
  local m = 'null'
  if o_mode ~= '' then
    m = '"' .. o_mode .. '"'
  end
  return '{"epoch":' .. e .. ',"issued":' .. i .. ',"admitted":' .. a .. ',"paused":' .. tostring(p)
    .. ',"queue_all":' .. tostring(q) .. ',"max_active_users":' .. opt(o_cap) .. ',"new_users_per_minute":'
    .. opt(o_rate) .. ',"burst":' .. opt(o_burst) .. ',"mode":' .. m .. '}'
end
-- A capacity below the shard count would leave a shard no share of it,
-- and nobody in that shard's line would ever be called: refused, whether
-- the config or the operator's action sets it, before anything is
-- written. (The rate is split as a fraction and a burst share is at
-- least one, so neither leaves a shard with nothing.)
if A.shards ~= '1' then
  local cap = capacity
  if op == 'limits' and o_set[3] then
    cap = o_set[3]
  end
  if cap > 0 and cap < tonumber(A.shards) then
    return redis.error_reply('ERR line: max_active_users ' .. cap .. ' is below the room\'s ' .. A.shards
      .. ' shards: each shard needs at least one place (clear the live capacity or raise it)')
  end
end
local before = ''
if #audit_entry > 0 then
  before = state_json(n[1] or 0, n[2] or 0, n[3] or 0, s[7] == '1', s[8] == '1')
end
if op == 'limits' then
  o_rate, o_burst, o_cap = o_set[1] or o_rate, o_set[2] or o_burst, o_set[3] or o_cap
  if set_mode ~= '' then
    o_mode = set_mode
  end
elseif op == 'clear' then
  o_rate, o_burst, o_cap, o_mode = nil, nil, nil, ''

-- policy.lua: the limits in force: the operator's values over the
-- configured ones, the mode's, and this shard's share of them.
-- KEYS: none.
-- ARGV: rate, burst, capacity, mode, shard, shards.
-- Reply: none set here.
-- The operator's values replace the configured ones.
rate, burst, capacity = o_rate or rate, o_burst or burst, o_cap or capacity
local mode = cfg_mode
if o_mode ~= '' then
  mode = o_mode
end
if mode == 'passthrough' then
  rate, capacity = 0, 0
end
local closed = mode == 'reject'
-- A shard takes its share of the room's rate, burst and capacity, so
-- that the shards together never pass the room's: the whole shares are
-- split as evenly as they go, the first shards taking one more. A burst
-- share is at least one, or a shard's tokens would never make a call.
-- A capacity share is at least one too: a capacity below the shard count
-- is refused above, but a live one stored before that check may be one,
-- and a shard with no place would never call anyone.
if A.shards ~= '1' then
  local shards, shard = tonumber(A.shards), tonumber(A.shard)
  local function part(total)
    local base = math.floor(total / shards)
    if shard < total % shards then
      return base + 1
    end
    return base
  end
  rate, burst = rate / shards, math.max(part(burst), 1)
  if capacity > 0 then
    capacity = math.max(part(capacity), 1)
  end
end

-- sweep.lua: what has expired forgotten, and the sets' helpers every later
-- part uses (alive, count, zadd, touch, zrem, free).
-- KEYS: sessions, called, waiting, ended.
-- ARGV: queue_ms, capacity (the capacity in force).
-- Reply: none set here.
-- Forget what has expired: sessions, unclaimed calls, waiting visitors
-- who stopped polling, and tombstones. Memory follows the live population.
-- At most SWEEP of each once a second, the oldest first (a quiet spell
-- can expire a million tickets at once): a sweep costs four commands, too
-- many for every call of a busy line. What is not swept yet is no longer
-- counted, since every reader below asks whether an entry is still alive
-- (alive), not only whether it is there.
local floor = { [sessions] = lt, [called] = lt, [waiting] = lt - queue_ms, [ended] = lt }
if lt >= marks.swept + SWEEP_EVERY or lt < marks.swept then
  for key, at in pairs(floor) do
    local n = redis.call('ZCOUNT', key, '-inf', at)
    if n > 0 then
      redis.call('ZREMRANGEBYRANK', key, 0, math.min(n, SWEEP) - 1)
    end
  end
  marks.swept = lt
end
-- alive is whether t is in key and has not expired.
local function alive(key, t)
  local score = tonumber(redis.call('ZSCORE', key, t))
  return score ~= nil and score > floor[key]
end
-- count is how many entries of key have not expired: counted once a call
-- and again only after the set changes (zadd, zrem).
local counted = {}
local function count(key)
  local n = counted[key]
  if not n then
    n = redis.call('ZCOUNT', key, '(' .. floor[key], '+inf')
    counted[key] = n
  end
  return n
end
local function zadd(key, score, t)
  counted[key] = nil
  redis.call('ZADD', key, score, t)
end
-- touch moves the expiry of t, alive in key: the count stays.
local function touch(key, score, t)
  redis.call('ZADD', key, score, t)
end
local function zrem(key, t)
  counted[key] = nil
  redis.call('ZREM', key, t)
end

-- free is how many more visitors may be called in now: capacity less live
-- sessions (ended ones whose passes still admit included) and calls still
-- inside their claim window.
local function free()
  if capacity < 0 then
    return 0
  end
  if capacity <= 0 then
    return math.huge
  end
  return capacity - count(sessions) - count(called)
end

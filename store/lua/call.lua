-- call.lua: calling waiting tickets in (call_in, settle), and the token
-- bucket's calls since the last call.
-- KEYS: waiting, called (a called ticket moves from one to the other).
-- ARGV: rate, burst, capacity, catchup_ms, claim_ms, share (those in
--   force).
-- Reply: admitted, p_admitted, called_now.
-- call_in calls up to limit waiting tickets in order and returns the tokens
-- left. Automatic admission (bounded) obeys pause, queue-all, the rate and
-- the capacity; the operator's "admit N" does not. A ticket whose holder
-- stopped polling is passed over without using a place. One script call
-- calls and passes over at most MAX_CALLS tickets each. The next ticket is
-- the priority lane's while it has credit (or no regular ticket waits);
-- nobody from the pre-queue, nor the priority lane, is called before the
-- draw.
local calls_left, skips_left = MAX_CALLS, MAX_CALLS
local earn = 1
if share < 1 then
  earn = share / (1 - share)
end
local function call_in(limit, available, bounded)
  if bounded and (paused or queue_all or closed) then
    return available
  end
  local places = math.huge
  if bounded then
    places = free()
  end
  while limit > 0 and places > 0 and calls_left > 0 and skips_left > 0
      and (not bounded or rate <= 0 or available >= 1) do
    local regular = admitted < issued and not (held and admitted + 1 >= ev_first)
    local t
    if p_admitted < p_issued and not held and (p_credit >= 1 or not regular) then
      p_admitted = p_admitted + 1
      t = -p_admitted
    elseif regular then
      admitted = admitted + 1
      t = ticket_at(admitted)
    else
      break
    end
    if alive(waiting, t) then
      zrem(waiting, t)
      zadd(called, lt + claim_ms, t)
      places, limit, calls_left = places - 1, limit - 1, calls_left - 1
      called_now = called_now + 1
      if bounded and rate > 0 then
        available = available - 1
      end
      if t < 0 then
        p_credit = math.max(p_credit - 1, 0)
      else
        -- What is short of a call carries over while the lane waits, so
        -- it gets its share exactly (0.3, 0.9, ...); an idle lane (or one
        -- held for a draw) banks one call at most.
        local bank = 1
        if p_admitted < p_issued and not held then
          bank = 1 + earn
        end
        p_credit = math.min(p_credit + earn, bank)
      end
    else
      skips_left = skips_left - 1
    end
  end
  return available
end

-- settle hands saved-up tokens and free places to whoever waits now.
local function settle()
  tokens = call_in(math.huge, tokens, true)
end

-- Admit what a continuous scheduler would have admitted since the last call:
-- while tickets waited, every token went to the next of them at once; only
-- once the line was empty (or paused) did tokens pile up, to at most the
-- burst. A gap since the last call is made up for by at most catch-up's
-- worth beyond the burst, so a quiet spell never calls a crowd at once.
local available = tokens
if rate > 0 then
  available = math.min(tokens + elapsed * rate / 60000, burst + catchup_ms * rate / 60000)
end
tokens = math.min(burst, call_in(math.huge, available, true))

-- draw.lua: the calling order's keyed permutation (random order, and a
-- drawn pre-queue), and ticket_at, the ticket called at a position.
-- KEYS: windows (the oldest closed window, taken); line (rkey, d_key).
-- ARGV: none.
-- Reply: none set here.
-- keys_for derives a window's round keys from the line's secret key (or a
-- drawn pre-queue's from its draw key): each round key is a polynomial
-- hash of the key and the window, with a multiplier of its own, modulo a
-- prime below 2^26, then squared (every product stays below 2^53, exact
-- in Lua's doubles). One hash per key, because keys all derived from one
-- 26-bit hash (as with four rounds) allow fewer than 2^25 orders, and so
-- in long ranges some places are likelier than others. A keyed mix, not a
-- cryptographic one: enough that visitors cannot tell the order without
-- the key. Package draw computes the same in Go.
local P = 67108859
local ROUNDS = 12
local round_keys = {}
local function keys_for(seed)
  local k = round_keys[seed]
  if k then
    return k
  end
  local text
  if seed == d_first and d_first <= d_last then
    text = 'draw:' .. field('d_key')
  else
    text = field('rkey') .. ':' .. epoch .. ':' .. seed
  end
  k = {}
  for r = 1, 2 * ROUNDS do
    local h, m = 0, 257 + 2 * r
    for i = 1, #text do
      h = (h * m + string.byte(text, i) + 1) % P
    end
    k[r] = (h * h + 7919 * r + 1) % P
  end
  round_keys[seed] = k
  return k
end

-- permute maps i in [0, n) to a keyed pseudorandom j in [0, n): a
-- Feistel network of ROUNDS rounds on [0, half^2) (each round adds a keyed
-- quadratic of one half to the other, a bijection) with cycle walking
-- back into [0, n). Twelve rounds, because with four every place was not
-- equally likely in small windows (a chi-square test in package draw).
local function permute(i, n, seed)
  if n <= 1 then
    return 0
  end
  local half = 2
  while half * half < n do
    half = half * 2
  end
  local k = keys_for(seed)
  local x = i
  repeat
    local l, r = math.floor(x / half), x % half
    for j = 1, #k / 2 do
      local y = (r + k[2 * j - 1]) % P
      l, r = r, (l + (y * y + k[2 * j]) % P) % half
    end
    x = l * half + r
  until x < n
  return x
end

-- ticket_at is the ticket called at position p (the next one after those
-- called so far).
local function ticket_at(p)
  if not random then
    if d_first <= p and p <= d_last then
      return d_first + permute(p - d_first, d_last - d_first + 1, d_first)
    end
    return p
  end
  if p > w_end then
    -- The next window: the oldest closed one, or, when none has closed,
    -- the one still filling, cut here so nobody waits for it to fill.
    w_start = w_end + 1
    local oldest = redis.call('ZPOPMIN', windows)
    if oldest[1] then
      w_end = tonumber(oldest[1])
    else
      w_end = issued
      if held then
        w_end = ev_first - 1
      end
      open_first, open_since = w_end + 1, lt
    end
  end
  return w_start + permute(p - w_start, w_end - w_start + 1, w_start)
end

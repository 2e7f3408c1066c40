-- state.lua: the line's state read from its hash: the numbers of s, the
-- groups a call opens when it needs them, and the string fields.
-- KEYS: line (s, as keys.lua read it; rkey, ev, ev_key and d_key when
--   first used; an older version's fields, once).
-- ARGV: op (a reset may replace an unreadable state), mode, ev_name.
-- Reply: none set here.
-- The line's state. Its numbers and switches are one field of the hash,
-- s, read and written whole, because a call reading and writing forty
-- fields by name spent a third of its time finding them: epoch, issued,
-- admitted, tokens, raw, lt, paused, queue_all, random, trim_mark,
-- trim_at, p_issued, ev_state, when the sets were last swept and the
-- history's record last written, the minute of the last five minutes'
-- admissions and their sum, then the groups below, each value followed by
-- a comma ('' for none). Its strings (rkey, ev, ev_key, d_key: a secret,
-- an event's name, draw keys) are fields of their own, read only by the
-- calls that need them (field) and written only when they change. A line
-- an earlier version of this script wrote kept every value in a field of
-- its own (the HMGET below): it is read from them once, and written as s
-- from then on. Below, s and n hold the values as text and as numbers by
-- the index of that HMGET's field (then 40 swept, 41 noted, 42 and 43 the
-- admissions' minute and sum), so that a value a call leaves as it was is
-- written back as the text it was read as.
local cold, cold_set = {}, {}
local s, n, migrated = {}, {}, false
-- Groups of the state's values that most calls leave alone: the random
-- order's windows (w), the priority lane past its count (p), the event
-- past its state (e), the overrides (o), the minutes' admissions (m) and
-- what the history's record has still to be given (h).
-- Each is one value of s, its members each followed by ';' ('' for all
-- at their defaults), split only by a call that needs it (open) and
-- otherwise written back as it was read: a poll of a first-come line with
-- no event, invite or override splits none.
local G = { text = {}, open = {}, w = { 10, 11, 12, 13 }, p = { 18, 19, 20 }, e = { 23, 24, 26, 27, 29, 34 },
  o = { 30, 31, 32, 33 }, m = { 35, 36, 37, 38, 39 }, h = { 44, 45, 46, 47, 48, 49, 50, 51 } }
-- num parses a value: tonumber costs as much as a command, and 0, 1 and
-- '' are common.
local function num(v)
  if v == '0' then
    return 0
  elseif v == '1' then
    return 1
  elseif v ~= '' then
    return tonumber(v)
  end
end
local function open(g)
  if not G.open[g] then
    G.open[g] = true
    local k = 1
    for v in string.gmatch(G.text[g] or '', '([^;]*);') do
      local i = G[g][k]
      s[i], n[i], k = v, num(v), k + 1
    end
  end
end
do
  if packed then
    -- One match splits it (Lua allows 32 captures): ten times cheaper
    -- than a loop.
    local v = { string.match(packed, '^' .. string.rep('([^,]*),', 23) .. '$') }
    if #v ~= 23 and op ~= 'reset' then
      return redis.error_reply('ERR line: the line\'s state is unreadable: nothing changed (a reset starts the line afresh)')
    end
    for j, i in ipairs({ 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 22, 40, 41, 42, 43 }) do
      s[i], n[i] = v[j], num(v[j])
    end
    G.text = { w = v[18], p = v[19], e = v[20], o = v[21], m = v[22], h = v[23] }
    open('o')
    if s[17] ~= '0' then
      open('p')
    end
    if s[22] ~= '0' or #ev_name > 0 then
      open('e')
    end
    if s[9] == '1' or cfg_mode == 'random' or s[33] == 'random' then
      open('w')
    end
  else
    s = redis.call('HMGET', line, 'epoch', 'issued', 'admitted', 'tokens', 'raw', 'lt', 'paused', 'queue_all',
      'random', 'w_start', 'w_end', 'open_first', 'open_since', 'rkey', 'trim_mark', 'trim_at',
      'p_issued', 'p_admitted', 'p_credit', 'p_trim', 'ev', 'ev_state', 'ev_first', 'ev_start', 'ev_key', 'd_first',
      'd_last', 'd_key', 'ev_pq', 'o_rate', 'o_burst', 'o_cap', 'o_mode', 'ev_until', 'm0', 'm1', 'm2', 'm3', 'm4')
    migrated = s[1] and true
    cold.rkey, cold.ev, cold.ev_key, cold.d_key = s[14] or false, s[21] or false, s[25] or false, s[28] or false
    for i = 1, 39 do
      n[i] = tonumber(s[i])
    end
    G.open = { w = true, p = true, e = true, o = true, m = true, h = true }
  end
end
-- field is the line's string field name ('' for none), read on first use.
local function field(name)
  local v = cold[name]
  if v == nil then
    v = redis.call('HGET', line, name) or false
    cold[name] = v
  end
  return v or ''
end
-- set_field changes it, to be written with the state.
local function set_field(name, v)
  if field(name) ~= v then
    cold[name], cold_set[name] = v, true
  end
end

-- recent.lua: admissions of the last five minutes, for the wait estimate.
-- KEYS: none.
-- ARGV: none read here (the minute, of now, is values.lua's).
-- Reply: recent, since.
-- Count admissions per minute for the wait estimate, in five slots m0..m4
-- holding "minute:count": a slot is reused five minutes on, so the count
-- never outgrows five fields, however long a room sits idle. Minutes are
-- the callers' clock: this is a statistic, not a deadline.
local function slot_count(m, value)
  local sep = value and string.find(value, ':', 1, true)
  if sep and tonumber(string.sub(value, 1, sep - 1)) == m then
    return tonumber(string.sub(value, sep + 1)) or 0
  end
  return 0
end
-- The sum is kept with the minute it was taken in, and taken again only
-- when that minute has passed or this call called someone.
local recent, slots = n[43], nil
if n[42] ~= minute or called_now > 0 or not recent then
  open('m')
  slots = { s[35], s[36], s[37], s[38], s[39] }
  if called_now > 0 then
    local i = minute % 5
    slots[i + 1] = minute .. ':' .. (slot_count(minute, slots[i + 1]) + called_now)
  end
  recent = 0
  for back = 0, 4 do
    local m = minute - back
    recent = recent + slot_count(m, slots[(m % 5) + 1])
  end
end
local since = math.max(epoch, (minute - 4) * 60000)

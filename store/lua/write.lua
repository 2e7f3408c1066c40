-- write.lua: the line's state written back, as one field and the string
-- fields that changed.
-- KEYS: line (s and the changed strings; an older version's fields, deleted).
-- ARGV: none.
-- Reply: none set here.
-- A value the call left as it was is written as it was read; others
-- with %d where whole, since formatting a number as Lua does (%.14g)
-- costs ten times as much. (In a block: the script's locals would pass
-- the 200 registers a Lua function may use, and gopher-lua, the embedded
-- Redis of make serve, would refuse it.)
do
  local function int(i, v, format)
    if v == n[i] then
      return s[i]
    end
    return string.format(format or '%d', v)
  end
  local function flag(b)
    return b and '1' or '0'
  end
  -- A group is written from its values when the call opened it, or began
  -- to use it (the random order, an invite, an event).
  local w, p, e, m = G.text.w, G.text.p, G.text.e, G.text.m
  if G.open.w or random then
    w = table.concat({ int(10, w_start), int(11, w_end), int(12, open_first), int(13, open_since), '' }, ';')
  end
  if G.open.p or p_issued > 0 then
    p = table.concat({ int(18, p_admitted), int(19, p_credit, '%.6f'), int(20, p_trim), '' }, ';')
  end
  if G.open.e or ev_state ~= 0 then
    e = table.concat({ int(23, ev_first), int(24, stored_start), int(26, d_first), int(27, d_last),
      stored_pq and int(29, stored_pq) or '', int(34, stored_until), '' }, ';')
  end
  if slots then
    m = table.concat({ slots[1] or '', slots[2] or '', slots[3] or '', slots[4] or '', slots[5] or '', '' }, ';')
  end
  local o = ''
  if o_rate or o_burst or o_cap or o_mode ~= '' then
    o = table.concat({ o_rate and tostring(o_rate) or '', o_burst and int(31, o_burst) or '',
      o_cap and int(32, o_cap) or '', o_mode, '' }, ';')
  end
  local h = G.text.h
  if pending then
    h = table.concat({ int(44, pending.m), int(45, pending.joins), int(46, pending.calls), int(47, pending.refusals),
      int(48, pending.i_first), int(49, pending.i_last), int(50, pending.a_first), int(51, pending.a_last), '' }, ';')
  elseif pending == false then
    h = ''
  end
  local packed = table.concat({ int(1, epoch), int(2, issued), int(3, admitted), int(4, tokens, '%.6f'), int(5, raw),
    int(6, lt), flag(paused), flag(queue_all), flag(random), int(15, trim_mark), int(16, trim_at), int(17, p_issued),
    int(22, ev_state), int(40, marks.swept), int(41, marks.noted), int(42, minute), int(43, recent),
    w or '', p or '', e or '', o, m or '', h or '', '' }, ',')
  local strings = {}
  for name in pairs(cold_set) do
    strings[#strings + 1], strings[#strings + 2] = name, cold[name]
  end
  redis.call('HSET', line, 's', packed, unpack(strings))
end
if migrated then
  redis.call('HDEL', line, 'epoch', 'issued', 'admitted', 'tokens', 'raw', 'lt', 'paused', 'queue_all',
    'random', 'w_start', 'w_end', 'open_first', 'open_since', 'trim_mark', 'trim_at', 'p_issued', 'p_admitted',
    'p_credit', 'p_trim', 'ev_state', 'ev_first', 'ev_start', 'd_first', 'd_last', 'ev_pq', 'o_rate', 'o_burst',
    'o_cap', 'o_mode', 'ev_until', 'm0', 'm1', 'm2', 'm3', 'm4')
end

-- event.lua: the scheduled event: its pre-queue entered, and drawn.
-- KEYS: events (draw keys drawn: checked, added, old ones forgotten);
--   windows (the pre-queue closes its own); line (ev, ev_key, d_key).
-- ARGV: now, ev_name, ev_pq, ev_start, ev_end, ev_key.
-- Reply: none set here; reply.lua answers the event's state it leaves.
-- The scheduled event. A pre-queue is drawn once its start has come and
-- the previous draw is called through, since one drawn range is kept at a
-- time. In random order the pre-queue becomes one closed window, apart
-- from the windows before it.
-- An event is known by its schedule as well as its name: the edge derives
-- its draw key from (name, pre-queue start, start). The event entered is
-- the one passed while its name and pre-queue start are (same); its start
-- may move while its pre-queue is open, keeping the key it was entered
-- with. Every key drawn is kept in KEYS[11] (score: its event's end) and
-- never entered again, so a reused name (or a start moved after the draw)
-- is a new event with a pre-queue and a key of its own, no key is drawn
-- twice, and a line reset before its draw enters its event again.
local same = #ev_name > 0 and stored_pq == ev_pq and field('ev') == ev_name
local function draw()
  d_first, d_last = ev_first, issued
  set_field('d_key', field('ev_key'))
  ev_state = 2
  redis.call('ZADD', events, stored_until, field('ev_key'))
end
if ev_state == 1 and same then
  stored_start = ev_start -- the operator may move the start
end
if ev_state == 1 and now >= stored_start and admitted >= d_last then
  if random then
    if ev_first - 1 >= open_first then
      redis.call('ZADD', windows, ev_first - 1, ev_first - 1)
    end
    if issued >= ev_first then
      redis.call('ZADD', windows, issued, issued)
    end
    open_first, open_since = issued + 1, lt
  end
  draw()
end
if ev_state ~= 1 and #ev_name > 0 and now >= ev_pq and now < ev_end and not (same and stored_start == ev_start)
    and not redis.call('ZSCORE', events, ev_key) then
  -- Schedules whose events ended a day ago can no longer be entered.
  redis.call('ZREMRANGEBYSCORE', events, '-inf', '(' .. (now - DAY * 60000))
  if random and issued >= open_first then
    redis.call('ZADD', windows, issued, issued)
  end
  if random then
    open_first, open_since = issued + 1, lt
  end
  ev_state, ev_first, stored_start = 1, issued + 1, ev_start
  set_field('ev', ev_name)
  set_field('ev_key', ev_key)
  stored_pq, stored_until, same = ev_pq, ev_end, true
  if now >= ev_start and admitted >= d_last then
    -- Entered after its start: an empty pre-queue, drawn at once.
    draw()
  end
end
local held = ev_state == 1

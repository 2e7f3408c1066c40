package main

// The protocol of line.lua: what every call sends (the header), what each
// operation adds (its tail), and what every call answers (the reply). It is
// the one place that names them: go generate ./store writes the script's
// named indices (between the protocol markers in line.lua) and the Go side
// (store/lineproto.go) from it, so neither side counts positions.

// kind is how an argument is written: a whole number, a decimal, a string,
// or a boolean ("1" or "0").
type kind int

const (
	whole kind = iota
	decimal
	text
	boolean
)

// arg is one argument: its name in Lua (snake case), in Go (a field of
// lineArgs), its kind and what it means.
type arg struct {
	lua, goName string
	kind        kind
	doc         string
}

// header is what every operation sends, first.
var header = []arg{
	{"op", "Op", text, "the operation: a key of the tails below"},
	{"now", "Now", whole, "the caller's clock, ms since 1970"},
	{"rate", "Rate", decimal, "admissions per minute; 0 = no rate"},
	{"burst", "Burst", whole, "admissions a quiet room may save up"},
	{"capacity", "Capacity", whole, "most live sessions plus unclaimed calls; 0 = no cap"},
	{"claim_ms", "ClaimMS", whole, "how long a call is held for its ticket"},
	{"session_ms", "SessionMS", whole, "how long a session lives unrenewed"},
	{"queue_ms", "QueueMS", whole, "how long a waiting ticket keeps its place unpolled"},
	{"window_ms", "WindowMS", whole, "the random-order window; 0 = first come, first served"},
	{"catchup_ms", "CatchUpMS", whole, "rate a call may make up for beyond the burst after a quiet spell"},
	{"heartbeat_ms", "HeartbeatMS", whole, "how long a session pass admits without asking"},
	{"share", "Share", decimal, "the priority lane's largest share of admissions, 0 to 1"},
	{"mode", "Mode", text, "the configured mode: fifo, random, passthrough or reject"},
	{"random_key", "RandomKey", text, "the key of a new line's random order (a line keeps its own)"},
	{"ev_name", "EventName", text, "the room's scheduled event, '' for none"},
	{"ev_pq", "EventPrequeue", whole, "its pre-queue start, ms"},
	{"ev_start", "EventStart", whole, "its start (the draw), ms"},
	{"ev_end", "EventEnd", whole, "its end, ms"},
	{"ev_key", "EventKey", text, "the draw key of the event as scheduled (name, pre-queue start, start)"},
	{"refused", "Refused", boolean, "the request's pass was refused (counted in the history)"},
	{"shard", "Shard", whole, "which of the room's shards this line is, from 0"},
	{"shards", "Shards", whole, "how many shards the room runs as: each takes its share of rate, burst and capacity; 1 = unsharded"},
	{"failed_at", "FailedAt", whole, "ms: the latest store failure the caller observed (its POP's, or the holder's failed renewal); 0 = none"},
}

// tails are what each operation sends after the header.
var tails = []struct {
	op   string
	args []arg
}{
	{"join", []arg{arrival}},
	{"vip", []arg{arrival,
		{"invite", "Invite", text, "the invite's id: its uses are counted under it"},
		{"uses", "Uses", whole, "how many tickets the invite may hand out"},
		{"invite_until", "InviteUntil", whole, "ms: until when its count is kept"}}},
	{"poll", []arg{ticket, epoch}},
	{"renew", []arg{ticket, epoch}},
	{"end", []arg{ticket, epoch,
		{"usable_until", "UsableUntil", whole, "ms: until when the ending pass admits without asking"}}},
	{"admit", []arg{{"n", "N", whole, "how many to call at once, beyond rate and capacity"}, audit}},
	{"pause", []arg{audit}},
	{"resume", []arg{audit}},
	{"queue_all", []arg{audit}},
	{"clear", []arg{audit}},
	{"reset", []arg{audit}},
	{"limits", []arg{audit,
		{"set_rate", "SetRate", text, "the live rate to set, '' to keep"},
		{"set_burst", "SetBurst", text, "the live burst to set, '' to keep"},
		{"set_cap", "SetCapacity", text, "the live capacity to set, '' to keep"},
		{"set_mode", "SetMode", text, "the live mode to set, '' to keep"}}},
	{"stats", nil},
}

// The arguments several tails share.
var (
	arrival = arg{"arrival", "Arrival", text, "the arrival pass's id: one ticket per arrival"}
	ticket  = arg{"ticket", "Ticket", whole, "the ticket (negative: the priority lane's) or session's ticket"}
	epoch   = arg{"epoch", "Epoch", whole, "the line the ticket or session belongs to"}
	audit   = arg{"audit", "Audit", text, "the operator action's audit entry, a JSON object less its states and closing brace; '' for none"}
)

// reply is what every call answers, in order.
var reply = []arg{
	{"epoch", "Epoch", whole, "the line's epoch"},
	{"issued", "Issued", whole, "the last regular ticket handed out"},
	{"admitted", "Admitted", whole, "the last position called (or passed over)"},
	{"flags", "Flags", whole, "1 paused, 2 queue-all"},
	{"ticket", "Ticket", whole, "the caller's ticket"},
	{"outcome", "Outcome", whole, "join/vip/poll: 0 waiting, 1 admitted, 2 lost, 3 invite spent, 4 closed; renew: 1 ok, 0 gone"},
	{"live", "Live", whole, "live sessions"},
	{"called", "Called", whole, "calls not yet claimed"},
	{"recent", "Recent", whole, "admissions in the last five minutes"},
	{"since", "Since", whole, "ms: since when recent counts"},
	{"called_now", "CalledNow", whole, "tickets this call called"},
	{"call_from", "CallFrom", whole, "the first calling position the ticket can be called at"},
	{"call_to", "CallTo", whole, "the last"},
	{"groups_ahead", "GroupsAhead", whole, "random order: groups called before the ticket's"},
	{"p_issued", "PriorityIssued", whole, "the priority lane's tickets handed out"},
	{"p_admitted", "PriorityAdmitted", whole, "and called"},
	{"ev_state", "EventState", whole, "the event passed: 0 not entered, 1 pre-queue, 2 drawn"},
	{"pq_first", "PrequeueFirst", whole, "its first pre-queue ticket"},
	{"drawn_first", "DrawnFirst", whole, "the first drawn ticket"},
	{"drawn_last", "DrawnLast", whole, "the last drawn ticket"},
	{"ev_key", "EventKey", text, "the draw key the event was entered with ('' when not entered): its commitment is published, the key revealed once drawn"},
	{"o_rate", "OverrideRate", whole, "the live rate in thousandths, -1 for none"},
	{"o_burst", "OverrideBurst", whole, "the live burst, -1 for none"},
	{"o_cap", "OverrideCapacity", whole, "the live capacity, -1 for none"},
	{"o_mode", "OverrideMode", whole, "the live mode: 0 none, 1 fifo, 2 random, 3 passthrough, 4 reject"},
}

package store

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

//go:embed line.lua
var lineScript string

// The name EVALSHA knows line.lua by is a constant written by go generate
// (lineproto.go), not hashed at run time: every edge request that called the
// store hashed the 36 KB script, and in the simulator that hashing was the
// costliest single function (14% of its process's CPU, by perf). A package-level
// initializer would not do: TinyGo evaluates those at compile time, and
// 0.33 turned this very one into 40 NUL bytes (the rule for the edge module
// is in the doc of package main). TestScriptSHA fails when line.lua changes
// and the constant does not.
//
//go:generate go run ./genline

// Request is one HTTP POST to the Upstash REST API.
type Request struct {
	URL    string
	Header map[string]string
	Body   []byte
}

// Response is the status and body of the answer.
type Response struct {
	Status int
	Body   []byte
}

// Transport sends a Request. At the edge it is a Fastly backend; natively,
// net/http. It must honour ctx's deadline, and return an error only when no
// HTTP answer arrived.
type Transport interface {
	RoundTrip(ctx context.Context, req Request) (Response, error)
}

// DefaultTimeout bounds one store operation when Upstash.Timeout is zero.
const DefaultTimeout = 2 * time.Second

// MaxAnswer bounds the answer read from Upstash: the script's reply is a
// few numbers; a day of history (History) is about 100 KB, and a page of
// the audit log (at most MaxAuditPage entries of at most 1.5 KB) about
// 300 KB. Anything longer is a fault, not data.
const MaxAnswer = 512 << 10

// MaxAuditPage bounds the entries one Audit call reads.
const MaxAuditPage = 200

// Upstash is a Store on an Upstash Redis database, over its REST API.
type Upstash struct {
	// URL is the database's REST URL, e.g. https://xyz.upstash.io.
	URL string
	// Token is the REST token (the standard one: the script writes).
	Token string
	// Transport carries the requests.
	Transport Transport
	// Timeout bounds each operation, including the EVAL retry.
	Timeout time.Duration
	// Prefix starts every key, so that several services can share a
	// database. Empty means "wr:".
	Prefix string
	// RandomKey seeds the random calling order of a line created by this
	// client; it must be secret, or visitors could compute the order. A
	// line keeps the key it was created with.
	RandomKey string
}

// maxArrival bounds an arrival id, as the script does.
const maxArrival = 128

// Join implements Store: room is the line (a shard's already named by
// package shard, which routes by a.Shard).
func (u *Upstash) Join(ctx context.Context, room string, p Policy, a Arrival, now time.Time) (Place, error) {
	if a.ID == "" || len(a.ID) > maxArrival {
		return Place{}, fmt.Errorf("join %s: %w: arrival id of %d bytes, want 1 to %d", room, ErrRejected, len(a.ID), maxArrival)
	}
	r, err := u.run(ctx, room, p, lineArgs{Op: "join", Arrival: a.ID}, now)
	return r.place(), err
}

// inviteMargin is how long past an invite's expiry its count is kept, for
// edges whose clocks are behind.
const inviteMargin = time.Hour

// JoinPriority implements Store.
func (u *Upstash) JoinPriority(ctx context.Context, room string, p Policy, arrival string, inv Invite, now time.Time) (Place, error) {
	switch {
	case arrival == "" || len(arrival) > maxArrival:
		return Place{}, fmt.Errorf("join %s: %w: arrival id of %d bytes, want 1 to %d", room, ErrRejected, len(arrival), maxArrival)
	case inv.ID == "" || len(inv.ID) > maxArrival:
		return Place{}, fmt.Errorf("join %s: %w: invite id of %d bytes, want 1 to %d", room, ErrRejected, len(inv.ID), maxArrival)
	case inv.Uses < 1 || inv.Uses > MaxInviteUses:
		return Place{}, fmt.Errorf("join %s: %w: invite of %d uses, want 1 to %d", room, ErrRejected, inv.Uses, MaxInviteUses)
	}
	r, err := u.run(ctx, room, p, lineArgs{Op: "vip", Arrival: arrival, Invite: inv.ID, Uses: int64(inv.Uses),
		InviteUntil: unixMS(inv.Until.Add(inviteMargin))}, now)
	return r.place(), err
}

// Poll implements Store.
func (u *Upstash) Poll(ctx context.Context, room string, p Policy, t Ticket, now time.Time) (Place, error) {
	r, err := u.run(ctx, room, p, lineArgs{Op: "poll", Ticket: t.Number, Epoch: max(0, t.Epoch)}, now)
	return r.place(), err
}

// Renew implements Store.
func (u *Upstash) Renew(ctx context.Context, room string, p Policy, s SessionRef, now time.Time) (bool, Line, error) {
	r, err := u.run(ctx, room, p, sessionCall("renew", s), now)
	return r.outcome == 1, r.line, err
}

// End implements Store.
func (u *Upstash) End(ctx context.Context, room string, p Policy, s SessionRef, now time.Time) (Line, error) {
	r, err := u.run(ctx, room, p, sessionCall("end", s), now)
	return r.line, err
}

// Admit implements Store.
func (u *Upstash) Admit(ctx context.Context, room string, p Policy, n int64, now time.Time) (Line, error) {
	if n < 0 || n > MaxCallsPerOp {
		return Line{}, fmt.Errorf("admit %s: %w: %d visitors at once, want 0 to %d (admit more in chunks)", room, ErrRejected, n, MaxCallsPerOp)
	}
	r, err := u.run(ctx, room, p, lineArgs{Op: "admit", N: n}, now)
	return r.line, err
}

// Control implements Store.
func (u *Upstash) Control(ctx context.Context, room string, p Policy, c Control, now time.Time) (Line, error) {
	switch c {
	case Pause, QueueAll, Resume:
	default:
		return Line{}, fmt.Errorf("%w: unknown control %q", ErrRejected, c)
	}
	r, err := u.run(ctx, room, p, lineArgs{Op: string(c)}, now)
	return r.line, err
}

// maxActor bounds an audit entry's actor fields.
const maxActor = 128

// Operate applies an operator's action and appends it to the room's audit
// log (capped at AuditCap entries) in the same script call, so the log
// holds exactly the actions that took effect, with the state before and
// after each.
func (u *Upstash) Operate(ctx context.Context, room string, p Policy, a Action, now time.Time) (Line, error) {
	c := lineArgs{Op: a.Op}
	switch a.Op {
	case OpAdmit:
		if a.N < 1 || a.N > MaxCallsPerOp {
			return Line{}, fmt.Errorf("admit %s: %w: %d visitors at once, want 1 to %d", room, ErrRejected, a.N, MaxCallsPerOp)
		}
		c.N = a.N
	case OpLimits:
		if a.Set.Empty() {
			return Line{}, fmt.Errorf("limits %s: %w: nothing to set", room, ErrRejected)
		}
		if err := a.Set.check(); err != nil {
			return Line{}, fmt.Errorf("limits %s: %w: %v", room, ErrRejected, err)
		}
		c.SetRate, c.SetBurst, c.SetCapacity, c.SetMode = optional(a.Set.PerMinute), optional(a.Set.Burst), optional(a.Set.Capacity), string(a.Set.Mode)
	case OpClear, OpReset, string(Pause), string(Resume), string(QueueAll):
	default:
		return Line{}, fmt.Errorf("%w: unknown action %q", ErrRejected, a.Op)
	}
	if len(a.Actor.Via) > maxActor || len(a.Actor.Client) > maxActor {
		return Line{}, fmt.Errorf("%s %s: %w: actor longer than %d bytes", a.Op, room, ErrRejected, maxActor)
	}
	if err := CheckActionID(a.ID); err != nil {
		return Line{}, fmt.Errorf("%s %s: %w: %v", a.Op, room, ErrRejected, err)
	}
	// The script appends the states to this prefix: it has no JSON
	// encoder to rely on (see line.lua), so everything that needs
	// escaping is encoded here.
	prefix, err := json.Marshal(struct {
		T      int64  `json:"t"`
		Room   string `json:"room"`
		Via    string `json:"via"`
		Client string `json:"client"`
		Action string `json:"action"`
		N      int64  `json:"n,omitempty"`
		ID     string `json:"id,omitempty"`
	}{max(0, now.UnixMilli()), room, a.Actor.Via, a.Actor.Client, a.Op, a.N, a.ID})
	if err != nil {
		return Line{}, fmt.Errorf("%s %s: %w: %v", a.Op, room, ErrProtocol, err)
	}
	c.Audit = string(prefix[:len(prefix)-1])
	r, err := u.run(ctx, room, p, c, now)
	return r.line, err
}

// Limits on overrides, as the script checks them.
const (
	maxOverride     = 1e9
	maxOverrideRate = 1e9
)

// check refuses values the script would refuse, naming the field.
func (o Overrides) check() error {
	switch {
	case o.Capacity != nil && (*o.Capacity < 0 || *o.Capacity > maxOverride):
		return fmt.Errorf("max_active_users %d is not in 0..%d", *o.Capacity, int(maxOverride))
	case o.PerMinute != nil && !(*o.PerMinute >= 0 && *o.PerMinute <= maxOverrideRate):
		return fmt.Errorf("new_users_per_minute %g is not in 0..%g", *o.PerMinute, maxOverrideRate)
	case o.Burst != nil && (*o.Burst < 0 || *o.Burst > maxOverride):
		return fmt.Errorf("burst %d is not in 0..%d", *o.Burst, int(maxOverride))
	}
	switch o.Mode {
	case "", Fifo, Random, Passthrough, Reject:
		return nil
	}
	return fmt.Errorf("mode %q is not fifo, random, passthrough or reject", o.Mode)
}

// refusedKey marks a context whose store call carries a refused pass.
type refusedKey struct{}

// WithRefusal marks the store call made with ctx as answering a request
// whose pass was refused (tampered, expired, another client's), so the
// room's history counts the refusal without a call of its own.
func WithRefusal(ctx context.Context) context.Context {
	return context.WithValue(ctx, refusedKey{}, true)
}

func refused(ctx context.Context) bool {
	v, _ := ctx.Value(refusedKey{}).(bool)
	return v
}

// Stats implements Store.
func (u *Upstash) Stats(ctx context.Context, room string, p Policy, now time.Time) (Line, error) {
	r, err := u.run(ctx, room, p, lineArgs{Op: "stats"}, now)
	return r.line, err
}

// Keys are the Redis keys that hold room's state, in the order the script
// takes them: the line's hash, then the sorted sets of live sessions,
// called tickets, waiting tickets, arrivals, ended sessions, closed
// random-order windows and used invites, the hash of the history, the
// list of the audit log, and the sorted set of draw keys drawn. The room
// is a hash tag ({room}), so all of a room's keys live in one cluster slot.
func (u *Upstash) Keys(room string) []string {
	prefix := u.Prefix
	if prefix == "" {
		prefix = "wr:"
	}
	base := prefix + "{" + room + "}:"
	return []string{base + "line", base + "sessions", base + "called", base + "waiting",
		base + "arrivals", base + "ended", base + "windows", base + "invites", base + "history", base + "audit",
		base + "events"}
}

// sessionID names the live session ticket became in the line of epoch.
func sessionID(epoch, ticket int64) string {
	return strconv.FormatInt(epoch, 10) + "." + strconv.FormatInt(ticket, 10)
}

// parseSession reads a session id back; ok is false for anything
// sessionID could not have written. A priority session's ticket is below
// zero.
func parseSession(id string) (epoch, ticket int64, ok bool) {
	e, t, found := strings.Cut(id, ".")
	epoch, errE := strconv.ParseInt(e, 10, 64)
	ticket, errT := strconv.ParseInt(t, 10, 64)
	if !found || errE != nil || errT != nil || epoch < 1 || ticket == 0 || sessionID(epoch, ticket) != id {
		return 0, 0, false
	}
	return epoch, ticket, true
}

// sessionCall is the call about session s. A session id this store could
// not have given, or whose line is not s.Epoch, names ticket 0, which the
// script answers as a session that is gone.
func sessionCall(op string, s SessionRef) lineArgs {
	a := lineArgs{Op: op, UsableUntil: unixMS(s.UsableUntil), FailedAt: unixMS(s.FailedAt)}
	if epoch, ticket, ok := parseSession(s.ID); ok && epoch == s.Epoch {
		a.Ticket, a.Epoch = ticket, epoch
	}
	return a
}

// unixMS is t in ms since 1970 for the script: 0 for the zero time (or
// anything before 1970).
func unixMS(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return max(0, t.UnixMilli())
}

// flag is a flag argument as the script reads it.
func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

type result struct {
	line             Line
	ticket           int64
	outcome          int64
	callFrom, callTo int64
	groupsAhead      int64
}

func (r result) place() Place {
	pl := Place{Ticket: r.ticket, Outcome: Outcome(r.outcome), Line: r.line,
		CallFrom: r.callFrom, CallTo: r.callTo, GroupsAhead: r.groupsAhead}
	if pl.Outcome == Admitted {
		pl.Session = sessionID(r.line.Epoch, r.ticket)
	}
	return pl
}

// DrawKey is the key a room's event is drawn with: derived from RandomKey,
// so nobody without the store's secret can know it before it is revealed,
// and from the event's schedule as well as its name, so an event scheduled
// again under the same name is drawn with a new key. The script keeps the
// key an event was entered with (its start may move while its pre-queue
// is open) and answers it, so the commitment published never changes.
func (u *Upstash) DrawKey(room string, e Event) string {
	m := hmac.New(sha256.New, []byte(u.RandomKey))
	m.Write([]byte("draw\x00" + room + "\x00" + e.ID + "\x00" + strconv.FormatInt(unixMS(e.PrequeueFrom), 10) +
		"\x00" + strconv.FormatInt(unixMS(e.Starts), 10)))
	return hex.EncodeToString(m.Sum(nil))
}

// Commitment is what is published of a draw key before the draw: its
// SHA-256 in hex.
func Commitment(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

func (u *Upstash) run(ctx context.Context, room string, p Policy, a lineArgs, now time.Time) (result, error) {
	ctx, cancel := u.withTimeout(ctx)
	defer cancel()

	a.Now = unixMS(now)
	a.Rate, a.Burst, a.Capacity = p.PerMinute, int64(p.Burst), int64(p.Capacity)
	a.ClaimMS, a.SessionMS, a.QueueMS = p.ClaimWindow.Milliseconds(), p.SessionTTL.Milliseconds(), p.QueueTimeout.Milliseconds()
	a.WindowMS, a.CatchUpMS = p.RandomWindow.Milliseconds(), p.CatchUp.Milliseconds()
	a.HeartbeatMS, a.Share = p.Heartbeat.Milliseconds(), min(max(p.PriorityShare, 0), 1)
	a.RandomKey, a.Refused = u.RandomKey, refused(ctx)
	a.Shard, a.Shards = int64(p.Shard), int64(max(p.Shards, 1))
	// The latest failure anyone on the caller's side saw: its POP's, or
	// the renewal its holder's pass says failed.
	a.FailedAt = max(a.FailedAt, unixMS(p.FailedAt))
	if e := p.Event; e != nil {
		a.EventName, a.EventKey = e.ID, u.DrawKey(room, *e)
		a.EventPrequeue, a.EventStart, a.EventEnd = unixMS(e.PrequeueFrom), unixMS(e.Starts), unixMS(e.Ends)
	}
	a.Mode = string(p.Mode)
	if p.Mode == "" {
		a.Mode = string(Fifo)
		if p.RandomWindow > 0 {
			a.Mode = string(Random)
		}
	}
	keys := u.Keys(room)
	args := append([]string{"EVALSHA", lineScriptSHA, strconv.Itoa(len(keys))}, keys...)
	args, ok := a.argv(args)
	if !ok {
		return result{}, fmt.Errorf("%s %s: %w: no such operation", a.Op, room, ErrRejected)
	}
	raw, err := u.command(ctx, args)
	if errors.Is(err, errNoScript) {
		// Scripts are cached only until the database restarts or flushes
		// them; the source is always at hand to send again.
		args[0], args[1] = "EVAL", lineScript
		raw, err = u.command(ctx, args)
	}
	var r lineReply
	if err == nil {
		err = r.read(raw)
	}
	if err != nil {
		return result{}, fmt.Errorf("%s %s: %w", a.Op, room, err)
	}
	ev := EventState{Phase: EventPhase(r.EventState), First: r.PrequeueFirst, DrawFirst: r.DrawnFirst, DrawLast: r.DrawnLast}
	switch {
	case r.EventKey != "":
		// The key the event was entered with: its start may have moved.
		ev.Commitment = Commitment(r.EventKey)
		if ev.Phase == Drawn {
			ev.Key = r.EventKey
		}
	case p.Event != nil:
		// Not entered yet: the key it will be entered with.
		ev.Commitment = Commitment(a.EventKey)
	}
	return result{
		line: Line{Epoch: r.Epoch, Issued: r.Issued, Admitted: r.Admitted,
			Overrides: overrides(r.OverrideRate, r.OverrideBurst, r.OverrideCapacity, r.OverrideMode),
			Paused:    r.Flags&1 != 0, QueueAll: r.Flags&2 != 0,
			Active: r.Live, Called: r.Called, Recent: r.Recent, RecentSince: time.UnixMilli(r.Since),
			CalledNow: r.CalledNow, PriorityIssued: r.PriorityIssued, PriorityAdmitted: r.PriorityAdmitted, Event: ev},
		ticket:      r.Ticket,
		outcome:     r.Outcome,
		callFrom:    r.CallFrom,
		callTo:      r.CallTo,
		groupsAhead: r.GroupsAhead,
	}, nil
}

// errNoScript marks the database's NOSCRIPT answer: it does not hold the
// script (yet, or any more), and the source must be sent.
var errNoScript = errors.New("NOSCRIPT")

// decode reads a command's result into v.
func decode(raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%w: result %.80q: %v", ErrProtocol, raw, err)
	}
	return nil
}

// History reads the room's history from from to to (at most a day back),
// oldest first: one Minute per minute in which the store was called.
func (u *Upstash) History(ctx context.Context, room string, from, to time.Time) ([]Minute, error) {
	first, last := from.UnixMilli()/60000, to.UnixMilli()/60000
	first = max(first, last-HistoryMinutes+1)
	if last < first || last < 0 {
		return nil, nil
	}
	keys := u.Keys(room)
	cmd := []string{"HMGET", keys[8]}
	for m := first; m <= last; m++ {
		cmd = append(cmd, strconv.FormatInt(m%HistoryMinutes, 10))
	}
	ctx, cancel := u.withTimeout(ctx)
	defer cancel()
	raw, err := u.command(ctx, cmd)
	var fields []*string
	if err == nil {
		err = decode(raw, &fields)
	}
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", room, err)
	}
	var out []Minute
	for _, f := range fields {
		if f == nil {
			continue
		}
		m, ok := parseMinute(*f)
		// A slot holds its minute of the day before until overwritten.
		if ok && m.Start.UnixMilli()/60000 >= first && m.Start.UnixMilli()/60000 <= last {
			out = append(out, m)
		}
	}
	return out, nil
}

// parseMinute reads a history record (see line.lua).
func parseMinute(rec string) (Minute, bool) {
	var v [13]int64
	parts := strings.Split(rec, ",")
	if len(parts) != len(v) {
		return Minute{}, false
	}
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return Minute{}, false
		}
		v[i] = n
	}
	return Minute{Start: time.UnixMilli(v[0] * 60000).UTC(), Epoch: v[1], Issued: v[2], Admitted: v[3],
		Joins: v[4], Admissions: v[5], Active: v[6], Waiting: v[7], Refusals: v[8],
		IssuedMoved:   [2]time.Duration{time.Duration(v[9]) * time.Millisecond, time.Duration(v[10]) * time.Millisecond},
		AdmittedMoved: [2]time.Duration{time.Duration(v[11]) * time.Millisecond, time.Duration(v[12]) * time.Millisecond}}, true
}

// AuditRead asks for a page of one room's audit log: up to Limit
// entries, newest first, after the Offset newest.
type AuditRead struct {
	Room          string
	Offset, Limit int
}

// Audit reads pages of several rooms' audit logs in one request (a
// pipeline of LRANGEs: one backend request however many rooms), a page
// per read in the same order; a read past the log's end, or past
// AuditCap, is an empty page. The reads may ask for at most MaxAuditPage
// entries in all, which keeps the answer within MaxAnswer.
func (u *Upstash) Audit(ctx context.Context, reads []AuditRead) ([][]AuditEntry, error) {
	pages := make([][]AuditEntry, len(reads))
	var cmds [][]string
	var asked []int // the read each command answers
	total := 0
	for i, r := range reads {
		if r.Offset < 0 || r.Limit < 1 || r.Offset >= AuditCap {
			continue
		}
		n := min(r.Limit, AuditCap-r.Offset)
		total += n
		cmds = append(cmds, []string{"LRANGE", u.Keys(r.Room)[9], strconv.Itoa(r.Offset), strconv.Itoa(r.Offset + n - 1)})
		asked = append(asked, i)
	}
	switch {
	case total > MaxAuditPage:
		return nil, fmt.Errorf("audit: %w: %d entries asked for at once, at most %d", ErrRejected, total, MaxAuditPage)
	case len(cmds) == 0:
		return pages, nil
	}
	ctx, cancel := u.withTimeout(ctx)
	defer cancel()
	results, err := u.pipeline(ctx, cmds)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	for j, raw := range results {
		room := reads[asked[j]].Room
		var lines []string
		if err := decode(raw, &lines); err != nil {
			return nil, fmt.Errorf("audit %s: %w", room, err)
		}
		page := make([]AuditEntry, 0, len(lines))
		for _, l := range lines {
			var e struct {
				AuditEntry
				T int64 `json:"t"`
			}
			if err := json.Unmarshal([]byte(l), &e); err != nil {
				return nil, fmt.Errorf("audit %s: %w: entry %.80q: %v", room, ErrProtocol, l, err)
			}
			e.AuditEntry.Time = time.UnixMilli(e.T).UTC()
			page = append(page, e.AuditEntry)
		}
		pages[asked[j]] = page
	}
	return pages, nil
}

// withTimeout bounds one store call.
func (u *Upstash) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	timeout := u.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return context.WithTimeout(ctx, timeout)
}

// optional is an override's argument: "" leaves it as it is.
func optional[T int | float64](v *T) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(float64(*v), 'f', -1, 64)
}

// modeCodes are the script's codes for an overridden mode (0: none).
var modeCodes = [...]Mode{1: Fifo, 2: Random, 3: Passthrough, 4: Reject}

// overrides reads the script's overrides: the rate in thousandths, the
// burst and the capacity, -1 for "not overridden", and the mode's code.
func overrides(rate, burst, capacity, mode int64) Overrides {
	var o Overrides
	if rate >= 0 {
		v := float64(rate) / 1000
		o.PerMinute = &v
	}
	if burst >= 0 {
		v := int(burst)
		o.Burst = &v
	}
	if capacity >= 0 {
		v := int(capacity)
		o.Capacity = &v
	}
	if mode > 0 && mode < int64(len(modeCodes)) {
		o.Mode = modeCodes[mode]
	}
	return o
}

// answer is Upstash's reply to one command. The script returns integers
// and hex strings only, so no response encoding is requested.
type answer struct {
	Result json.RawMessage `json:"result"`
	Error  string          `json:"error"`
}

func (u *Upstash) command(ctx context.Context, cmd []string) (json.RawMessage, error) {
	var a answer
	if err := u.post(ctx, "", cmd, &a); err != nil {
		return nil, err
	}
	if a.Error != "" {
		return nil, rejected(200, a.Error)
	}
	return a.Result, nil
}

// pipeline sends several commands in one request (Upstash's /pipeline:
// not atomic, but one round trip), and returns their results in order.
func (u *Upstash) pipeline(ctx context.Context, cmds [][]string) ([]json.RawMessage, error) {
	var answers []answer
	if err := u.post(ctx, "pipeline", cmds, &answers); err != nil {
		return nil, err
	}
	if len(answers) != len(cmds) {
		return nil, fmt.Errorf("%w: %d answers to %d commands", ErrProtocol, len(answers), len(cmds))
	}
	results := make([]json.RawMessage, len(answers))
	for i, a := range answers {
		if a.Error != "" {
			return nil, rejected(200, a.Error)
		}
		results[i] = a.Result
	}
	return results, nil
}

// post sends body, a command or (path "pipeline") a list of them, to the
// REST API, and decodes its answer into v.
func (u *Upstash) post(ctx context.Context, path string, body any, v any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("%w: encode command: %v", ErrProtocol, err)
	}
	resp, err := u.Transport.RoundTrip(ctx, Request{
		URL: strings.TrimRight(u.URL, "/") + "/" + path,
		Header: map[string]string{
			"Authorization": "Bearer " + u.Token,
			"Content-Type":  "application/json",
		},
		Body: b,
	})
	if err != nil {
		// Both wrapped: callers may tell why the transport failed.
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if len(resp.Body) > MaxAnswer {
		return fmt.Errorf("%w: answer of %d bytes", ErrProtocol, len(resp.Body))
	}
	// A refusal's body is one answer with its error, whatever was sent.
	var refusal answer
	if resp.Status != 200 {
		json.Unmarshal(resp.Body, &refusal)
	}
	switch {
	case resp.Status == 401 || resp.Status == 403:
		return fmt.Errorf("%w: HTTP %d %s", ErrUnauthorized, resp.Status, refusal.Error)
	case resp.Status >= 500 || resp.Status == 429:
		return fmt.Errorf("%w: HTTP %d %s", ErrUnavailable, resp.Status, refusal.Error)
	case resp.Status == 200:
		if err := json.NewDecoder(bytes.NewReader(resp.Body)).Decode(v); err != nil {
			return fmt.Errorf("%w: HTTP %d: %v", ErrProtocol, resp.Status, err)
		}
		return nil
	case refusal.Error != "":
		return rejected(resp.Status, refusal.Error)
	}
	return fmt.Errorf("%w: HTTP %d without an error message", ErrProtocol, resp.Status)
}

// rejected is the error for a command the database refused with msg.
func rejected(status int, msg string) error {
	if strings.HasPrefix(msg, "NOSCRIPT") {
		return fmt.Errorf("%w: %w", ErrRejected, errNoScript)
	}
	return fmt.Errorf("%w: HTTP %d: %s", ErrRejected, status, msg)
}

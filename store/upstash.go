package store

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
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

// scriptSHA is the name EVALSHA knows line.lua by: its SHA-1 in hex.
//
// It is computed when called, never in a package-level initializer: TinyGo
// evaluates initializers at compile time, and 0.33 turned this very one
// into 40 NUL bytes, so that every operation paid a NOSCRIPT answer and a
// second call. The rule for the edge module is in the doc of package main.
func scriptSHA() string {
	sum := sha1.Sum([]byte(lineScript))
	return hex.EncodeToString(sum[:])
}

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

// maxAnswer bounds the answer read from Upstash; the script's reply is a few
// numbers, so anything longer is a fault, not data.
const maxAnswer = 64 << 10

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

// Join implements Store.
func (u *Upstash) Join(ctx context.Context, room string, p Policy, arrival string, now time.Time) (Place, error) {
	if arrival == "" || len(arrival) > maxArrival {
		return Place{}, fmt.Errorf("join %s: %w: arrival id of %d bytes, want 1 to %d", room, ErrRejected, len(arrival), maxArrival)
	}
	r, err := u.run(ctx, room, p, call{op: "join", arrival: arrival}, now)
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
	r, err := u.run(ctx, room, p, call{op: "vip", arrival: arrival, invite: inv.ID, uses: int64(inv.Uses),
		until: max(0, inv.Until.Add(inviteMargin).UnixMilli())}, now)
	return r.place(), err
}

// Poll implements Store.
func (u *Upstash) Poll(ctx context.Context, room string, p Policy, t Ticket, now time.Time) (Place, error) {
	r, err := u.run(ctx, room, p, call{op: "poll", arg: t.Number, epoch: max(0, t.Epoch)}, now)
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
	r, err := u.run(ctx, room, p, call{op: "admit", arg: n}, now)
	return r.line, err
}

// Control implements Store.
func (u *Upstash) Control(ctx context.Context, room string, p Policy, c Control, now time.Time) (Line, error) {
	switch c {
	case Pause, QueueAll, Resume:
	default:
		return Line{}, fmt.Errorf("%w: unknown control %q", ErrRejected, c)
	}
	r, err := u.run(ctx, room, p, call{op: string(c)}, now)
	return r.line, err
}

// Stats implements Store.
func (u *Upstash) Stats(ctx context.Context, room string, p Policy, now time.Time) (Line, error) {
	r, err := u.run(ctx, room, p, call{op: "stats"}, now)
	return r.line, err
}

// Keys are the Redis keys that hold room's state, in the order the script
// takes them: the line's hash, then the sorted sets of live sessions,
// called tickets, waiting tickets, arrivals, ended sessions, closed
// random-order windows and used invites. The room is a hash tag ({room}),
// so all of a room's keys live in one cluster slot.
func (u *Upstash) Keys(room string) []string {
	prefix := u.Prefix
	if prefix == "" {
		prefix = "wr:"
	}
	base := prefix + "{" + room + "}:"
	return []string{base + "line", base + "sessions", base + "called", base + "waiting",
		base + "arrivals", base + "ended", base + "windows", base + "invites"}
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

// call is what one operation sends besides the room and its policy.
type call struct {
	op      string
	arg     int64 // a ticket, or n for admit
	arrival string
	epoch   int64 // of the ticket or session
	until   int64 // ms: when an ended session's pass stops admitting, or an invite's count may go
	invite  string
	uses    int64
}

// sessionCall is the call about session s. A session id this store could
// not have given, or whose line is not s.Epoch, names ticket 0, which the
// script answers as a session that is gone.
func sessionCall(op string, s SessionRef) call {
	c := call{op: op, until: max(0, s.UsableUntil.UnixMilli())}
	if epoch, ticket, ok := parseSession(s.ID); ok && epoch == s.Epoch {
		c.arg, c.epoch = ticket, epoch
	}
	return c
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

// replyLen is the number of values the script returns.
const replyLen = 20

// DrawKey is the key a room's event is drawn with: derived from RandomKey,
// so nobody without the store's secret can know it before it is revealed,
// and fixed by the event's ID, so its commitment never changes.
func (u *Upstash) DrawKey(room, event string) string {
	m := hmac.New(sha256.New, []byte(u.RandomKey))
	m.Write([]byte("draw\x00" + room + "\x00" + event))
	return hex.EncodeToString(m.Sum(nil))
}

// Commitment is what is published of a draw key before the draw: its
// SHA-256 in hex.
func Commitment(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

func (u *Upstash) run(ctx context.Context, room string, p Policy, c call, now time.Time) (result, error) {
	timeout := u.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	keys := u.Keys(room)
	args := append([]string{strconv.Itoa(len(keys))}, keys...)
	args = append(args, c.op,
		strconv.FormatInt(max(0, now.UnixMilli()), 10),
		strconv.FormatFloat(p.PerMinute, 'f', -1, 64),
		strconv.Itoa(p.Burst),
		strconv.Itoa(p.Capacity),
		ms(p.ClaimWindow), ms(p.SessionTTL), ms(p.QueueTimeout),
		strconv.FormatInt(c.arg, 10),
		c.arrival,
		strconv.FormatInt(c.epoch, 10),
		ms(p.RandomWindow),
		u.RandomKey,
		ms(p.CatchUp),
		strconv.FormatInt(c.until, 10),
		ms(p.Heartbeat),
		strconv.FormatFloat(min(max(p.PriorityShare, 0), 1), 'f', -1, 64),
		c.invite, strconv.FormatInt(c.uses, 10), strconv.FormatInt(c.until, 10))
	var key string
	if e := p.Event; e != nil {
		key = u.DrawKey(room, e.ID)
		args = append(args, e.ID, strconv.FormatInt(max(0, e.PrequeueFrom.UnixMilli()), 10),
			strconv.FormatInt(max(0, e.Starts.UnixMilli()), 10), strconv.FormatInt(max(0, e.Ends.UnixMilli()), 10), key)
	} else {
		args = append(args, "", "0", "0", "0", "")
	}
	reply, err := u.command(ctx, append([]string{"EVALSHA", scriptSHA()}, args...))
	if errors.Is(err, errNoScript) {
		// Scripts are cached only until the database restarts or flushes
		// them; the source is always at hand to send again.
		reply, err = u.command(ctx, append([]string{"EVAL", lineScript}, args...))
	}
	if err != nil {
		return result{}, fmt.Errorf("%s %s: %w", c.op, room, err)
	}
	if len(reply) != replyLen {
		return result{}, fmt.Errorf("%s %s: %w: script returned %d values, want %d", c.op, room, ErrProtocol, len(reply), replyLen)
	}
	ev := EventState{Phase: EventPhase(reply[16]), First: reply[17], DrawFirst: reply[18], DrawLast: reply[19]}
	if p.Event != nil {
		ev.Commitment = Commitment(key)
	}
	if ev.Phase == Drawn {
		ev.Key = key
	}
	return result{
		line: Line{Epoch: reply[0], Issued: reply[1], Admitted: reply[2],
			Paused: reply[3]&1 != 0, QueueAll: reply[3]&2 != 0,
			Active: reply[6], Called: reply[7], Recent: reply[8], RecentSince: time.UnixMilli(reply[9]),
			CalledNow: reply[10], PriorityIssued: reply[14], PriorityAdmitted: reply[15], Event: ev},
		ticket:      reply[4],
		outcome:     reply[5],
		callFrom:    reply[11],
		callTo:      reply[12],
		groupsAhead: reply[13],
	}, nil
}

// errNoScript marks the database's NOSCRIPT answer: it does not hold the
// script (yet, or any more), and the source must be sent.
var errNoScript = errors.New("NOSCRIPT")

// answer is Upstash's reply to one command. The script returns integers
// only, so no response encoding is requested.
type answer struct {
	Result []int64 `json:"result"`
	Error  string  `json:"error"`
}

func (u *Upstash) command(ctx context.Context, cmd []string) ([]int64, error) {
	body, err := json.Marshal(cmd)
	if err != nil {
		return nil, fmt.Errorf("%w: encode command: %v", ErrProtocol, err)
	}
	resp, err := u.Transport.RoundTrip(ctx, Request{
		URL: strings.TrimRight(u.URL, "/") + "/",
		Header: map[string]string{
			"Authorization": "Bearer " + u.Token,
			"Content-Type":  "application/json",
		},
		Body: body,
	})
	if err != nil {
		// Both wrapped: callers may tell why the transport failed.
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if len(resp.Body) > maxAnswer {
		return nil, fmt.Errorf("%w: answer of %d bytes", ErrProtocol, len(resp.Body))
	}
	var a answer
	decodeErr := json.NewDecoder(bytes.NewReader(resp.Body)).Decode(&a)
	switch {
	case resp.Status == 401 || resp.Status == 403:
		return nil, fmt.Errorf("%w: HTTP %d %s", ErrUnauthorized, resp.Status, a.Error)
	case resp.Status >= 500 || resp.Status == 429:
		return nil, fmt.Errorf("%w: HTTP %d %s", ErrUnavailable, resp.Status, a.Error)
	case decodeErr != nil:
		return nil, fmt.Errorf("%w: HTTP %d: %v", ErrProtocol, resp.Status, decodeErr)
	case strings.HasPrefix(a.Error, "NOSCRIPT"):
		return nil, fmt.Errorf("%w: %w", ErrRejected, errNoScript)
	case a.Error != "":
		return nil, fmt.Errorf("%w: HTTP %d: %s", ErrRejected, resp.Status, a.Error)
	case resp.Status != 200:
		return nil, fmt.Errorf("%w: HTTP %d without an error message", ErrProtocol, resp.Status)
	}
	return a.Result, nil
}

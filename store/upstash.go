package store

import (
	"bytes"
	"context"
	"crypto/sha1"
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

// Join implements Store.
func (u *Upstash) Join(ctx context.Context, room string, p Policy, sessionID string, now time.Time) (Place, error) {
	r, err := u.run(ctx, "join", room, p, 0, sessionID, 0, now)
	return r.place(), err
}

// Poll implements Store.
func (u *Upstash) Poll(ctx context.Context, room string, p Policy, t Ticket, sessionID string, now time.Time) (Place, error) {
	r, err := u.run(ctx, "poll", room, p, t.Number, sessionID, t.Epoch, now)
	return r.place(), err
}

// Renew implements Store.
func (u *Upstash) Renew(ctx context.Context, room string, p Policy, sessionID string, now time.Time) (bool, Line, error) {
	r, err := u.run(ctx, "renew", room, p, 0, sessionID, 0, now)
	return r.outcome == 1, r.line, err
}

// End implements Store.
func (u *Upstash) End(ctx context.Context, room string, p Policy, sessionID string, now time.Time) (Line, error) {
	r, err := u.run(ctx, "end", room, p, 0, sessionID, 0, now)
	return r.line, err
}

// Admit implements Store.
func (u *Upstash) Admit(ctx context.Context, room string, p Policy, n int64, now time.Time) (Line, error) {
	r, err := u.run(ctx, "admit", room, p, n, "", 0, now)
	return r.line, err
}

// Control implements Store.
func (u *Upstash) Control(ctx context.Context, room string, p Policy, c Control, now time.Time) (Line, error) {
	switch c {
	case Pause, QueueAll, Resume:
	default:
		return Line{}, fmt.Errorf("%w: unknown control %q", ErrRejected, c)
	}
	r, err := u.run(ctx, string(c), room, p, 0, "", 0, now)
	return r.line, err
}

// Stats implements Store.
func (u *Upstash) Stats(ctx context.Context, room string, p Policy, now time.Time) (Line, error) {
	r, err := u.run(ctx, "stats", room, p, 0, "", 0, now)
	return r.line, err
}

// Keys are the Redis keys that hold room's state: the line's hash, then
// the sorted sets of live sessions, called tickets and waiting tickets.
func (u *Upstash) Keys(room string) []string {
	prefix := u.Prefix
	if prefix == "" {
		prefix = "wr:"
	}
	base := prefix + room + ":"
	return []string{base + "line", base + "sessions", base + "called", base + "waiting"}
}

type result struct {
	line    Line
	ticket  int64
	outcome int64
}

func (r result) place() Place {
	return Place{Ticket: r.ticket, Outcome: Outcome(r.outcome), Line: r.line}
}

// replyLen is the number of values the script returns.
const replyLen = 10

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

func (u *Upstash) run(ctx context.Context, op, room string, p Policy, arg int64, sessionID string, epoch int64, now time.Time) (result, error) {
	timeout := u.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	keys := u.Keys(room)
	args := append([]string{strconv.Itoa(len(keys))}, keys...)
	args = append(args, op,
		strconv.FormatInt(now.UnixMilli(), 10),
		strconv.FormatFloat(p.PerMinute, 'f', -1, 64),
		strconv.Itoa(p.Burst),
		strconv.Itoa(p.Capacity),
		ms(p.ClaimWindow), ms(p.SessionTTL), ms(p.QueueTimeout),
		strconv.FormatInt(arg, 10),
		sessionID,
		strconv.FormatInt(epoch, 10),
		ms(p.RandomWindow),
		u.RandomKey)
	reply, err := u.command(ctx, append([]string{"EVALSHA", scriptSHA()}, args...))
	if errors.Is(err, errNoScript) {
		// Scripts are cached only until the database restarts or flushes
		// them; the source is always at hand to send again.
		reply, err = u.command(ctx, append([]string{"EVAL", lineScript}, args...))
	}
	if err != nil {
		return result{}, fmt.Errorf("%s %s: %w", op, room, err)
	}
	if len(reply) != replyLen {
		return result{}, fmt.Errorf("%s %s: %w: script returned %d values, want %d", op, room, ErrProtocol, len(reply), replyLen)
	}
	return result{
		line: Line{Epoch: reply[0], Issued: reply[1], Admitted: reply[2],
			Paused: reply[3]&1 != 0, QueueAll: reply[3]&2 != 0,
			Active: reply[6], Called: reply[7], Recent: reply[8], RecentSince: time.UnixMilli(reply[9])},
		ticket:  reply[4],
		outcome: reply[5],
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

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

var lineSHA = func() string {
	sum := sha1.Sum([]byte(lineScript))
	return hex.EncodeToString(sum[:])
}()

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
}

// Join implements Store.
func (u *Upstash) Join(ctx context.Context, room string, p Policy, now time.Time) (int64, Line, error) {
	r, err := u.run(ctx, "join", room, p, 0, now)
	return r.ticket, r.line, err
}

// Poll implements Store.
func (u *Upstash) Poll(ctx context.Context, room string, p Policy, now time.Time) (Line, error) {
	r, err := u.run(ctx, "poll", room, p, 0, now)
	return r.line, err
}

// Admit implements Store.
func (u *Upstash) Admit(ctx context.Context, room string, n int64, p Policy, now time.Time) (Line, error) {
	r, err := u.run(ctx, "admit", room, p, n, now)
	return r.line, err
}

// SetPaused implements Store.
func (u *Upstash) SetPaused(ctx context.Context, room string, paused bool, p Policy, now time.Time) (Line, error) {
	op := "resume"
	if paused {
		op = "pause"
	}
	r, err := u.run(ctx, op, room, p, 0, now)
	return r.line, err
}

// Key is the Redis key that holds room's line.
func (u *Upstash) Key(room string) string {
	prefix := u.Prefix
	if prefix == "" {
		prefix = "wr:"
	}
	return prefix + room + ":line"
}

type result struct {
	line   Line
	ticket int64
}

func (u *Upstash) run(ctx context.Context, op, room string, p Policy, n int64, now time.Time) (result, error) {
	timeout := u.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	args := []string{"1", u.Key(room), op,
		strconv.FormatInt(now.UnixMilli(), 10),
		strconv.FormatFloat(p.PerMinute, 'f', -1, 64),
		strconv.Itoa(p.Burst),
		strconv.FormatInt(n, 10)}
	reply, err := u.command(ctx, append([]string{"EVALSHA", lineSHA}, args...))
	if errors.Is(err, errNoScript) {
		// Scripts are cached only until the database restarts or flushes
		// them; the source is always at hand to send again.
		reply, err = u.command(ctx, append([]string{"EVAL", lineScript}, args...))
	}
	if err != nil {
		return result{}, fmt.Errorf("%s %s: %w", op, room, err)
	}
	if len(reply) != 5 {
		return result{}, fmt.Errorf("%s %s: %w: script returned %d values, want 5", op, room, ErrProtocol, len(reply))
	}
	return result{
		line:   Line{Epoch: reply[0], Issued: reply[1], Admitted: reply[2], Paused: reply[3] == 1},
		ticket: reply[4],
	}, nil
}

var errNoScript = fmt.Errorf("%w: NOSCRIPT", ErrRejected)

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
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
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
		return nil, errNoScript
	case a.Error != "":
		return nil, fmt.Errorf("%w: HTTP %d: %s", ErrRejected, resp.Status, a.Error)
	case resp.Status != 200:
		return nil, fmt.Errorf("%w: HTTP %d without an error message", ErrProtocol, resp.Status)
	}
	return a.Result, nil
}

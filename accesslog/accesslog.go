// Package accesslog writes the waiting room's structured log lines: one
// JSON object per request, and one per operator action, for a Fastly log
// endpoint and the dashboards behind it (docs/operations.md, "Logs").
//
// A line never holds a cookie, a pass, an Authorization value or a query
// string, and holds the client's address only as a keyed hash unless the
// operator opts in. Every text field is cut to a fixed length, so a line
// is bounded (MaxLine) whatever the request carried.
package accesslog

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"time"
	"unicode/utf8"

	"github.com/edgequeue/waitingroom/store"
)

// Line types: the "type" field of every line.
const (
	TypeRequest = "request"
	TypeAction  = "action"
)

// TimeFormat is every line's "time": RFC 3339 in UTC, to the millisecond.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// The longest each text field may be, in bytes; longer values are cut at
// a character boundary.
const (
	maxMethod   = 16
	maxPath     = 256
	maxRoom     = 64
	maxDecision = 32
	maxWhy      = 160
	maxPOP      = 16
	maxCountry  = 8
	maxClientIP = 45 // the longest textual IPv6 address
	maxVia      = 16
	maxAction   = 32
	maxClient   = 2 * clientHashBytes
	maxMode     = 16
)

// MaxLine bounds a line's length in bytes, of either type: the text
// fields' limits, each character escaped at its longest (\u00XX), and the
// numbers and the names.
const MaxLine = 6*(maxMethod+maxPath+maxRoom+maxDecision+maxWhy+maxPOP+maxCountry+maxClientIP) + 512

// clientHashBytes is how much of the HMAC the "client" field keeps: 64
// bits tell a day's clients apart, and are no use to reverse.
const clientHashBytes = 8

// Request is what the edge learnt of one request.
type Request struct {
	// Time is when the request arrived.
	Time time.Time
	// Method and Path are the request's (the path without its query,
	// which may hold an invite).
	Method, Path string
	// Room is the room that held the request, or "".
	Room string
	// Decision is where the request went: the rules' destination, and for
	// the line the gate's action ("line/wait", "bypass", "origin", ...).
	Decision string
	// Why is the gate's reason, or the bypass rule that let it through.
	Why string
	// FailOpen is set when the store could not be asked and the room's
	// policy let the visitor in.
	FailOpen bool
	// Ticket is the visitor's ticket (0: none); Ahead, the tickets before
	// it, is logged with it.
	Ticket, Ahead int64
	// Waited is how long the visitor has been in line (waiting, or
	// admitted from it), from the arrival their ticket came from; 0 when
	// the request is not a visitor's in line.
	Waited time.Duration
	// StoreCalls is how many store round trips the request made, and
	// StoreTime their total latency.
	StoreCalls int
	StoreTime  time.Duration
	// Status is the response's status code.
	Status int
	// POP is the Fastly POP that served the request; Country the client's
	// country code; "" when unknown.
	POP, Country string
	// Client is the client's address. It is logged as a hash keyed with
	// ClientKey, or as it is when ShowClientIP is set (the operator's
	// log_client_ip); with neither, not at all.
	Client       string
	ClientKey    []byte
	ShowClientIP bool
}

// requestLine is a Request as JSON.
type requestLine struct {
	Type       string  `json:"type"`
	Time       string  `json:"time"`
	Method     string  `json:"method"`
	Path       string  `json:"path"`
	Room       string  `json:"room,omitempty"`
	Decision   string  `json:"decision"`
	Why        string  `json:"why,omitempty"`
	FailOpen   bool    `json:"fail_open,omitempty"`
	Ticket     int64   `json:"ticket,omitempty"`
	Ahead      *int64  `json:"ahead,omitempty"`
	WaitedS    float64 `json:"waited_s,omitempty"`
	StoreCalls int     `json:"store_calls"`
	StoreMS    float64 `json:"store_ms"`
	Status     int     `json:"status"`
	POP        string  `json:"pop,omitempty"`
	Country    string  `json:"country,omitempty"`
	Client     string  `json:"client,omitempty"`
	ClientIP   string  `json:"client_ip,omitempty"`
}

// Line renders r as one JSON line (without a newline: the endpoint ends
// each entry).
func (r *Request) Line() []byte {
	l := requestLine{
		Type: TypeRequest, Time: Timestamp(r.Time),
		Method: clip(r.Method, maxMethod), Path: clip(r.Path, maxPath),
		Room: clip(r.Room, maxRoom), Decision: clip(r.Decision, maxDecision), Why: clip(r.Why, maxWhy),
		FailOpen: r.FailOpen, Ticket: r.Ticket, WaitedS: math.Round(r.Waited.Seconds()*10) / 10,
		StoreCalls: r.StoreCalls, StoreMS: Millis(r.StoreTime), Status: r.Status,
		POP: clip(r.POP, maxPOP), Country: clip(r.Country, maxCountry),
	}
	if r.Ticket != 0 {
		ahead := r.Ahead
		l.Ahead = &ahead
	}
	switch {
	case r.Client == "":
	case r.ShowClientIP:
		l.ClientIP = clip(r.Client, maxClientIP)
	case len(r.ClientKey) > 0:
		l.Client = ClientHash(r.ClientKey, r.Client)
	}
	return marshal(l)
}

// actionLine is an operator's action as JSON: the audit entry's fields.
type actionLine struct {
	Type   string            `json:"type"`
	Time   string            `json:"time"`
	Room   string            `json:"room"`
	Via    string            `json:"via"`
	Client string            `json:"client,omitempty"`
	Action string            `json:"action"`
	N      int64             `json:"n,omitempty"`
	Before *store.AuditState `json:"before,omitempty"`
	After  store.AuditState  `json:"after"`
}

// Action renders an operator's action, as its audit entry records it, as
// one JSON line. The room's state before is left out when the entry does
// not have it.
func Action(e store.AuditEntry) []byte {
	l := actionLine{Type: TypeAction, Time: Timestamp(e.Time), Room: clip(e.Room, maxRoom), Via: clip(e.Via, maxVia),
		Client: clip(e.Client, maxClient), Action: clip(e.Action, maxAction), N: e.N, After: clipState(e.After)}
	if e.Before != (store.AuditState{}) {
		before := clipState(e.Before)
		l.Before = &before
	}
	return marshal(l)
}

// clipState bounds the one text field of a room's state, and leaves out a
// rate JSON cannot hold (TinyGo's encoding/json panics on NaN).
func clipState(s store.AuditState) store.AuditState {
	s.Mode = store.Mode(clip(string(s.Mode), maxMode))
	if r := s.PerMinute; r != nil && (math.IsNaN(*r) || math.IsInf(*r, 0)) {
		s.PerMinute = nil
	}
	return s
}

// ClientHash names a client address without giving it away: the first 64
// bits of HMAC-SHA256 under key (the current signing key), in hex. The
// same address gets the same name until the signing key changes, so a
// dashboard can count distinct clients and follow one through the line.
func ClientHash(key []byte, client string) string {
	m := hmac.New(sha256.New, key)
	// The label keeps these hashes apart from every other HMAC made with
	// the signing key.
	m.Write([]byte("waiting-room client\x00"))
	m.Write([]byte(client))
	return hex.EncodeToString(m.Sum(nil)[:clientHashBytes])
}

// Timestamp formats t as every line's "time".
func Timestamp(t time.Time) string { return t.UTC().Format(TimeFormat) }

// Millis is d in milliseconds, to the microsecond.
func Millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// marshal encodes a line. A line holds strings, integers, booleans and
// finite numbers only, which always encode; were one not to, the line
// would say so rather than vanish (under Go: TinyGo's encoding/json
// panics instead, so no value may rely on this).
func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(`{"type":"error","why":"the line could not be encoded"}`)
	}
	return b
}

// clip cuts s to at most n bytes, at a character boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

package queue

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/challenge"
	"github.com/edgequeue/waitingroom/queue/internal/passjwt"
)

// ErrBadPass wraps every reason a pass is refused. A visitor whose pass
// fails simply joins the back of the line; the errors exist for logs and
// tests.
var ErrBadPass = errors.New("pass refused")

// passError is a reason to refuse a pass known in advance. A small
// integer, not a string: both compilers box it into an error without
// allocating, so refusing a forged cookie allocates nothing.
type passError uint8

const (
	errMalformed passError = iota
	errUnknownKey
	errBadSignature
	errNoKeys
	// errBoundElsewhere refuses a pass issued to another client (see
	// Room.BindSession).
	errBoundElsewhere
)

func (e passError) Error() string {
	why := "no signing keys"
	switch e {
	case errMalformed:
		why = passjwt.ErrMalformed.Error()
	case errUnknownKey:
		why = passjwt.ErrUnknownKey.Error()
	case errBadSignature:
		why = passjwt.ErrBadSignature.Error()
	case errBoundElsewhere:
		why = "bound to another client"
	}
	return ErrBadPass.Error() + ": " + why
}

// Unwrap makes errors.Is(err, ErrBadPass) hold.
func (e passError) Unwrap() error { return ErrBadPass }

// refusal is passjwt.SignedBy's error as a pass error, still without
// allocating.
func refusal(err error) passError {
	switch err {
	case passjwt.ErrUnknownKey:
		return errUnknownKey
	case passjwt.ErrBadSignature:
		return errBadSignature
	}
	return errMalformed
}

// PassKind says what a pass entitles its holder to.
type PassKind string

// The kinds of pass.
const (
	// Arrival is what a visitor without a pass gets, with no store call:
	// it proves they came back with the cookie, and only then do they
	// join the line. A client that never keeps cookies (a flood of
	// scripted requests) never takes a place.
	Arrival PassKind = "arrival"
	// Ticket holds a place in the line.
	Ticket PassKind = "ticket"
	// Session admits its holder to the origin.
	Session PassKind = "session"
	// InviteKind is an invite code (invite.go): a link, not a cookie.
	// Verify refuses it as a pass, and ParseInvite refuses every other
	// kind, so neither can stand for the other.
	InviteKind PassKind = "invite"
	// DecoyKind holds its holder in the room's decoy line (decoy.go): a
	// place that looks real, held by no store, and the way out, a
	// challenge derived from the pass as a ticket's is. Only the server
	// knows the kind: the token is a ticket's, with a ticket's claims,
	// signed under the key's decoy key (decoyKey) rather than the key.
	DecoyKind PassKind = "decoy"
)

// Pass is what a visitor's cookie proves, once its signature is checked.
type Pass struct {
	Kind PassKind
	Room string
	// Number is the ticket number (tickets; a decoy's is made up).
	Number int64
	// Epoch is the line's identity when the pass was issued; a line that was
	// rebuilt (its store state lost or reset) has a new epoch, and older
	// tickets no longer hold a place in it.
	Epoch int64
	// SessionID names a session (sessions only).
	SessionID string
	// ArrivalID names an arrival (arrival and decoy passes): joining
	// twice with the same one gets the same ticket. A ticket carries the
	// arrival that took it (a decoy's, its own), from which its way out's
	// challenge is derived (wayOut).
	ArrivalID string
	// Bind ties the pass to the client it was issued to (see Binding);
	// "" when the room binds nothing.
	Bind string
	// Unrenewed marks a session pass issued after a failed renewal: it
	// admits until its next heartbeat without the store's word.
	Unrenewed bool
	// Uses, To, ID and NotBefore are an invite's (InviteKind only): how
	// many tickets it may hand out, the path it sends its holder to, the
	// name its uses are counted under, and when it becomes valid (zero:
	// at once).
	Uses      int64
	To        string
	ID        string
	NotBefore time.Time
	// Joined is when the visitor arrived (tickets only): carried from
	// pass to pass while the ticket holds its place, so the edge can
	// tell how long they have waited without asking the store.
	Joined time.Time
	// StartAhead is how many were ahead when the ticket was first issued
	// (tickets only), carried like Joined: the queue page's progress bar
	// runs from it to zero.
	StartAhead int64
	// Seen is when the store last saw the ticket (tickets only): a visitor
	// answered from the POP's snapshot (fromSnapshot) is not seen by the
	// store, so the edge asks it again before the queue timeout could
	// pass them over.
	Seen time.Time
	// Shard is the shard of a sharded room whose line holds the ticket
	// or session (tickets and sessions; 0 in a room of one line). An
	// arrival pass records which of the two shards its arrival may join
	// (shard.Choices) the edge sent it to: 0 the first, the hash's (and
	// every arrival pass issued before the choice), 1 the second. It is
	// chosen when the pass is issued, and signed, so every join with the
	// pass, a replay too, goes to the same shard.
	Shard int
	// Work is the bits of the proof of work the arrival must do before
	// it joins (arrival passes only; see package challenge): its
	// challenge is derived from the pass, so it is carried nowhere else.
	Work     int
	IssuedAt time.Time
	Expires  time.Time
}

// Sign encodes p as a JWT signed with the current key (HS256, the key's id
// in its header; see package queue/internal/passjwt).
func (ks *KeySet) Sign(p Pass) (string, error) {
	if ks == nil || len(ks.keys) == 0 {
		return "", errNoKeys
	}
	c := claimsOf(&p)
	if p.Kind == DecoyKind {
		// A ticket's token under the decoy key: only Verify tells.
		c.Kind = string(Ticket)
		return ks.decoys[0].Sign(&c)
	}
	return ks.keys[0].Sign(&c)
}

// claimsOf is what a token carries for p.
func claimsOf(p *Pass) passjwt.Claims {
	c := passjwt.Claims{
		Kind: string(p.Kind), Number: p.Number, Epoch: p.Epoch, Session: p.SessionID, Arrival: p.ArrivalID, Bind: p.Bind,
		Uses: p.Uses, To: p.To, StartAhead: p.StartAhead, Shard: int64(p.Shard), Work: int64(p.Work), Audience: p.Room,
		Expires: p.Expires, NotBefore: p.NotBefore, IssuedAt: p.IssuedAt, ID: p.ID,
	}
	// Unrenewed is 1 or absent: an integer keeps the payload reader to the
	// shapes it already reads.
	if p.Unrenewed {
		c.Unrenewed = 1
	}
	if !p.Joined.IsZero() {
		c.Joined = p.Joined.Unix()
	}
	if !p.Seen.IsZero() {
		c.Seen = p.Seen.Unix()
	}
	return c
}

// clockSkew tolerates small clock differences between edge servers.
const clockSkew = 2 * time.Second

// Verify checks a pass for room at time now: HS256 only, a known key id,
// the right room, an expiry in the future, an issue time not in the future,
// and a well-formed payload. Only the kinds a cookie carries are passes:
// an invite code is refused.
func (ks *KeySet) Verify(room, token string, now time.Time) (Pass, error) {
	p, err := ks.verify(room, token, now)
	if err != nil {
		return Pass{}, err
	}
	switch {
	case p.Kind == Ticket && p.Number != 0: // below zero: the priority lane's
	case p.Kind == Session && p.SessionID != "":
	case p.Kind == Arrival && p.ArrivalID != "":
	case p.Kind == DecoyKind && p.ArrivalID != "" && p.Number != 0:
	default:
		return Pass{}, fmt.Errorf("%w: malformed %q pass", ErrBadPass, p.Kind)
	}
	return p, nil
}

// verify checks token's header, signature, times and, unless room is "",
// its room (an invite names its own: see ParseInvite), and returns what it
// signs, of whatever kind: a ticket signed under a decoy key is a decoy
// pass.
//
// The header and signature are checked first, without allocating
// (passjwt.SignedBy), then jwt parses and validates the whole token again:
// the fast check only ever refuses more, never accepts on its own.
func (ks *KeySet) verify(room, token string, now time.Time) (Pass, error) {
	if ks == nil || len(ks.keys) == 0 {
		return Pass{}, errNoKeys
	}
	k, err := passjwt.SignedBy(ks.keys, token)
	decoy := false
	if err == passjwt.ErrBadSignature {
		// The same header, perhaps the decoy key's signature.
		if dk, derr := passjwt.SignedBy(ks.decoys, token); derr == nil {
			k, err, decoy = dk, nil, true
		}
	}
	if err != nil {
		return Pass{}, refusal(err)
	}
	c, err := k.Parse(token, room, now, clockSkew)
	if err != nil {
		// %w twice: ParseInvite tells an expired code from a forged one.
		return Pass{}, fmt.Errorf("%w: %w", ErrBadPass, err)
	}
	p := Pass{
		Kind: PassKind(c.Kind), Room: room, Number: c.Number, Epoch: c.Epoch, SessionID: c.Session,
		ArrivalID: c.Arrival, Bind: c.Bind, Unrenewed: c.Unrenewed == 1,
		Uses: c.Uses, To: c.To, ID: c.ID, NotBefore: c.NotBefore, StartAhead: c.StartAhead,
		IssuedAt: c.IssuedAt, Expires: c.Expires,
	}
	switch {
	case decoy && p.Kind == Ticket:
		p.Kind = DecoyKind
	case decoy || p.Kind == DecoyKind:
		// A decoy key signs tickets only; a pass that names itself a
		// decoy's is from before decoys looked like tickets, and its
		// holder is judged afresh, as a newcomer.
		return Pass{}, fmt.Errorf("%w: malformed %q pass", ErrBadPass, c.Kind)
	}
	// A shard far past any room's is no shard (and no int to truncate):
	// Gate treats it as a place lost, as a shard the room no longer has.
	if c.Shard < 0 || c.Shard >= 1<<16 {
		p.Shard = -1
	} else {
		p.Shard = int(c.Shard)
	}
	// Signed, so never out of range; capped all the same, never to less
	// work than the pass asks within the range.
	p.Work = int(min(max(c.Work, 0), challenge.MaxBits))
	if c.Joined != 0 {
		p.Joined = time.Unix(c.Joined, 0)
	}
	if c.Seen != 0 {
		p.Seen = time.Unix(c.Seen, 0)
	}
	if room == "" {
		p.Room = c.Audience
	}
	return p, nil
}

// newID names an arrival with 128 random bits.
func newID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// Bounds on what CookieValues will look at. A browser never sends more than
// a few values under one name; anything beyond this is an attack or a bug,
// and verifying each value costs an HMAC.
const (
	maxCookieValues   = 8
	maxCookieValueLen = 4096
)

// CookieValues returns the values of every cookie called name in the given
// Cookie header lines, in order. It accepts what browsers and broken clients
// send: many cookies, odd spacing, duplicates, quoted values, and pairs
// without '=' (skipped). Values longer than any pass could be are skipped,
// and at most a handful are returned.
func CookieValues(lines []string, name string) []string {
	var values []string
	for _, line := range lines {
		for len(line) > 0 {
			var part string
			if i := strings.IndexByte(line, ';'); i >= 0 {
				part, line = line[:i], line[i+1:]
			} else {
				part, line = line, ""
			}
			// Trimming only shortens a name: most cookies are ruled out
			// by length before paying for TrimSpace, a call TinyGo's
			// size-optimised build does not inline.
			eq := strings.IndexByte(part, '=')
			if eq < len(name) || strings.TrimSpace(part[:eq]) != name {
				continue
			}
			v := strings.TrimSpace(part[eq+1:])
			if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
				v = v[1 : len(v)-1]
			}
			if v == "" || len(v) > maxCookieValueLen {
				continue
			}
			values = append(values, v)
			if len(values) == maxCookieValues {
				return values
			}
		}
	}
	return values
}

// BindMode is what a room ties its passes to, so that a pass copied to
// another client does not work there: a session cookie shared by thirty
// scripts would otherwise put thirty clients on one place.
//
// Binding is a trade-off. The User-Agent is stable for a browser but
// shared by every copy of the same browser version, so it stops only
// careless sharing; the network prefix stops sharing across networks but
// sends a phone that moves from Wi-Fi to mobile data back to the line
// (with a fresh ticket), so it suits desktop-heavy sales behind strict
// limits. None binds nothing.
type BindMode string

// The bind modes.
const (
	// BindNone accepts a pass from any client.
	BindNone BindMode = "none"
	// BindUserAgent ties a pass to the browser's User-Agent header.
	BindUserAgent BindMode = "user_agent"
	// BindIPPrefix ties a pass to the client's network: its IPv4 /24 or
	// IPv6 /48.
	BindIPPrefix BindMode = "ip_prefix"
	// BindBoth ties a pass to both.
	BindBoth BindMode = "ip_prefix+user_agent"
)

// DefaultBindMode is what a room binds when it does not say.
const DefaultBindMode = BindUserAgent

// bindLen is the bytes of SHA-256 a binding keeps: enough that a client
// cannot find another User-Agent with the same binding by trying, short
// enough for the cookie.
const bindLen = 12

// Binding is the value a pass for this client carries under mode: a short
// hash of what the mode ties it to, or "" for BindNone.
func Binding(mode BindMode, userAgent string, ip net.IP) string {
	h := sha256.New()
	switch mode {
	case BindNone:
		return ""
	case BindUserAgent:
		h.Write([]byte("ua\x00" + userAgent))
	case BindIPPrefix:
		h.Write([]byte("ip\x00" + ipPrefix(ip)))
	default: // BindBoth; ParseRoom allows nothing else
		h.Write([]byte("ip\x00" + ipPrefix(ip) + "\x00ua\x00" + userAgent))
	}
	var sum [sha256.Size]byte
	return base64.RawURLEncoding.EncodeToString(h.Sum(sum[:0])[:bindLen])
}

// ipPrefix is ip's /24 (IPv4, including IPv4-mapped IPv6) or /48 (IPv6).
func ipPrefix(ip net.IP) string {
	if v4 := ip.To4(); v4 != nil {
		return v4.Mask(net.CIDRMask(24, 32)).String() + "/24"
	}
	if len(ip) != net.IPv6len {
		return "unknown"
	}
	return ip.Mask(net.CIDRMask(48, 128)).String() + "/48"
}

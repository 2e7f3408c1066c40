package queue

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Errors about passes. A visitor whose pass fails with any of them simply
// joins the back of the line; the errors exist for logs and tests.
var (
	// ErrBadPass wraps every reason a pass is refused.
	ErrBadPass = errors.New("pass refused")
	// ErrBadKeySet is returned by ParseKeySet for an unusable key set.
	ErrBadKeySet = errors.New("invalid signing key set")
)

// PassKind says what a pass entitles its holder to.
type PassKind string

// The two kinds of pass.
const (
	// Ticket holds a place in the line.
	Ticket PassKind = "ticket"
	// Session admits its holder to the origin.
	Session PassKind = "session"
)

// Pass is what a visitor's cookie proves, once its signature is checked.
type Pass struct {
	Kind PassKind
	Room string
	// Number is the ticket number (tickets only).
	Number int64
	// Epoch is the line's identity when the pass was issued; a line that was
	// rebuilt (its store state lost or reset) has a new epoch, and older
	// tickets no longer hold a place in it.
	Epoch int64
	// SessionID names a session (sessions only).
	SessionID string
	IssuedAt  time.Time
	Expires   time.Time
}

// passClaims is the JWT payload. Short names keep the cookie small.
type passClaims struct {
	Kind    PassKind `json:"knd"`
	Number  int64    `json:"tkt,omitempty"`
	Epoch   int64    `json:"ep"`
	Session string   `json:"sid,omitempty"`
	jwt.RegisteredClaims
}

// KeySet holds the HMAC keys passes are signed with: the current key signs,
// every key in the set verifies. Rotating keys is routine (add a new current
// key, keep the old one until its passes expire); emptying the set of old
// keys sends every visitor back to the line.
type KeySet struct {
	current string
	keys    map[string][]byte
}

// minKeyBytes is the shortest HS256 key accepted: a key shorter than the
// hash is a weaker key, never a valid configuration.
const minKeyBytes = 32

// ParseKeySet reads a key set in the form "kid:base64key,kid2:base64key2".
// The first key is the current one. Keys must decode to at least 32 bytes.
func ParseKeySet(s string) (*KeySet, error) {
	ks := &KeySet{keys: map[string][]byte{}}
	for _, item := range strings.FieldsFunc(s, func(c rune) bool { return c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t' }) {
		kid, enc, ok := strings.Cut(item, ":")
		if !ok || kid == "" || len(kid) > 32 {
			return nil, fmt.Errorf("%w: entry %q is not kid:base64key", ErrBadKeySet, redact(item))
		}
		key, err := decodeKey(enc)
		if err != nil {
			return nil, fmt.Errorf("%w: key %q: not base64", ErrBadKeySet, kid)
		}
		if len(key) < minKeyBytes {
			return nil, fmt.Errorf("%w: key %q: %d bytes, need at least %d", ErrBadKeySet, kid, len(key), minKeyBytes)
		}
		if _, dup := ks.keys[kid]; dup {
			return nil, fmt.Errorf("%w: key %q appears twice", ErrBadKeySet, kid)
		}
		if ks.current == "" {
			ks.current = kid
		}
		ks.keys[kid] = key
	}
	if ks.current == "" {
		return nil, fmt.Errorf("%w: no keys", ErrBadKeySet)
	}
	return ks, nil
}

func decodeKey(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("not base64")
}

// redact keeps a key's secret out of error messages.
func redact(item string) string {
	if kid, _, ok := strings.Cut(item, ":"); ok {
		return kid + ":…"
	}
	if len(item) > 8 {
		return item[:4] + "…"
	}
	return item
}

// Key returns the current signing key; the admin panel derives its CSRF
// tokens from it.
func (ks *KeySet) Key() []byte { return ks.keys[ks.current] }

// Sign encodes p as an HS256 JWT signed with the current key.
func (ks *KeySet) Sign(p Pass) (string, error) {
	c := passClaims{
		Kind:    p.Kind,
		Number:  p.Number,
		Epoch:   p.Epoch,
		Session: p.SessionID,
		RegisteredClaims: jwt.RegisteredClaims{
			Audience:  jwt.ClaimStrings{p.Room},
			IssuedAt:  jwt.NewNumericDate(p.IssuedAt),
			ExpiresAt: jwt.NewNumericDate(p.Expires),
		},
	}
	t := jwt.NewWithClaims(jwt.SigningMethodHS256, c)
	t.Header["kid"] = ks.current
	return t.SignedString(ks.keys[ks.current])
}

// clockSkew tolerates small clock differences between edge servers.
const clockSkew = 2 * time.Second

// Verify checks a pass for room at time now: HS256 only, a known key id,
// the right room, an expiry in the future, an issue time not in the future,
// and a well-formed payload.
func (ks *KeySet) Verify(room, token string, now time.Time) (Pass, error) {
	parser := jwt.NewParser(
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithAudience(room),
		jwt.WithLeeway(clockSkew),
		jwt.WithTimeFunc(func() time.Time { return now }),
	)
	var c passClaims
	_, err := parser.ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) {
		kid, ok := t.Header["kid"].(string)
		if !ok {
			return nil, errors.New("no key id")
		}
		key, ok := ks.keys[kid]
		if !ok {
			return nil, fmt.Errorf("unknown key id %q", kid)
		}
		return key, nil
	})
	if err != nil {
		return Pass{}, fmt.Errorf("%w: %v", ErrBadPass, err)
	}
	if c.IssuedAt == nil {
		return Pass{}, fmt.Errorf("%w: no issue time", ErrBadPass)
	}
	p := Pass{
		Kind: c.Kind, Room: room, Number: c.Number, Epoch: c.Epoch, SessionID: c.Session,
		IssuedAt: c.IssuedAt.Time, Expires: c.ExpiresAt.Time,
	}
	switch {
	case p.Kind == Ticket && p.Number > 0:
	case p.Kind == Session && p.SessionID != "":
	default:
		return Pass{}, fmt.Errorf("%w: malformed %q pass", ErrBadPass, p.Kind)
	}
	return p, nil
}

// newSessionID names a session with 128 random bits.
func newSessionID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

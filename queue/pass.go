// Passes are HS256 JWTs: jwt (github.com/golang-jwt/jwt/v5) parses and
// validates every pass; this file writes them, and checks their signature
// before jwt does.
//
// Speed. Users build the edge with TinyGo, whose conservative garbage
// collector makes every allocated byte expensive: in the hot-path
// benchmarks under wazero a collection runs each time some 100 KB have
// been allocated and scans the live heap word by word (the goroutine's
// 64 KB stack included), 15 to 35 ns per allocated byte, where Go's
// collector costs well under one. jwt's reflective encoding/json (the
// claims struct, NumericDate, ClaimStrings, its header map) and hmac.New
// allocated most of those bytes, and were slow in themselves under
// TinyGo's size-optimised code. So:
//
//   - Sign writes the token by hand, byte for byte what jwt's SignedString
//     wrote (TestSignMatchesJWT): into stack buffers, with HMAC-SHA256
//     from sha256.Sum256 and each key's header segment computed when the
//     key set is parsed. Its one allocation is the token.
//   - Verify first checks, without allocating, that the header is one this
//     key set writes and that the signature matches: a forged or tampered
//     cookie costs microseconds and never reaches a JSON decoder. Then jwt
//     parses and validates the token in full, as DESIGN §3 requires.
//   - passClaims decodes itself (UnmarshalJSON) with the semantics of
//     encoding/json on the struct, reading the shapes Sign writes by hand
//     and handing anything else to encoding/json, one field at a time
//     (FuzzClaimsMatchEncodingJSON).
//
// What remains of a valid pass's cost is jwt's own parsing (its header
// map, hmac.New, copies of the segments): about 1.7 KB of the 2.1 KB that
// Verify allocates under TinyGo.

package queue

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// passError is a reason to refuse a pass known in advance. A small
// integer, not a string: both compilers box it into an error without
// allocating, so refusing a forged cookie allocates nothing.
type passError uint8

const (
	errMalformed passError = iota
	errUnknownKey
	errBadSignature
	errNoKeys
	errPayload // not JSON, or not an object
	// errBoundElsewhere refuses a pass issued to another client (see
	// Room.BindSession).
	errBoundElsewhere
)

func (e passError) Error() string {
	why := "no signing keys"
	switch e {
	case errMalformed:
		why = "not a signed token"
	case errUnknownKey:
		why = "unknown key id or header"
	case errBadSignature:
		why = "signature does not match"
	case errPayload:
		why = "payload is not a JSON object"
	case errBoundElsewhere:
		why = "bound to another client"
	}
	return ErrBadPass.Error() + ": " + why
}

// Unwrap makes errors.Is(err, ErrBadPass) hold.
func (e passError) Unwrap() error { return ErrBadPass }

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
	// ArrivalID names an arrival (arrival passes only): joining twice with
	// the same one gets the same ticket.
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
	// answered from the POP's snapshot (FromSnapshot) is not seen by the
	// store, so the edge asks it again before the queue timeout could
	// pass them over.
	Seen     time.Time
	IssuedAt time.Time
	Expires  time.Time
}

// passClaims is the JWT payload. Short names keep the cookie small.
type passClaims struct {
	Kind    PassKind `json:"knd"`
	Number  int64    `json:"tkt,omitempty"`
	Epoch   int64    `json:"ep"`
	Session string   `json:"sid,omitempty"`
	Arrival string   `json:"arr,omitempty"`
	Bind    string   `json:"bnd,omitempty"`
	// Unrenewed is 1 or absent: an integer keeps the payload reader to
	// the shapes it already reads.
	Unrenewed int64  `json:"unr,omitempty"`
	Uses      int64  `json:"use,omitempty"`
	To        string `json:"to,omitempty"`
	// Joined is Pass.Joined in Unix seconds.
	Joined int64 `json:"jnd,omitempty"`
	// StartAhead is Pass.StartAhead.
	StartAhead int64 `json:"sta,omitempty"`
	// Seen is Pass.Seen in Unix seconds.
	Seen int64 `json:"sen,omitempty"`
	jwt.RegisteredClaims
}

// KeySet holds the HMAC keys passes are signed with: the current key signs,
// every key in the set verifies. Rotating keys is routine (add a new current
// key, keep the old one until its passes expire); emptying the set of old
// keys sends every visitor back to the line.
//
// A KeySet is safe for concurrent use. Signing and verifying allocate as
// little as they can, because TinyGo's collector makes every byte count
// (see the note at the top of pass.go).
type KeySet struct {
	// keys[0] is the current key. A slice rather than a map: there are one
	// to three keys, and a TinyGo map lookup by string allocates.
	keys []signingKey
}

type signingKey struct {
	kid    string
	secret []byte
	// block is the HMAC key block (RFC 2104): the secret padded with zeros,
	// or its SHA-256 when longer than a block, as crypto/hmac does.
	block [sha256.BlockSize]byte
	// header is the token's first segment for this key, base64url of
	// {"alg":"HS256","kid":…,"typ":"JWT"}: the bytes jwt wrote when it
	// signed (it marshals its header map with sorted keys), so passes signed
	// before and after a deploy look alike.
	header string
	// secretAny is secret boxed once for jwt's key function, whose
	// interface result would otherwise allocate on every Verify.
	secretAny any
}

// minKeyBytes is the shortest HS256 key accepted: a key shorter than the
// hash is a weaker key, never a valid configuration.
const minKeyBytes = 32

// ParseKeySet reads a key set in the form "kid:base64key,kid2:base64key2".
// The first key is the current one. Keys must decode to at least 32 bytes.
func ParseKeySet(s string) (*KeySet, error) {
	ks := &KeySet{}
	for _, item := range strings.FieldsFunc(s, func(c rune) bool { return c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t' }) {
		kid, enc, ok := strings.Cut(item, ":")
		if !ok {
			return nil, fmt.Errorf("%w: entry %q is not kid:base64key", ErrBadKeySet, redact(item))
		}
		if err := CheckKeyID(kid); err != nil {
			return nil, fmt.Errorf("%w: key id %q %v", ErrBadKeySet, kid, err)
		}
		key, err := decodeKey(enc)
		if err != nil {
			return nil, fmt.Errorf("%w: key %q: not base64", ErrBadKeySet, kid)
		}
		if len(key) < minKeyBytes {
			return nil, fmt.Errorf("%w: key %q: %d bytes, need at least %d", ErrBadKeySet, kid, len(key), minKeyBytes)
		}
		if ks.find(kid) != nil {
			return nil, fmt.Errorf("%w: key %q appears twice", ErrBadKeySet, kid)
		}
		ks.keys = append(ks.keys, newSigningKey(kid, key))
	}
	if len(ks.keys) == 0 {
		return nil, fmt.Errorf("%w: no keys", ErrBadKeySet)
	}
	return ks, nil
}

func newSigningKey(kid string, secret []byte) signingKey {
	k := signingKey{kid: kid, secret: secret}
	if len(secret) > len(k.block) {
		sum := sha256.Sum256(secret)
		copy(k.block[:], sum[:])
	} else {
		copy(k.block[:], secret)
	}
	// Sorted keys, as encoding/json writes jwt's header map.
	h := make([]byte, 64+6*len(kid))
	n := put(h, 0, `{"alg":"HS256","kid":`)
	n = putString(h, n, kid)
	n = put(h, n, `,"typ":"JWT"}`)
	if n < 0 { // unreachable: a kid's JSON is at most six times its length
		n = 0
	}
	k.header = base64.RawURLEncoding.EncodeToString(h[:n])
	k.secretAny = secret
	return k
}

func (ks *KeySet) find(kid string) *signingKey {
	for i := range ks.keys {
		if ks.keys[i].kid == kid {
			return &ks.keys[i]
		}
	}
	return nil
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
func (ks *KeySet) Key() []byte {
	if ks == nil || len(ks.keys) == 0 {
		return nil
	}
	return ks.keys[0].secret
}

// Sizes of the stack buffers Sign and Verify work in. A pass's payload is
// under 300 bytes (room names are at most 64); a longer one still works,
// through the heap.
const (
	payloadBuf = 320
	tokenBuf   = 704
	macInline  = 512 // the longest signing input verified without allocating
)

// Sign encodes p as an HS256 JWT signed with the current key. The token is
// byte for byte what jwt.NewWithClaims(jwt.SigningMethodHS256, claims) with
// a "kid" header signed, written without the header map, reflection or
// intermediate strings. It writes into stack arrays by index: TinyGo moves
// any array given to append (or to a function returning it) to the heap.
func (ks *KeySet) Sign(p Pass) (string, error) {
	if ks == nil || len(ks.keys) == 0 {
		return "", errNoKeys
	}
	k := &ks.keys[0]
	var pb [payloadBuf]byte
	n := putPayload(pb[:], 0, &p)
	size := k.tokenSize(n)
	if n < 0 || size > tokenBuf || jwt.TimePrecision != time.Second {
		// Too long for the stack, or jwt set to write fractional seconds:
		// encoding/json writes the struct as jwt would have.
		enc, err := json.Marshal(claimsOf(p))
		if err != nil {
			return "", err
		}
		return signed(k.token(make([]byte, k.tokenSize(len(enc))), enc))
	}
	var tb [tokenBuf]byte
	return signed(k.token(tb[:size], pb[:n]))
}

// signed turns token's "" (a miscounted size, which cannot happen) into an
// error rather than an empty cookie.
func signed(tok string) (string, error) {
	if tok == "" {
		return "", errors.New("sign: token size miscounted")
	}
	return tok, nil
}

// tokenSize is the room token needs for a payload of n bytes: a block left
// free for HMAC's inner pad (so the inner hash runs over one contiguous
// buffer), then header.payload.signature.
func (k *signingKey) tokenSize(n int) int {
	return sha256.BlockSize + len(k.header) + 1 + base64.RawURLEncoding.EncodedLen(n) + 1 + sigLen
}

// token writes the signed token for payload into t, which holds exactly
// tokenSize(len(payload)) bytes, and returns it.
func (k *signingKey) token(t []byte, payload []byte) string {
	i := put(t, sha256.BlockSize, k.header)
	i = put(t, i, ".")
	end := i + base64.RawURLEncoding.EncodedLen(len(payload))
	if i < 0 || end+1+sigLen != len(t) {
		return "" // unreachable with t sized by tokenSize; never index past it
	}
	base64.RawURLEncoding.Encode(t[i:end], payload)
	sum := k.macPadded(t[:end])
	t[end] = '.'
	base64.RawURLEncoding.Encode(t[end+1:], sum[:])
	// A Builder, not string(t): TinyGo would move the caller's stack
	// array to the heap for the conversion.
	var out strings.Builder
	out.Grow(len(t) - sha256.BlockSize)
	out.Write(t[sha256.BlockSize:])
	return out.String()
}

// sigLen is the length of an HS256 signature in base64url, unpadded.
const sigLen = (sha256.Size*8 + 5) / 6

// claimsOf is the payload jwt signed for p before passes wrote their own.
func claimsOf(p Pass) passClaims {
	return passClaims{
		Kind: p.Kind, Number: p.Number, Epoch: p.Epoch, Session: p.SessionID,
		Arrival: p.ArrivalID, Bind: p.Bind, Unrenewed: unrenewed(p), Uses: p.Uses, To: p.To, Joined: unixClaim(p.Joined), StartAhead: p.StartAhead,
		Seen: unixClaim(p.Seen),
		RegisteredClaims: jwt.RegisteredClaims{
			Audience:  jwt.ClaimStrings{p.Room},
			IssuedAt:  jwt.NewNumericDate(p.IssuedAt),
			ExpiresAt: jwt.NewNumericDate(p.Expires),
			NotBefore: notBefore(p),
			ID:        p.ID,
		},
	}
}

// notBefore is Pass.NotBefore as its claim: none when zero.
func notBefore(p Pass) *jwt.NumericDate {
	if p.NotBefore.IsZero() {
		return nil
	}
	return jwt.NewNumericDate(p.NotBefore)
}

// putPayload writes claimsOf(p) at b[n:] as encoding/json writes it (field
// order, omitempty, escaping; dates in whole seconds, jwt's default
// precision) and returns the end, or -1 when b is too short.
func putPayload(b []byte, n int, p *Pass) int {
	n = put(b, n, `{"knd":`)
	n = putString(b, n, string(p.Kind))
	if p.Number != 0 {
		n = put(b, n, `,"tkt":`)
		n = putInt(b, n, p.Number)
	}
	n = put(b, n, `,"ep":`)
	n = putInt(b, n, p.Epoch)
	if p.SessionID != "" {
		n = put(b, n, `,"sid":`)
		n = putString(b, n, p.SessionID)
	}
	if p.ArrivalID != "" {
		n = put(b, n, `,"arr":`)
		n = putString(b, n, p.ArrivalID)
	}
	if p.Bind != "" {
		n = put(b, n, `,"bnd":`)
		n = putString(b, n, p.Bind)
	}
	if p.Unrenewed {
		n = put(b, n, `,"unr":1`)
	}
	if p.Uses != 0 {
		n = put(b, n, `,"use":`)
		n = putInt(b, n, p.Uses)
	}
	if p.To != "" {
		n = put(b, n, `,"to":`)
		n = putString(b, n, p.To)
	}
	if j := unixClaim(p.Joined); j != 0 {
		n = put(b, n, `,"jnd":`)
		n = putInt(b, n, j)
	}
	if p.StartAhead != 0 {
		n = put(b, n, `,"sta":`)
		n = putInt(b, n, p.StartAhead)
	}
	if t := unixClaim(p.Seen); t != 0 {
		n = put(b, n, `,"sen":`)
		n = putInt(b, n, t)
	}
	n = put(b, n, `,"aud":[`)
	n = putString(b, n, p.Room)
	n = put(b, n, `],"exp":`)
	n = putInt(b, n, p.Expires.Unix())
	if !p.NotBefore.IsZero() {
		n = put(b, n, `,"nbf":`)
		n = putInt(b, n, p.NotBefore.Unix())
	}
	n = put(b, n, `,"iat":`)
	n = putInt(b, n, p.IssuedAt.Unix())
	if p.ID != "" {
		n = put(b, n, `,"jti":`)
		n = putString(b, n, p.ID)
	}
	return put(b, n, "}")
}

// put copies s to b[n:] and returns the end, or -1 when b is too short or
// n is already -1, so a chain of puts needs one check at its end.
func put(b []byte, n int, s string) int {
	if n < 0 || len(s) > len(b)-n {
		return -1
	}
	return n + copy(b[n:], s)
}

// putInt writes v in decimal, as strconv.AppendInt does.
func putInt(b []byte, n int, v int64) int {
	u := uint64(v)
	if v < 0 {
		u = -u // also right for math.MinInt64
	}
	digits := 1
	for x := u; x >= 10; x /= 10 {
		digits++
	}
	if v < 0 {
		n = put(b, n, "-")
	}
	if n < 0 || digits > len(b)-n {
		return -1
	}
	for i := n + digits - 1; i >= n; i-- {
		b[i] = byte('0' + u%10)
		u /= 10
	}
	return n + digits
}

// putString writes s as encoding/json writes a string: printable ASCII
// other than the characters it escapes is copied, anything else goes
// through encoding/json itself.
func putString(b []byte, n int, s string) int {
	for i := 0; i < len(s); i++ {
		if !plainJSONByte(s[i]) {
			enc, err := json.Marshal(s)
			if err != nil { // a string always marshals
				return -1
			}
			return put(b, n, string(enc))
		}
	}
	n = put(b, n, `"`)
	n = put(b, n, s)
	return put(b, n, `"`)
}

// plainJSONByte reports whether encoding/json writes c as itself inside a
// string (it escapes <, > and & for HTML), and reads it back as itself.
func plainJSONByte(c byte) bool {
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
}

// macPadded returns HMAC-SHA256 of b[BlockSize:], overwriting b[:BlockSize]
// with the inner pad. sha256.Sum256 keeps its state on the stack, which
// hmac.New (two digests and two pads on the heap) does not.
func (k *signingKey) macPadded(b []byte) [sha256.Size]byte {
	if len(b) < sha256.BlockSize {
		return [sha256.Size]byte{}
	}
	for i, c := range k.block {
		b[i] = c ^ 0x36
	}
	inner := sha256.Sum256(b)
	var outer [sha256.BlockSize + sha256.Size]byte
	for i, c := range k.block {
		outer[i] = c ^ 0x5c
	}
	copy(outer[sha256.BlockSize:], inner[:])
	return sha256.Sum256(outer[:])
}

// mac returns HMAC-SHA256 of msg.
func (k *signingKey) mac(msg string) [sha256.Size]byte {
	if len(msg) <= macInline {
		var b [sha256.BlockSize + macInline]byte
		n := copy(b[sha256.BlockSize:], msg)
		return k.macPadded(b[:sha256.BlockSize+n])
	}
	var sum [sha256.Size]byte
	h := hmac.New(sha256.New, k.secret)
	io.WriteString(h, msg)
	h.Sum(sum[:0])
	return sum
}

// checkSignature finds the key whose header the token carries and checks
// the token's signature with it. It is stricter than jwt: the header must
// be byte for byte the one Sign writes for a key of the set, and the
// signature its canonical encoding; no pass this package issued differs.
func (ks *KeySet) checkSignature(token string) (*signingKey, error) {
	dot := strings.IndexByte(token, '.')
	last := strings.LastIndexByte(token, '.')
	if dot < 0 || last == dot || strings.IndexByte(token[dot+1:last], '.') >= 0 {
		return nil, errMalformed
	}
	var k *signingKey
	for i := range ks.keys {
		if ks.keys[i].header == token[:dot] {
			k = &ks.keys[i]
			break
		}
	}
	if k == nil {
		return nil, errUnknownKey
	}
	sum := k.mac(token[:last])
	var want [sigLen]byte
	base64.RawURLEncoding.Encode(want[:], sum[:])
	sig := token[last+1:]
	if len(sig) != len(want) {
		return nil, errBadSignature
	}
	// Compare in constant time, as hmac.Equal does, without converting
	// the string to a slice.
	var diff byte
	for i := range want {
		diff |= want[i] ^ sig[i]
	}
	if diff != 0 {
		return nil, errBadSignature
	}
	return k, nil
}

// hs256Only is the one algorithm passes use; jwt only reads it.
var hs256Only = []string{"HS256"}

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
	default:
		return Pass{}, fmt.Errorf("%w: malformed %q pass", ErrBadPass, p.Kind)
	}
	return p, nil
}

// verify checks token's header, signature, times and, unless room is "",
// its room (an invite names its own: see ParseInvite), and returns what it
// signs, of whatever kind.
//
// The header and signature are checked first, without allocating (see
// checkSignature), then jwt parses and validates the whole token again:
// the fast check only ever refuses more, never accepts on its own.
func (ks *KeySet) verify(room, token string, now time.Time) (Pass, error) {
	if ks == nil || len(ks.keys) == 0 {
		return Pass{}, errNoKeys
	}
	k, err := ks.checkSignature(token)
	if err != nil {
		return Pass{}, err
	}
	// The clock jwt reads is a copy made here: TinyGo moves a variable a
	// closure captures to the heap where it is declared, and refusing a
	// forged pass above should not pay for that.
	at := now
	opts := [...]jwt.ParserOption{
		jwt.WithValidMethods(hs256Only),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(clockSkew),
		jwt.WithTimeFunc(func() time.Time { return at }),
		nil, // the audience, when room is given
	}
	n := len(opts) - 1
	if room != "" {
		opts[n], n = jwt.WithAudience(room), n+1
	}
	var c passClaims
	_, err = jwt.NewParser(opts[:n]...).ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) {
		kid, ok := t.Header["kid"].(string)
		if !ok {
			return nil, errors.New("no key id")
		}
		if kid != k.kid {
			return nil, fmt.Errorf("unknown key id %q", kid)
		}
		return k.secretAny, nil
	})
	if err != nil {
		// %w twice: ParseInvite tells an expired code from a forged one.
		return Pass{}, fmt.Errorf("%w: %w", ErrBadPass, err)
	}
	if c.IssuedAt == nil || c.ExpiresAt == nil {
		return Pass{}, fmt.Errorf("%w: no issue or expiry time", ErrBadPass)
	}
	p := Pass{
		Kind: c.Kind, Room: room, Number: c.Number, Epoch: c.Epoch, SessionID: c.Session,
		ArrivalID: c.Arrival, Bind: c.Bind, Unrenewed: c.Unrenewed == 1,
		Uses: c.Uses, To: c.To, ID: c.ID, StartAhead: c.StartAhead,
		IssuedAt: c.IssuedAt.Time, Expires: c.ExpiresAt.Time,
	}
	if c.NotBefore != nil {
		p.NotBefore = c.NotBefore.Time
	}
	if c.Joined != 0 {
		p.Joined = time.Unix(c.Joined, 0)
	}
	if c.Seen != 0 {
		p.Seen = time.Unix(c.Seen, 0)
	}
	if room == "" && len(c.Audience) == 1 {
		p.Room = c.Audience[0]
	}
	return p, nil
}

// unixClaim is a time of a pass as its claim: none when zero.
func unixClaim(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// unrenewed is Pass.Unrenewed as its claim.
func unrenewed(p Pass) int64 {
	if p.Unrenewed {
		return 1
	}
	return 0
}

// newID names an arrival with 128 random bits.
func newID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// The payload's fields, in the order of claimNames.
const (
	fieldKind = iota
	fieldNumber
	fieldEpoch
	fieldSession
	fieldArrival
	fieldBind
	fieldUnrenewed
	fieldUses
	fieldTo
	fieldJoined
	fieldStart
	fieldSeen
	fieldIssuer
	fieldSubject
	fieldAudience
	fieldExpires
	fieldNotBefore
	fieldIssuedAt
	fieldID
	fieldUnknown
)

// claimNames are the JSON names of passClaims' fields, its own and those of
// jwt.RegisteredClaims.
var claimNames = [...]string{"knd", "tkt", "ep", "sid", "arr", "bnd", "unr", "use", "to", "jnd", "sta", "sen", "iss", "sub", "aud", "exp", "nbf", "iat", "jti"}

// UnmarshalJSON reads the claims as encoding/json reads them into the
// struct: the same names (matched exactly, else case-insensitively), null
// leaving a field alone (or clearing a date), duplicates overwriting, and
// an error for any value of the wrong type. The shapes Sign writes (plain
// strings, integers, a one-room audience) are read here; any other value
// is handed to encoding/json for that one field, so the results agree
// everywhere (see FuzzClaimsMatchEncodingJSON).
//
// jwt calls it after encoding/json has checked the syntax, before the
// signature is checked by jwt (Verify checks it earlier): the input may be
// hostile, and nothing here indexes past a length it has not checked.
func (c *passClaims) UnmarshalJSON(data []byte) error {
	if !json.Valid(data) {
		return errPayload
	}
	s := jsonScanner{b: data}
	s.space()
	switch s.peek() {
	case 'n': // null: by encoding/json's convention, no change
		return nil
	case '{':
		s.i++
	default:
		return errPayload
	}
	var firstErr error
	for {
		s.space()
		if s.peek() == '}' {
			return firstErr
		}
		key := s.value()
		s.space()
		if key == nil || s.peek() != ':' {
			return errPayload
		}
		s.i++
		s.space()
		val := s.value()
		if val == nil {
			return errPayload
		}
		if err := c.set(fieldOf(key), val); err != nil && firstErr == nil {
			firstErr = err
		}
		s.space()
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			return firstErr
		default:
			return errPayload
		}
	}
}

// set stores one field's value, raw JSON known to be valid.
func (c *passClaims) set(field int, val []byte) error {
	switch field {
	case fieldKind:
		if v, ok := plainString(val); ok {
			switch {
			case equal(v, string(Ticket)):
				c.Kind = Ticket
			case equal(v, string(Session)):
				c.Kind = Session
			case equal(v, string(Arrival)):
				c.Kind = Arrival
			case equal(v, string(InviteKind)):
				c.Kind = InviteKind
			default:
				c.Kind = PassKind(v)
			}
			return nil
		}
		return json.Unmarshal(val, &c.Kind)
	case fieldNumber:
		return setInt(&c.Number, val)
	case fieldEpoch:
		return setInt(&c.Epoch, val)
	case fieldSession:
		return setString(&c.Session, val)
	case fieldArrival:
		return setString(&c.Arrival, val)
	case fieldBind:
		return setString(&c.Bind, val)
	case fieldUnrenewed:
		return setInt(&c.Unrenewed, val)
	case fieldUses:
		return setInt(&c.Uses, val)
	case fieldTo:
		return setString(&c.To, val)
	case fieldJoined:
		return setInt(&c.Joined, val)
	case fieldStart:
		return setInt(&c.StartAhead, val)
	case fieldSeen:
		return setInt(&c.Seen, val)
	case fieldIssuer:
		return setString(&c.Issuer, val)
	case fieldSubject:
		return setString(&c.Subject, val)
	case fieldAudience:
		// The one shape Sign writes: ["room"].
		if len(val) > 2 && val[0] == '[' && val[len(val)-1] == ']' {
			if v, ok := plainString(val[1 : len(val)-1]); ok {
				c.Audience = jwt.ClaimStrings{string(v)}
				return nil
			}
		}
		return json.Unmarshal(val, &c.Audience)
	case fieldExpires:
		return setDate(&c.ExpiresAt, val)
	case fieldNotBefore:
		return setDate(&c.NotBefore, val)
	case fieldIssuedAt:
		return setDate(&c.IssuedAt, val)
	case fieldID:
		return setString(&c.ID, val)
	}
	return nil // unknown names are ignored, as encoding/json does
}

func setString(dst *string, val []byte) error {
	if v, ok := plainString(val); ok {
		*dst = string(v)
		return nil
	}
	return json.Unmarshal(val, dst)
}

func setInt(dst *int64, val []byte) error {
	if n, ok := plainInt(val); ok {
		*dst = n
		return nil
	}
	return json.Unmarshal(val, dst)
}

// setDate reads a NumericDate: jwt turns the number into a float64 and the
// float into a time; for an integer of at most 15 digits that is exactly
// time.Unix(n, 0), which is all Sign writes.
func setDate(dst **jwt.NumericDate, val []byte) error {
	if n, ok := plainInt(val); ok && len(val) <= 15 {
		*dst = jwt.NewNumericDate(time.Unix(n, 0))
		return nil
	}
	return json.Unmarshal(val, dst)
}

// plainString returns the contents of a JSON string literal with no escapes
// and only printable ASCII, which is then its value.
func plainString(val []byte) ([]byte, bool) {
	if len(val) < 2 || val[0] != '"' || val[len(val)-1] != '"' {
		return nil, false
	}
	v := val[1 : len(val)-1]
	for _, c := range v {
		if c < 0x20 || c >= 0x7f || c == '\\' || c == '"' {
			return nil, false
		}
	}
	return v, true
}

// plainInt parses a JSON integer of at most 18 digits (which cannot
// overflow); longer numbers, fractions and exponents are left to
// encoding/json.
func plainInt(val []byte) (int64, bool) {
	digits := val
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if len(digits) < len(val) {
		n = -n
	}
	return n, true
}

// equal compares without converting b to a string, which TinyGo may
// allocate for.
func equal(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		if b[i] != s[i] {
			return false
		}
	}
	return true
}

// fieldOf finds the field a raw JSON key names, as encoding/json does: an
// exact match, else a case-insensitive one with Unicode folding, so that
// "\u212And" (a Kelvin sign) names "knd" here as it does there.
func fieldOf(key []byte) int {
	if v, ok := plainString(key); ok {
		for i, name := range claimNames {
			if equal(v, name) {
				return i
			}
		}
	}
	var name string
	if err := json.Unmarshal(key, &name); err != nil {
		return fieldUnknown
	}
	for i, n := range claimNames {
		if strings.EqualFold(name, n) {
			return i
		}
	}
	return fieldUnknown
}

// jsonScanner walks JSON that json.Valid accepted. It still checks every
// index: a bug must refuse a pass, not panic (TinyGo cannot recover).
type jsonScanner struct {
	b []byte
	i int
}

func (s *jsonScanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *jsonScanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// value returns the next value's raw bytes and moves past it, or nil.
func (s *jsonScanner) value() []byte {
	start := s.i
	if start >= len(s.b) {
		return nil
	}
	switch s.b[start] {
	case '"':
		if !s.skipString() {
			return nil
		}
	case '{', '[':
		depth := 0
		for {
			if s.i >= len(s.b) {
				return nil
			}
			switch s.b[s.i] {
			case '"':
				if !s.skipString() {
					return nil
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			s.i++
			if depth == 0 {
				break
			}
		}
	default: // a number, true, false or null
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return s.b[start:s.i]
			}
			s.i++
		}
	}
	return s.b[start:s.i]
}

// skipString moves past the string literal at s.i.
func (s *jsonScanner) skipString() bool {
	for s.i++; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case '\\':
			s.i++
		case '"':
			s.i++
			return true
		}
	}
	return false
}

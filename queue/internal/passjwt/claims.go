package passjwt

import (
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Claims are what a token carries, in plain values: Sign writes them
// without building jwt's claim types (each NumericDate is an allocation),
// and Parse returns them.
type Claims struct {
	Kind      string // "knd"
	Number    int64  // "tkt", omitted when zero
	Epoch     int64  // "ep"
	Session   string // "sid", omitted when ""
	Arrival   string // "arr", omitted when ""
	Bind      string // "bnd", omitted when ""
	Unrenewed int64  // "unr", omitted when zero
	Uses      int64  // "use", omitted when zero
	To        string // "to", omitted when ""
	// Joined and Seen are Unix seconds; zero omits them.
	Joined     int64 // "jnd"
	StartAhead int64 // "sta", omitted when zero
	Seen       int64 // "sen"
	// Shard is the shard of a sharded room the place is in ("shd",
	// omitted when zero, so an unsharded room's passes are unchanged).
	Shard int64
	// Work is the bits of the proof of work an arrival must do before it
	// joins ("wrk", omitted when zero: see package challenge).
	Work int64
	// Audience is the one audience Sign writes ("aud": [Audience]); Parse
	// returns it when the token names exactly one, else "".
	Audience string
	Expires  time.Time // "exp"
	// NotBefore is "nbf": none when zero.
	NotBefore time.Time
	IssuedAt  time.Time // "iat"
	ID        string    // "jti", omitted when ""
}

// jwtClaims are Claims as jwt reads and once wrote them: encoding/json
// names and jwt's registered claims. Short names keep the cookie small.
type jwtClaims struct {
	Kind      string `json:"knd"`
	Number    int64  `json:"tkt,omitempty"`
	Epoch     int64  `json:"ep"`
	Session   string `json:"sid,omitempty"`
	Arrival   string `json:"arr,omitempty"`
	Bind      string `json:"bnd,omitempty"`
	Unrenewed int64  `json:"unr,omitempty"`
	Uses      int64  `json:"use,omitempty"`
	To        string `json:"to,omitempty"`
	Joined    int64  `json:"jnd,omitempty"`
	// StartAhead is Claims.StartAhead.
	StartAhead int64 `json:"sta,omitempty"`
	Seen       int64 `json:"sen,omitempty"`
	Shard      int64 `json:"shd,omitempty"`
	Work       int64 `json:"wrk,omitempty"`
	jwt.RegisteredClaims
}

// registered is the payload jwt signed for c before Sign wrote its own.
func (c *Claims) registered() jwtClaims {
	r := jwtClaims{
		Kind: c.Kind, Number: c.Number, Epoch: c.Epoch, Session: c.Session, Arrival: c.Arrival, Bind: c.Bind,
		Unrenewed: c.Unrenewed, Uses: c.Uses, To: c.To, Joined: c.Joined, StartAhead: c.StartAhead, Seen: c.Seen,
		Shard: c.Shard, Work: c.Work,
		RegisteredClaims: jwt.RegisteredClaims{
			Audience:  jwt.ClaimStrings{c.Audience},
			IssuedAt:  jwt.NewNumericDate(c.IssuedAt),
			ExpiresAt: jwt.NewNumericDate(c.Expires),
			ID:        c.ID,
		},
	}
	if !c.NotBefore.IsZero() {
		r.NotBefore = jwt.NewNumericDate(c.NotBefore)
	}
	return r
}

// plain is c as Claims; its issue and expiry times must be set.
func (c *jwtClaims) plain() Claims {
	p := Claims{
		Kind: c.Kind, Number: c.Number, Epoch: c.Epoch, Session: c.Session, Arrival: c.Arrival, Bind: c.Bind,
		Unrenewed: c.Unrenewed, Uses: c.Uses, To: c.To, Joined: c.Joined, StartAhead: c.StartAhead, Seen: c.Seen,
		Shard: c.Shard, Work: c.Work, ID: c.ID,
	}
	if len(c.Audience) == 1 {
		p.Audience = c.Audience[0]
	}
	if c.IssuedAt != nil {
		p.IssuedAt = c.IssuedAt.Time
	}
	if c.ExpiresAt != nil {
		p.Expires = c.ExpiresAt.Time
	}
	if c.NotBefore != nil {
		p.NotBefore = c.NotBefore.Time
	}
	return p
}

// putPayload writes c.registered() at b[n:] as encoding/json writes it
// (field order, omitempty, escaping; dates in whole seconds, jwt's default
// precision) and returns the end, or -1 when b is too short.
func putPayload(b []byte, n int, c *Claims) int {
	n = put(b, n, `{"knd":`)
	n = putString(b, n, c.Kind)
	if c.Number != 0 {
		n = put(b, n, `,"tkt":`)
		n = putInt(b, n, c.Number)
	}
	n = put(b, n, `,"ep":`)
	n = putInt(b, n, c.Epoch)
	if c.Session != "" {
		n = put(b, n, `,"sid":`)
		n = putString(b, n, c.Session)
	}
	if c.Arrival != "" {
		n = put(b, n, `,"arr":`)
		n = putString(b, n, c.Arrival)
	}
	if c.Bind != "" {
		n = put(b, n, `,"bnd":`)
		n = putString(b, n, c.Bind)
	}
	if c.Unrenewed != 0 {
		n = put(b, n, `,"unr":`)
		n = putInt(b, n, c.Unrenewed)
	}
	if c.Uses != 0 {
		n = put(b, n, `,"use":`)
		n = putInt(b, n, c.Uses)
	}
	if c.To != "" {
		n = put(b, n, `,"to":`)
		n = putString(b, n, c.To)
	}
	if c.Joined != 0 {
		n = put(b, n, `,"jnd":`)
		n = putInt(b, n, c.Joined)
	}
	if c.StartAhead != 0 {
		n = put(b, n, `,"sta":`)
		n = putInt(b, n, c.StartAhead)
	}
	if c.Seen != 0 {
		n = put(b, n, `,"sen":`)
		n = putInt(b, n, c.Seen)
	}
	if c.Shard != 0 {
		n = put(b, n, `,"shd":`)
		n = putInt(b, n, c.Shard)
	}
	if c.Work != 0 {
		n = put(b, n, `,"wrk":`)
		n = putInt(b, n, c.Work)
	}
	n = put(b, n, `,"aud":[`)
	n = putString(b, n, c.Audience)
	n = put(b, n, `],"exp":`)
	n = putInt(b, n, c.Expires.Unix())
	if !c.NotBefore.IsZero() {
		n = put(b, n, `,"nbf":`)
		n = putInt(b, n, c.NotBefore.Unix())
	}
	n = put(b, n, `,"iat":`)
	n = putInt(b, n, c.IssuedAt.Unix())
	if c.ID != "" {
		n = put(b, n, `,"jti":`)
		n = putString(b, n, c.ID)
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

// errPayload refuses a payload that is not JSON, or not an object.
var errPayload = errors.New("payload is not a JSON object")

// Kinds are the values of "knd" read without allocating a string: the
// kinds of pass package queue defines (TestKindsAreRead there keeps the
// two lists alike). Any other kind is read too, at the cost of a string.
var Kinds = [...]string{"arrival", "ticket", "session", "invite"}

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
	fieldShard
	fieldWork
	fieldIssuer
	fieldSubject
	fieldAudience
	fieldExpires
	fieldNotBefore
	fieldIssuedAt
	fieldID
	fieldUnknown
)

// claimNames are the JSON names of jwtClaims' fields, its own and those of
// jwt.RegisteredClaims.
var claimNames = [...]string{"knd", "tkt", "ep", "sid", "arr", "bnd", "unr", "use", "to", "jnd", "sta", "sen", "shd", "wrk", "iss", "sub", "aud", "exp", "nbf", "iat", "jti"}

// UnmarshalJSON reads the claims as encoding/json reads them into the
// struct: the same names (matched exactly, else case-insensitively), null
// leaving a field alone (or clearing a date), duplicates overwriting, and
// an error for any value of the wrong type. The shapes Sign writes (plain
// strings, integers, a one-room audience) are read here; any other value
// is handed to encoding/json for that one field, so the results agree
// everywhere (see FuzzClaimsMatchEncodingJSON).
//
// jwt calls it after encoding/json has checked the syntax, before the
// signature is checked by jwt (SignedBy checks it earlier): the input may be
// hostile, and nothing here indexes past a length it has not checked.
func (c *jwtClaims) UnmarshalJSON(data []byte) error {
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
func (c *jwtClaims) set(field int, val []byte) error {
	switch field {
	case fieldKind:
		if v, ok := plainString(val); ok {
			c.Kind = kind(v)
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
	case fieldShard:
		return setInt(&c.Shard, val)
	case fieldWork:
		return setInt(&c.Work, val)
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

// kind is v as a string, without allocating when it is one of Kinds.
func kind(v []byte) string {
	for i := range Kinds {
		if equal(v, Kinds[i]) {
			return Kinds[i]
		}
	}
	return string(v)
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

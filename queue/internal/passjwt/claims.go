package passjwt

import (
	"encoding/json"
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

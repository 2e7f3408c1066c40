package passjwt

import (
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

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

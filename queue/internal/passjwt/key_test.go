package passjwt

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// plainClaims is jwtClaims without its own JSON methods: encoding/json
// reads and writes it by reflection, as jwt did before passes wrote their
// own payloads, so it is the reference the hand-written codec must match.
type plainClaims jwtClaims

// jwtSign signs c the way passes were signed before this package: with
// jwt's token, header map and encoding/json.
func jwtSign(t testing.TB, kid string, key []byte, c *Claims) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, plainClaims(c.registered()))
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// oddClaims exercise every field's encoding: escapes, Unicode, invalid
// UTF-8, extreme numbers, times before 1970 and with nanoseconds, an
// audience long enough to leave the stack buffers.
func oddClaims() []Claims {
	ns := time.Date(2026, 11, 22, 12, 0, 0, 999_999_999, time.UTC)
	return []Claims{
		{Kind: "ticket", Audience: "shop", Number: 7, Epoch: 99, IssuedAt: now, Expires: now.Add(time.Minute)},
		{Kind: "session", Audience: "shop", Session: "0123456789abcdef0123456789abcdef", Epoch: 1700000000000, IssuedAt: ns, Expires: ns.Add(30 * time.Minute)},
		{Kind: "odd \"kind\" <&> \u2028 é \x00 \xff", Audience: `r<"&'>\`, Session: "tab\there\nnl", Number: math.MinInt64, Epoch: math.MaxInt64,
			IssuedAt: time.Unix(-5, 500_000_000), Expires: time.Time{}},
		{Kind: "ticket", Audience: "", Number: -1, Epoch: -1, IssuedAt: time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), Expires: time.Unix(0, 0)},
		{Kind: "", Audience: "ü", IssuedAt: now, Expires: now},
		{Kind: "ticket", Audience: strings.Repeat("long-room-", 60), Number: 1, IssuedAt: now, Expires: now.Add(time.Hour)},
		{Kind: "arrival", Audience: "shop", Arrival: "0123456789abcdef0123456789abcdef", Bind: "AAECAwQFBgcICQoL", IssuedAt: now, Expires: now.Add(10 * time.Minute)},
		{Kind: "arrival", Audience: "shop", Arrival: "0123456789abcdef0123456789abcdef", Work: 18, IssuedAt: now, Expires: now.Add(10 * time.Minute)},
		{Kind: "session", Audience: "shop", Session: "1700000000000.42", Epoch: 1700000000000, Bind: "b<&>", Unrenewed: 1, IssuedAt: now, Expires: now.Add(time.Hour)},
		{Kind: "ticket", Audience: "shop", Number: 3, Arrival: "\u00e9\n", Bind: "\xff\x00", Unrenewed: 1, IssuedAt: now, Expires: now.Add(time.Hour)},
		{Kind: "ticket", Audience: "shop", Number: 4, Joined: now.Unix() - 600, StartAhead: 1234, Seen: now.Unix() - 5, Shard: 3, IssuedAt: now, Expires: now.Add(time.Hour)},
		{Kind: "invite", Audience: "shop", Uses: 2, To: "/shop/vip%20sale", ID: "0123456789abcdef", NotBefore: now.Add(time.Minute), IssuedAt: now, Expires: now.Add(48 * time.Hour)},
		{Kind: "invite", Audience: "shop", Uses: math.MaxInt64, To: "/ü<>", ID: "\x7f\"", NotBefore: time.Unix(-1, 0), IssuedAt: now, Expires: now},
	}
}

// oddKeys are keys of every length class HMAC treats differently (shorter
// than a block, a block, longer and so hashed), under key ids of every
// character class a key id may hold.
func oddKeys() map[string][]byte {
	keys := map[string][]byte{}
	for i, n := range []int{32, 48, 64, 65, 100} {
		key := make([]byte, n)
		for j := range key {
			key[j] = byte(i*31 + j*7)
		}
		keys[[]string{"new", "q.1", "k_2", "K-3", "x"}[i]] = key
	}
	return keys
}

func TestSignMatchesJWT(t *testing.T) {
	for kid, secret := range oddKeys() {
		k := NewKey(kid, secret)
		for _, c := range oddClaims() {
			got, err := k.Sign(&c)
			if err != nil {
				t.Fatal(err)
			}
			if want := jwtSign(t, kid, secret, &c); got != want {
				t.Errorf("kid %q, %d-byte key, claims %+v:\n got %s\nwant %s", kid, len(secret), c, got, want)
			}
		}
	}
}

// TestParseReadsWhatSignWrites: every claim comes back as it was signed,
// whether this package or jwt signed it: times in whole seconds, and
// invalid UTF-8 as encoding/json writes it.
func TestParseReadsWhatSignWrites(t *testing.T) {
	secret := bytes.Repeat([]byte{1}, 32)
	k := NewKey("old", secret)
	for _, c := range oddClaims() {
		if c.Expires.Before(now.Add(time.Second)) || c.IssuedAt.After(now) {
			continue // jwt refuses them, as it should
		}
		at := now
		if c.NotBefore.After(at) {
			at = c.NotBefore
		}
		want := c
		for _, s := range []*string{&want.Kind, &want.Session, &want.Arrival, &want.Bind, &want.To, &want.Audience, &want.ID} {
			*s = strings.ToValidUTF8(*s, "\ufffd")
		}
		signed, err := k.Sign(&c)
		if err != nil {
			t.Fatal(err)
		}
		for _, tok := range []string{signed, jwtSign(t, "old", secret, &c)} {
			got, err := k.Parse(tok, c.Audience, at, 0)
			for _, d := range []struct{ got, want *time.Time }{{&got.IssuedAt, &want.IssuedAt}, {&got.Expires, &want.Expires}, {&got.NotBefore, &want.NotBefore}} {
				if d.got.Equal(d.want.Truncate(time.Second)) {
					*d.got = *d.want
				}
			}
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s:\n got %+v, %v\nwant %+v", tok, got, err, want)
			}
		}
	}
}

func TestParseRefuses(t *testing.T) {
	secret := bytes.Repeat([]byte{1}, 32)
	k := NewKey("k", secret)
	c := Claims{Kind: "ticket", Audience: "shop", Number: 1, IssuedAt: now, Expires: now.Add(time.Minute)}
	tok, err := k.Sign(&c)
	if err != nil {
		t.Fatal(err)
	}
	other := NewKey("other", secret)
	fromOther, _ := other.Sign(&c)
	for _, tc := range []struct {
		name, token, audience string
		at                    time.Time
		want                  error
	}{
		{"expired", tok, "shop", now.Add(time.Minute + time.Second), jwt.ErrTokenExpired},
		{"issued in the future", tok, "shop", now.Add(-2 * time.Second), jwt.ErrTokenUsedBeforeIssued},
		{"another audience", tok, "event", now, jwt.ErrTokenInvalidAudience},
		{"another key id", fromOther, "shop", now, jwt.ErrTokenUnverifiable},
		{"tampered", tok[:len(tok)-3] + "AAA", "shop", now, jwt.ErrTokenSignatureInvalid},
	} {
		if _, err := k.Parse(tc.token, tc.audience, tc.at, time.Second); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := k.Parse(tok, "shop", now.Add(-time.Second), time.Second); err != nil {
		t.Errorf("within the leeway: %v", err)
	}
}

func TestSignedBy(t *testing.T) {
	keys := []Key{NewKey("new", bytes.Repeat([]byte{2}, 48)), NewKey("old", bytes.Repeat([]byte{1}, 32))}
	c := Claims{Kind: "ticket", Audience: "shop", Number: 1, IssuedAt: now, Expires: now.Add(time.Minute)}
	tok, _ := keys[1].Sign(&c)
	zzz := NewKey("zzz", bytes.Repeat([]byte{2}, 48))
	fromOther, _ := zzz.Sign(&c)
	parts := strings.Split(tok, ".")
	sig := []byte(parts[2])
	sig[len(sig)-1] ^= 1 // same decoded bytes for jwt (the last char's low bits are unused), not the canonical form
	for _, tc := range []struct {
		name, token string
		want        error
	}{
		{"signed", tok, nil},
		{"unknown key", fromOther, ErrUnknownKey},
		{"header padded", parts[0] + "=." + parts[1] + "." + parts[2], ErrUnknownKey},
		{"tampered payload", parts[0] + "." + parts[1][:10] + "x" + parts[1][11:] + "." + parts[2], ErrBadSignature},
		{"tampered signature", tok[:len(tok)-3] + "AAA", ErrBadSignature},
		{"non-canonical signature", parts[0] + "." + parts[1] + "." + string(sig), ErrBadSignature},
		{"signature padded", tok + "=", ErrBadSignature},
		{"oversized", parts[0] + "." + strings.Repeat("A", 5000) + "." + parts[2], ErrBadSignature},
		{"four segments", tok + ".x", ErrMalformed},
		{"two segments", parts[0] + "." + parts[1], ErrMalformed},
		{"one segment", parts[0], ErrMalformed},
		{"empty", "", ErrMalformed},
		{"dots", "..", ErrUnknownKey},
	} {
		k, err := SignedBy(keys, tc.token)
		if err != tc.want || (err == nil) != (k == &keys[1]) {
			t.Errorf("%s: %v, %v, want %v", tc.name, k, err, tc.want)
		}
	}
}

func TestMACMatchesCryptoHMAC(t *testing.T) {
	for kid, secret := range oddKeys() {
		k := NewKey(kid, secret)
		for _, n := range []int{0, 1, 55, 56, 63, 64, 65, macInline - 1, macInline, macInline + 1, 5000} {
			msg := strings.Repeat("m", n)
			h := hmac.New(sha256.New, secret)
			h.Write([]byte(msg))
			if got := k.mac(msg); !bytes.Equal(got[:], h.Sum(nil)) {
				t.Errorf("%d-byte key, %d-byte message: HMAC differs", len(secret), n)
			}
		}
	}
}

func TestHeaderIsJWTs(t *testing.T) {
	for kid := range oddKeys() {
		h, err := json.Marshal(map[string]any{"typ": "JWT", "alg": "HS256", "kid": kid})
		if err != nil {
			t.Fatal(err)
		}
		k := NewKey(kid, nil)
		if got, want := k.header, base64.RawURLEncoding.EncodeToString(h); got != want {
			t.Errorf("kid %q: header %s, want %s", kid, got, want)
		}
	}
}

// FuzzSignMatchesJWT: whatever the key, key id and claims, Sign writes
// byte for byte the token jwt writes, and SignedBy finds its key. Times
// range over some 270 years either side of 1970 (passes carry the edge's
// clock), nanoseconds included.
func FuzzSignMatchesJWT(f *testing.F) {
	for kid, secret := range oddKeys() {
		for _, c := range oddClaims() {
			f.Add(kid, secret, c.Kind, c.Audience, c.Session, c.Bind, c.Number, c.Epoch, c.IssuedAt.Unix(), c.Expires.Unix(), uint32(c.IssuedAt.Nanosecond()))
		}
	}
	f.Fuzz(func(t *testing.T, kid string, secret []byte, kind, aud, session, bind string, number, epoch, iat, exp int64, nsec uint32) {
		if len(secret) == 0 {
			return // jwt refuses to sign with an empty key; ParseKeySet never makes one
		}
		const span = 1 << 33
		c := Claims{Kind: kind, Audience: aud, Session: session, Bind: bind, Number: number, Epoch: epoch,
			IssuedAt: time.Unix(iat%span, int64(nsec%1e9)), Expires: time.Unix(exp%span, 0),
			Joined: number / 3, Seen: epoch / 5, StartAhead: number % 1000, Unrenewed: epoch % 2, Shard: number % 64, Work: epoch % 25,
		}
		if number%7 == 0 {
			c.NotBefore, c.Uses, c.To, c.ID = c.IssuedAt.Add(time.Minute), epoch, session, bind
		}
		k := NewKey(kid, secret)
		got, err := k.Sign(&c)
		if err != nil {
			t.Fatal(err)
		}
		if want := jwtSign(t, kid, secret, &c); got != want {
			t.Fatalf("kid %q, %d-byte key, claims %+v:\n got %s\nwant %s", kid, len(secret), c, got, want)
		}
		if found, err := SignedBy([]Key{k}, got); err != nil || found == nil {
			t.Fatalf("SignedBy(%s): %v", got, err)
		}
	})
}

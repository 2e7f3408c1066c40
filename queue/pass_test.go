package queue

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

var (
	now  = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	key1 = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))
	key2 = base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{2}, 48))
)

func TestParseKeySet(t *testing.T) {
	tests := []struct {
		in, wantErr string
	}{
		{"a:" + key1, ""},
		{"new:" + key2 + ", old:" + key1, ""},
		{"", "no keys"},
		{"nokid", "not kid:base64key"},
		{":" + key1, "key id \"\" must be 1 to 32"},
		{"\xc3:" + key1, "may only hold"},
		{`k"1:` + key1, "may only hold"},
		{strings.Repeat("k", 33) + ":" + key1, "must be 1 to 32"},
		{"a:!!!", "not base64"},
		{"a:c2hvcnQ=", "need at least 32"},
		{"a:" + key1 + ",a:" + key2, "appears twice"},
	}
	for _, tc := range tests {
		ks, err := ParseKeySet(tc.in)
		if tc.wantErr == "" {
			if err != nil || ks == nil {
				t.Errorf("%q: %v", tc.in, err)
			}
			continue
		}
		if !errors.Is(err, ErrBadKeySet) || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.wantErr)
		}
		if err != nil && strings.Contains(err.Error(), key1) {
			t.Errorf("%q: the error leaks the key", tc.in)
		}
	}
}

func TestSignVerifyAndRotation(t *testing.T) {
	old, _ := ParseKeySet("old:" + key1)
	rotated, _ := ParseKeySet("new:" + key2 + ",old:" + key1)
	reset, _ := ParseKeySet("new:" + key2)
	p := Pass{Kind: Ticket, Room: "shop", Number: 7, Epoch: 99, IssuedAt: now, Expires: now.Add(time.Minute)}
	tok, err := old.Sign(p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := rotated.Verify("shop", tok, now)
	if err != nil || got.Number != 7 || got.Epoch != 99 || got.Kind != Ticket || !got.Expires.Equal(p.Expires) {
		t.Fatalf("a pass signed before a rotation: %+v, %v", got, err)
	}
	if _, err := reset.Verify("shop", tok, now); !errors.Is(err, ErrBadPass) {
		t.Fatalf("after removing the old key: %v, want ErrBadPass", err)
	}
	if _, err := old.Verify("shop", tok, now.Add(2*time.Minute)); !errors.Is(err, ErrBadPass) {
		t.Fatalf("expired: %v", err)
	}
	if _, err := old.Verify("event", tok, now); !errors.Is(err, ErrBadPass) {
		t.Fatalf("other room: %v", err)
	}
	s := Pass{Kind: Session, Room: "shop", SessionID: "abc", IssuedAt: now, Expires: now.Add(time.Minute)}
	tok, _ = rotated.Sign(s)
	if got, err := rotated.Verify("shop", tok, now); err != nil || got.SessionID != "abc" {
		t.Fatalf("session: %+v %v", got, err)
	}
	// Every field a pass carries comes back as it was signed.
	for _, p := range []Pass{
		{Kind: Arrival, Room: "shop", ArrivalID: "a1b2", Bind: "xyz", IssuedAt: now, Expires: now.Add(time.Minute)},
		{Kind: Session, Room: "shop", SessionID: "17.3", Epoch: 17, Bind: "xyz", Unrenewed: true, IssuedAt: now, Expires: now.Add(time.Minute)},
		{Kind: Session, Room: "shop", SessionID: "17.4", Epoch: 17, IssuedAt: now, Expires: now.Add(time.Minute)},
	} {
		tok, err := rotated.Sign(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := rotated.Verify("shop", tok, now)
		if got.IssuedAt.Equal(p.IssuedAt) && got.Expires.Equal(p.Expires) {
			got.IssuedAt, got.Expires = p.IssuedAt, p.Expires
		}
		if err != nil || got != p {
			t.Errorf("round trip of %+v: %+v, %v", p, got, err)
		}
	}
}

func FuzzVerify(f *testing.F) {
	ks, _ := ParseKeySet("a:" + key1)
	tok, _ := ks.Sign(Pass{Kind: Ticket, Room: "r", Number: 1, IssuedAt: now, Expires: now.Add(time.Hour)})
	f.Add(tok)
	f.Add("a.b.c")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ks.Verify("r", s, now)
		if err == nil && (p.Kind != Ticket || p.Number != 1) && s != tok {
			t.Fatalf("accepted a forged pass %q: %+v", s, p)
		}
	})
}

// plainClaims is passClaims without its own JSON methods: encoding/json
// reads and writes it by reflection, as jwt did before passes wrote their
// own payloads, so it is the reference the hand-written codec must match.
type plainClaims passClaims

// jwtSign signs p the way Sign did before: with jwt's token, header map and
// encoding/json.
func jwtSign(t *testing.T, kid string, key []byte, p Pass) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, plainClaims(claimsOf(p)))
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// oddPasses exercise every field's encoding: escapes, Unicode, invalid
// UTF-8, extreme numbers, times before 1970 and with nanoseconds, a room
// long enough to leave the stack buffers.
func oddPasses() []Pass {
	ns := time.Date(2026, 11, 22, 12, 0, 0, 999_999_999, time.UTC)
	return []Pass{
		{Kind: Ticket, Room: "shop", Number: 7, Epoch: 99, IssuedAt: now, Expires: now.Add(time.Minute)},
		{Kind: Session, Room: "shop", SessionID: "0123456789abcdef0123456789abcdef", Epoch: 1700000000000, IssuedAt: ns, Expires: ns.Add(30 * time.Minute)},
		{Kind: "odd \"kind\" <&> \u2028 é \x00 \xff", Room: `r<"&'>\`, SessionID: "tab\there\nnl", Number: math.MinInt64, Epoch: math.MaxInt64,
			IssuedAt: time.Unix(-5, 500_000_000), Expires: time.Time{}},
		{Kind: Ticket, Room: "", Number: -1, Epoch: -1, IssuedAt: time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), Expires: time.Unix(0, 0)},
		{Kind: "", Room: "ü", IssuedAt: now, Expires: now},
		{Kind: Ticket, Room: strings.Repeat("long-room-", 60), Number: 1, IssuedAt: now, Expires: now.Add(time.Hour)},
		{Kind: Arrival, Room: "shop", ArrivalID: "0123456789abcdef0123456789abcdef", Bind: "AAECAwQFBgcICQoL", IssuedAt: now, Expires: now.Add(10 * time.Minute)},
		{Kind: Session, Room: "shop", SessionID: "1700000000000.42", Epoch: 1700000000000, Bind: "b<&>", Unrenewed: true, IssuedAt: now, Expires: now.Add(time.Hour)},
		{Kind: Ticket, Room: "shop", Number: 3, ArrivalID: "\u00e9\n", Bind: "\xff\x00", Unrenewed: true, IssuedAt: now, Expires: now.Add(time.Hour)},
	}
}

// Keys of every length class HMAC treats differently (shorter than a
// block, a block, longer and so hashed), under kids of every character
// class a kid may hold.
func oddKeySets(t *testing.T) map[string][]byte {
	t.Helper()
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
	for kid, key := range oddKeySets(t) {
		ks, err := ParseKeySet(kid + ":" + base64.StdEncoding.EncodeToString(key))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range oddPasses() {
			got, err := ks.Sign(p)
			if err != nil {
				t.Fatal(err)
			}
			if want := jwtSign(t, kid, key, p); got != want {
				t.Errorf("kid %q, %d-byte key, pass %+v:\n got %s\nwant %s", kid, len(key), p, got, want)
			}
		}
	}
}

func TestVerifyAcceptsJWTSignedPasses(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2 + ",old:" + key1)
	k1, _ := base64.StdEncoding.DecodeString(key1)
	long := strings.Repeat("long-room-", 60)
	for _, p := range []Pass{
		{Kind: Ticket, Room: "shop", Number: 3, Epoch: 5, IssuedAt: now, Expires: now.Add(time.Minute)},
		{Kind: Session, Room: long, SessionID: "s", IssuedAt: now, Expires: now.Add(time.Minute)},
	} {
		got, err := ks.Verify(p.Room, jwtSign(t, "old", k1, p), now)
		if err != nil || got.Kind != p.Kind || got.Number != p.Number || got.Epoch != p.Epoch || got.SessionID != p.SessionID ||
			!got.IssuedAt.Equal(p.IssuedAt) || !got.Expires.Equal(p.Expires) || got.Room != p.Room {
			t.Errorf("%+v: got %+v, %v", p, got, err)
		}
	}
}

func TestMACMatchesCryptoHMAC(t *testing.T) {
	for kid, key := range oddKeySets(t) {
		k := newSigningKey(kid, key)
		for _, n := range []int{0, 1, 55, 56, 63, 64, 65, macInline - 1, macInline, macInline + 1, 5000} {
			msg := strings.Repeat("m", n)
			h := hmac.New(sha256.New, key)
			h.Write([]byte(msg))
			if got := k.mac(msg); !bytes.Equal(got[:], h.Sum(nil)) {
				t.Errorf("%d-byte key, %d-byte message: HMAC differs", len(key), n)
			}
		}
	}
}

func TestHeaderIsJWTs(t *testing.T) {
	for kid := range oddKeySets(t) {
		h, err := json.Marshal(map[string]any{"typ": "JWT", "alg": "HS256", "kid": kid})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := newSigningKey(kid, nil).header, base64.RawURLEncoding.EncodeToString(h); got != want {
			t.Errorf("kid %q: header %s, want %s", kid, got, want)
		}
	}
}

// signRaw signs any header and payload with k, valid signature included,
// to show that what the signature check lets through is still judged by
// jwt and the payload decoder.
func signRaw(k *signingKey, header, payload string) string {
	in := base64.RawURLEncoding.EncodeToString([]byte(header)) + "." + base64.RawURLEncoding.EncodeToString([]byte(payload))
	sum := k.mac(in)
	return in + "." + base64.RawURLEncoding.EncodeToString(sum[:])
}

func TestVerifyRefuses(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2 + ",old:" + key1)
	k := &ks.keys[0]
	secret := k.secret
	good := Pass{Kind: Session, Room: "shop", SessionID: "abc", IssuedAt: now, Expires: now.Add(time.Minute)}
	tok, err := ks.Sign(good)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ks.Verify("shop", tok, now); err != nil {
		t.Fatalf("the good pass: %v", err)
	}
	withMethod := func(m jwt.SigningMethod, key any) string {
		tk := jwt.NewWithClaims(m, plainClaims(claimsOf(good)))
		tk.Header["kid"] = "new"
		s, err := tk.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	other, _ := ParseKeySet("zzz:" + key2)
	removed, _ := ParseKeySet("gone:" + key1)
	fromOther, _ := other.Sign(good)
	fromRemoved, _ := removed.Sign(good)
	parts := strings.Split(tok, ".")
	sig := []byte(parts[2])
	sig[len(sig)-1] ^= 1 // same decoded bytes for jwt (the last char's low bits are unused), not the canonical form
	payload := func(s string) string { return signRaw(k, `{"alg":"HS256","kid":"new","typ":"JWT"}`, s) }
	iat := `"iat":` + strconv.FormatInt(now.Unix(), 10)
	exp := `"exp":` + strconv.FormatInt(now.Unix()+60, 10)
	times := exp + "," + iat
	nested := func(depth int) string { return strings.Repeat("[", depth) + strings.Repeat("]", depth) }

	tests := []struct{ name, room, token string }{
		{"alg none", "shop", withMethod(jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType)},
		{"HS384 with the same key", "shop", withMethod(jwt.SigningMethodHS384, secret)},
		{"HS512 with the same key", "shop", withMethod(jwt.SigningMethodHS512, secret)},
		{"unknown kid", "shop", fromOther},
		{"removed kid", "shop", fromRemoved},
		{"wrong room", "event", tok},
		{"expired", "shop", mustSign(t, ks, Pass{Kind: Session, Room: "shop", SessionID: "a", IssuedAt: now.Add(-time.Hour), Expires: now.Add(-time.Minute)})},
		{"issued in the future", "shop", mustSign(t, ks, Pass{Kind: Session, Room: "shop", SessionID: "a", IssuedAt: now.Add(time.Minute), Expires: now.Add(time.Hour)})},
		{"ticket without a number", "shop", mustSign(t, ks, Pass{Kind: Ticket, Room: "shop", IssuedAt: now, Expires: now.Add(time.Hour)})},
		{"session without an id", "shop", mustSign(t, ks, Pass{Kind: Session, Room: "shop", IssuedAt: now, Expires: now.Add(time.Hour)})},
		{"unknown kind", "shop", mustSign(t, ks, Pass{Kind: "admin", Room: "shop", SessionID: "a", Number: 1, IssuedAt: now, Expires: now.Add(time.Hour)})},
		{"arrival without an id", "shop", mustSign(t, ks, Pass{Kind: Arrival, Room: "shop", SessionID: "a", IssuedAt: now, Expires: now.Add(time.Hour)})},
		{"tampered payload", "shop", parts[0] + "." + parts[1][:10] + "x" + parts[1][11:] + "." + parts[2]},
		{"tampered signature", "shop", tok[:len(tok)-3] + "AAA"},
		{"non-canonical signature", "shop", parts[0] + "." + parts[1] + "." + string(sig)},
		{"signature padded", "shop", tok + "="},
		{"header keys reordered", "shop", signRaw(k, `{"kid":"new","alg":"HS256","typ":"JWT"}`, `{"knd":"session","sid":"a","aud":["shop"],`+times+`}`)},
		{"header padded", "shop", parts[0] + "=." + parts[1] + "." + parts[2]},
		{"four segments", "shop", tok + ".x"},
		{"two segments", "shop", parts[0] + "." + parts[1]},
		{"one segment", "shop", parts[0]},
		{"empty", "shop", ""},
		{"dots", "shop", ".."},
		{"oversized", "shop", parts[0] + "." + strings.Repeat("A", 5000) + "." + parts[2]},
		{"no expiry", "shop", payload(`{"knd":"session","sid":"a","aud":["shop"],"iat":` + strconv.FormatInt(now.Unix(), 10) + `}`)},
		{"no issue time", "shop", payload(`{"knd":"session","sid":"a","aud":["shop"],"exp":` + strconv.FormatInt(now.Unix()+60, 10) + `}`)},
		{"no audience", "shop", payload(`{"knd":"session","sid":"a",` + times + `}`)},
		{"payload not JSON", "shop", payload(`{"knd":`)},
		{"payload an array", "shop", payload(`[1,2]`)},
		{"payload null", "shop", payload(`null`)},
		{"payload empty", "shop", payload(``)},
		{"kind a number", "shop", payload(`{"knd":1,"sid":"a","aud":["shop"],` + times + `}`)},
		{"expiry a word", "shop", payload(`{"knd":"session","sid":"a","aud":["shop"],"exp":"soon",` + iat + `}`)},
		{"expiry too large", "shop", payload(`{"knd":"session","sid":"a","aud":["shop"],"exp":1e999,` + iat + `}`)},
		{"audience a number", "shop", payload(`{"knd":"session","sid":"a","aud":5,` + times + `}`)},
		{"audience of numbers", "shop", payload(`{"knd":"session","sid":"a","aud":[5],` + times + `}`)},
		{"ticket overflows", "shop", payload(`{"knd":"ticket","tkt":99999999999999999999,"aud":["shop"],` + times + `}`)},
		{"ticket a fraction", "shop", payload(`{"knd":"ticket","tkt":1.5,"aud":["shop"],` + times + `}`)},
		{"nested too deep", "shop", payload(`{"x":` + nested(10000) + `,"knd":"session","sid":"a","aud":["shop"],` + times + `}`)},
		{"trailing data", "shop", payload(`{"knd":"session","sid":"a","aud":["shop"],` + times + `} x`)},
	}
	for _, tc := range tests {
		if _, err := ks.Verify(tc.room, tc.token, now); !errors.Is(err, ErrBadPass) {
			t.Errorf("%s: %v, want ErrBadPass", tc.name, err)
		}
	}

	// The hand-signed payloads are read as jwt reads them: with every
	// field right they are accepted, unknown fields and all.
	for _, p := range []string{
		`{"knd":"session","sid":"a","aud":["shop"],` + times + `}`,
		`{"x":` + nested(9999) + `,"knd":"session","sid":"a","aud":"shop",` + times + `,"y":{"z":null}}`,
	} {
		if _, err := ks.Verify("shop", payload(p), now); err != nil {
			t.Errorf("%.60s: %v", p, err)
		}
	}
}

func mustSign(t testing.TB, ks *KeySet, p Pass) string {
	t.Helper()
	s, err := ks.Sign(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestEmptyKeySet(t *testing.T) {
	for _, ks := range []*KeySet{nil, {}} {
		if _, err := ks.Sign(Pass{Kind: Ticket, Number: 1}); err == nil {
			t.Error("signed without keys")
		}
		if _, err := ks.Verify("r", "a.b.c", now); !errors.Is(err, ErrBadPass) {
			t.Errorf("verify without keys: %v", err)
		}
		if ks.Key() != nil {
			t.Error("a key from an empty set")
		}
	}
}

// claimSamples are payloads for the decoder: what Sign writes, and every
// kind of hostile or odd input (wrong types, escapes, case and Unicode
// folding of names, duplicates, nulls, numbers as strings, nesting,
// overflow, invalid JSON). A function, not a package-level var: TinyGo 0.33
// has miscompiled package-level values computed by calls.
func claimSamples() []string {
	return []string{
		`{"knd":"session","ep":1700000000000,"sid":"0123456789abcdef0123456789abcdef","aud":["shop"],"exp":1763817000,"iat":1763815200}`,
		`{"knd":"ticket","tkt":48213,"ep":-1,"aud":["shop"],"exp":1763817000,"iat":1763815200}`,
		`{}`, `null`, `[]`, `"x"`, `1`, `true`, ``, ` `, `{`, `{"knd"}`, `{"knd":}`, `{,}`, `{"a":1,}`, `{} {}`, `{}x`,
		` { "knd" : "ticket" , "tkt" : 1 } `, "{\"knd\":\"a\tb\"}", "{\"knd\":\"\x00\"}",
		`{"KND":"ticket","Tkt":2,"EP":3,"SID":"s","Aud":"r","EXP":1,"IAT":2,"NBF":3,"ISS":"i","SUB":"s","JTI":"j"}`,
		`{"\u212And":"kelvin","\u017Fid":"long s","k\u006ed":"escaped name"}`,
		"{\"k\xffnd\":\"bad utf-8 name\",\"sid\":\"bad \xff utf-8 value\"}",
		`{"knd":"\u0074icket","sid":"\ud83d\ude00 \ud800 \u2028","aud":["\u00fc"],"iss":"<&>"}`,
		`{"knd":"a","knd":"b","tkt":1,"tkt":null,"exp":5,"exp":null,"aud":["x"],"aud":null,"iat":1,"IAT":2}`,
		`{"knd":null,"tkt":null,"ep":null,"sid":null,"aud":null,"exp":null,"nbf":null,"iat":null,"jti":null}`,
		`{"knd":1}`, `{"knd":true}`, `{"knd":["a"]}`, `{"knd":{"a":1}}`, `{"sid":2}`,
		`{"tkt":"1"}`, `{"tkt":1.0}`, `{"tkt":1e2}`, `{"tkt":-0}`, `{"tkt":9223372036854775807}`, `{"tkt":-9223372036854775808}`,
		`{"tkt":9223372036854775808}`, `{"tkt":123456789012345678}`, `{"tkt":1234567890123456789}`, `{"ep":true}`, `{"ep":[1]}`,
		`{"exp":"1763817000"}`, `{"exp":"1.5e9"}`, `{"exp":" 1"}`, `{"exp":""}`, `{"exp":"x"}`, `{"exp":1.5}`, `{"exp":-1.25}`,
		`{"exp":1e999}`, `{"exp":-1e999}`, `{"exp":1e-400}`, `{"exp":1e300}`, `{"exp":123456789012345}`, `{"exp":1234567890123456}`,
		`{"exp":-0}`, `{"exp":true}`, `{"exp":{}}`, `{"exp":[]}`, `{"nbf":1,"iat":-62135596800}`,
		`{"aud":"one"}`, `{"aud":[]}`, `{"aud":["a","b"]}`, `{"aud":[ "a" ]}`, `{"aud":[1]}`, `{"aud":[null]}`, `{"aud":[["a"]]}`,
		`{"aud":{}}`, `{"aud":5}`, `{"aud":true}`, `{"aud":["a\"b"]}`,
		`{"x":{"y":[1,{"z":"}]\""}]},"knd":"after nesting"}`, `{"x":"\"}","knd":"after a quote"}`,
		`{"x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `,"knd":"deep"}`,
		`{"x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
		`{"knd":"` + strings.Repeat("x", 5000) + `"}`,
	}
}

func TestClaimsMatchEncodingJSON(t *testing.T) {
	for _, s := range claimSamples() {
		checkClaimsMatch(t, []byte(s))
	}
}

func FuzzClaimsMatchEncodingJSON(f *testing.F) {
	for _, s := range claimSamples() {
		if len(s) < 1000 {
			f.Add([]byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkClaimsMatch(t, data) })
}

// checkClaimsMatch decodes data with passClaims, directly and through
// encoding/json (as jwt does), and with plainClaims: both must succeed or
// both fail, and succeed with the same claims.
func checkClaimsMatch(t *testing.T, data []byte) {
	t.Helper()
	var want plainClaims
	wantErr := json.Unmarshal(data, &want)
	var direct, via passClaims
	directErr := direct.UnmarshalJSON(data)
	viaErr := json.Unmarshal(data, &via)
	for _, got := range []struct {
		how string
		c   passClaims
		err error
	}{{"UnmarshalJSON", direct, directErr}, {"json.Unmarshal", via, viaErr}} {
		if (got.err == nil) != (wantErr == nil) {
			t.Errorf("%.80q: %s: error %v, encoding/json: %v", data, got.how, got.err, wantErr)
			continue
		}
		if got.err == nil && !reflect.DeepEqual(got.c, passClaims(want)) {
			t.Errorf("%.80q: %s: %+v, encoding/json: %+v", data, got.how, got.c, want)
		}
	}
}

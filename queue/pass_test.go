package queue

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/queue/internal/passjwt"
	"github.com/golang-jwt/jwt/v5"
)

var (
	now  = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	key1 = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))
	key2 = base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{2}, 48))
)

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
		{Kind: Session, Room: "shop", SessionID: "17.5", Epoch: 17, Shard: 3, IssuedAt: now, Expires: now.Add(time.Minute)},
		{Kind: Ticket, Room: "shop", Number: 9, Epoch: 17, Shard: 7, IssuedAt: now, Expires: now.Add(time.Minute)},
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

// signRaw signs any header and payload with secret, valid signature
// included, to show that what the signature check lets through is still
// judged by jwt and the payload decoder.
func signRaw(secret []byte, header, payload string) string {
	in := base64.RawURLEncoding.EncodeToString([]byte(header)) + "." + base64.RawURLEncoding.EncodeToString([]byte(payload))
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(in))
	return in + "." + base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

func TestVerifyRefuses(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2 + ",old:" + key1)
	secret := ks.Key()
	good := Pass{Kind: Session, Room: "shop", SessionID: "abc", IssuedAt: now, Expires: now.Add(time.Minute)}
	tok, err := ks.Sign(good)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ks.Verify("shop", tok, now); err != nil {
		t.Fatalf("the good pass: %v", err)
	}
	withMethod := func(m jwt.SigningMethod, key any) string {
		tk := jwt.NewWithClaims(m, jwt.MapClaims{"knd": "session", "sid": "abc", "aud": []string{"shop"}, "iat": now.Unix(), "exp": now.Unix() + 60})
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
	payload := func(s string) string { return signRaw(secret, `{"alg":"HS256","kid":"new","typ":"JWT"}`, s) }
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
		{"header keys reordered", "shop", signRaw(secret, `{"kid":"new","alg":"HS256","typ":"JWT"}`, `{"knd":"session","sid":"a","aud":["shop"],`+times+`}`)},
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
		// A pass that names itself a decoy's dates from before decoys
		// looked like tickets; a decoy key signs tickets only.
		{"a decoy pass of before", "shop", payload(`{"knd":"decoy","tkt":7,"arr":"a","wrk":8,"aud":["shop"],` + times + `}`)},
		{"a decoy key's session", "shop", signRaw(decoySecret(secret), `{"alg":"HS256","kid":"new","typ":"JWT"}`, `{"knd":"session","sid":"a","aud":["shop"],`+times+`}`)},
		{"a decoy key's ticket without an arrival", "shop", signRaw(decoySecret(secret), `{"alg":"HS256","kid":"new","typ":"JWT"}`, `{"knd":"ticket","tkt":7,"aud":["shop"],`+times+`}`)},
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

// decoySecret is decoyKey's secret for the room key secret.
func decoySecret(secret []byte) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(decoyLabel))
	return h.Sum(nil)
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

// TestKindsAreRead: every kind of pass is one the payload decoder reads
// without allocating a string (passjwt.Kinds), and reads back as itself.
func TestKindsAreRead(t *testing.T) {
	ks, _ := ParseKeySet("k:" + key1)
	for _, kind := range []PassKind{Arrival, Ticket, Session, InviteKind} {
		found := false
		for _, k := range passjwt.Kinds {
			found = found || k == string(kind)
		}
		if !found {
			t.Errorf("kind %q is not in passjwt.Kinds", kind)
		}
		p, err := ks.verify("shop", mustSign(t, ks, Pass{Kind: kind, Room: "shop", IssuedAt: now, Expires: now.Add(time.Hour)}), now)
		if err != nil || p.Kind != kind {
			t.Errorf("a %q pass reads back as %q, %v", kind, p.Kind, err)
		}
	}
}

func TestCookieValues(t *testing.T) {
	long := strings.Repeat("x", maxCookieValueLen+1)
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"none", nil, nil},
		{"one", []string{"wr=abc"}, []string{"abc"}},
		{"among others", []string{"a=1; wr=abc; b=2"}, []string{"abc"}},
		{"odd spacing", []string{"  a=1 ;wr =  abc  ;; b"}, []string{"abc"}},
		{"quoted", []string{`wr="abc"`}, []string{"abc"}},
		{"duplicates in order", []string{"wr=1; wr=2", "wr=3"}, []string{"1", "2", "3"}},
		{"empty value skipped", []string{"wr=; wr=2"}, []string{"2"}},
		{"no equals", []string{"wr; wr"}, nil},
		{"prefix names differ", []string{"xwr=1; wrx=2; w=3"}, nil},
		{"value with equals", []string{"wr=a=b"}, []string{"a=b"}},
		{"oversized skipped", []string{"wr=" + long + "; wr=ok"}, []string{"ok"}},
		{"garbage", []string{"\x00\xff;;=;=="}, nil},
		{"capped", []string{strings.Repeat("wr=v;", 100)}, []string{"v", "v", "v", "v", "v", "v", "v", "v"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := CookieValues(tc.lines, "wr"); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func FuzzCookieValues(f *testing.F) {
	f.Add("a=1; wr=abc", "wr")
	f.Fuzz(func(t *testing.T, line, name string) {
		for _, v := range CookieValues([]string{line}, name) {
			if v == "" || len(v) > maxCookieValueLen {
				t.Fatalf("returned %q", v)
			}
		}
	})
}

func TestBinding(t *testing.T) {
	ua1, ua2 := "Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0", "curl/8.5.0"
	ip := func(s string) net.IP { return net.ParseIP(s) }
	for _, c := range []struct {
		name      string
		mode      BindMode
		ua1, ua2  string
		ip1, ip2  net.IP
		wantSame  bool
		wantBlank bool
	}{
		{"none binds nothing", BindNone, ua1, ua2, ip("192.0.2.1"), ip("198.51.100.1"), true, true},
		{"user agent: same browser elsewhere", BindUserAgent, ua1, ua1, ip("192.0.2.1"), ip("198.51.100.1"), true, false},
		{"user agent: another browser", BindUserAgent, ua1, ua2, ip("192.0.2.1"), ip("192.0.2.1"), false, false},
		{"ip prefix: same /24", BindIPPrefix, ua1, ua2, ip("192.0.2.1"), ip("192.0.2.254"), true, false},
		{"ip prefix: v4-mapped is the same", BindIPPrefix, ua1, ua1, ip("192.0.2.1"), ip("::ffff:192.0.2.9"), true, false},
		{"ip prefix: next /24", BindIPPrefix, ua1, ua1, ip("192.0.2.1"), ip("192.0.3.1"), false, false},
		{"ip prefix: same /48", BindIPPrefix, ua1, ua1, ip("2001:db8:1:2::1"), ip("2001:db8:1:ffff::1"), true, false},
		{"ip prefix: next /48", BindIPPrefix, ua1, ua1, ip("2001:db8:1::1"), ip("2001:db8:2::1"), false, false},
		{"both: another browser on the network", BindBoth, ua1, ua2, ip("192.0.2.1"), ip("192.0.2.2"), false, false},
		{"both: same browser, another network", BindBoth, ua1, ua1, ip("192.0.2.1"), ip("203.0.113.1"), false, false},
		{"both: same browser and network", BindBoth, ua1, ua1, ip("192.0.2.1"), ip("192.0.2.77"), true, false},
		{"no address is its own network", BindIPPrefix, ua1, ua1, nil, ip("192.0.2.1"), false, false},
	} {
		a, b := Binding(c.mode, c.ua1, c.ip1), Binding(c.mode, c.ua2, c.ip2)
		if (a == b) != c.wantSame || (a == "") != c.wantBlank {
			t.Errorf("%s: %q vs %q", c.name, a, b)
		}
	}
	// The user agent's text cannot pose as a network.
	if Binding(BindUserAgent, "ip\x00192.0.2.0/24", nil) == Binding(BindIPPrefix, "", net.ParseIP("192.0.2.1")) {
		t.Error("a user agent collided with a network binding")
	}
}

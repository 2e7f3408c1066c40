package queue

import (
	"context"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/store"
)

// The hot paths of every request: reading the cookie, checking the pass,
// finding the room, signing a new pass, and the decision for an admitted
// visitor (no store call).

func benchKeys(b *testing.B) *KeySet {
	ks, err := ParseKeySet("new:" + key2 + ",old:" + key1)
	if err != nil {
		b.Fatal(err)
	}
	return ks
}

func sessionPass(now time.Time) Pass {
	return Pass{Kind: Session, Room: "shop", SessionID: "0123456789abcdef0123456789abcdef", Epoch: 1700000000000,
		IssuedAt: now, Expires: now.Add(30 * time.Minute)}
}

func BenchmarkSign(b *testing.B) {
	ks, p := benchKeys(b), sessionPass(time.Now())
	var tok string
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		var err error
		if tok, err = ks.Sign(p); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if got, err := ks.Verify(p.Room, tok, p.IssuedAt); err != nil || got.SessionID != p.SessionID || !got.Expires.Equal(p.Expires.Truncate(time.Second)) {
		b.Fatalf("the signed pass reads back as %+v, %v", got, err)
	}
}

func BenchmarkVerify(b *testing.B) {
	now := time.Now()
	ks := benchKeys(b)
	tok, err := ks.Sign(sessionPass(now))
	if err != nil {
		b.Fatal(err)
	}
	tampered := tok[:len(tok)-3] + "AAA"
	for _, tc := range []struct{ name, token string }{{"valid", tok}, {"tampered", tampered}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_, err := ks.Verify("shop", tc.token, now)
				if (err == nil) != (tc.token == tok) {
					b.Fatalf("verify %s: %v", tc.name, err)
				}
			}
		})
	}
}

func BenchmarkCookieValues(b *testing.B) {
	lines := []string{"_ga=GA1.2.1234567890.1700000000; _gid=GA1.2.987654321.1700000000; consent=yes; " +
		"cart=3f2a9c; wr_shop=eyJhbGciOiJIUzI1NiIsImtpZCI6Im5ldyJ9.eyJrbmQiOiJzZXNzaW9uIn0.sig; theme=dark"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if v := CookieValues(lines, "wr_shop"); len(v) != 1 {
			b.Fatalf("got %q", v)
		}
	}
}

// noStore fails the benchmark's premise loudly: the admitted path must not
// reach the store.
type noStore struct{ store.Store }

func BenchmarkDecideSession(b *testing.B) {
	now := time.Now()
	ks := benchKeys(b)
	tok, err := ks.Sign(sessionPass(now))
	if err != nil {
		b.Fatal(err)
	}
	room, err := ParseRoom("shop", []byte(`{"paths":["/"],"max_active_users":100}`))
	if err != nil {
		b.Fatal(err)
	}
	g := &Gate{Store: noStore{}, Keys: ks}
	v := Visitor{Passes: []string{tok}, Now: now.Add(time.Second)}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if d := g.Decide(context.Background(), room, v); d.Action != Admit {
			b.Fatalf("decision %v: %v", d.Action, d.Err)
		}
	}
}

package queue

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
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
		{":" + key1, "not kid:base64key"},
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

package queue

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/queue/internal/passjwt"
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

func TestCheckKeyID(t *testing.T) {
	for id, ok := range map[string]bool{
		"k1": true, "2024-06.rot_A": true, strings.Repeat("k", 32): true,
		"": false, strings.Repeat("k", 33): false, "\xc3": false, "ké": false, "k 1": false,
		"k:1": false, `k"1`: false, "k\\1": false, "k\n": false, "k/1": false, "k,1": false,
	} {
		if err := CheckKeyID(id); (err == nil) != ok {
			t.Errorf("CheckKeyID(%q) = %v, want ok %v", id, err, ok)
		}
	}
}

// keySetSeeds are key sets as operators write them, and as they must not.
var keySetSeeds = []string{
	"k1:MDEyMzQ1Njc4OWFiY2RlZmdoaWprbG1ub3BxcnN0dXY=",
	"new:AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIC, old:MDEyMzQ1Njc4OWFiY2RlZmdoaWprbG1ub3BxcnN0dXY",
	"2024-06.rot_A:MDEyMzQ1Njc4OWFiY2RlZmdoaWprbG1ub3BxcnN0dXY=\nb:MDEyMzQ1Njc4OWFiY2RlZmdoaWprbG1ub3BxcnN0dXY=",
	"\xc3:MDEyMzQ1Njc4OWFiY2RlZmdoaWprbG1ub3BxcnN0dXY=",
	`k"1:MDEyMzQ1Njc4OWFiY2RlZmdoaWprbG1ub3BxcnN0dXY=`,
	"k:1:MDEyMzQ1Njc4OWFiY2RlZmdoaWprbG1ub3BxcnN0dXY=",
	"k1:c2hvcnQ=",
	"k1:!!!",
	":MDEyMzQ1Njc4OWFiY2RlZmdoaWprbG1ub3BxcnN0dXY=",
	"",
}

// FuzzParseKeySet: no key set panics; every refusal wraps ErrBadKeySet;
// every key id in a set that parses is one CheckKeyID accepts; and a pass
// signed under each of its keys (as after a rotation, when the key is no
// longer the current one) verifies under the whole set.
func FuzzParseKeySet(f *testing.F) {
	for _, s := range keySetSeeds {
		f.Add(s)
	}
	f.Fuzz(checkParseKeySet)
}

func checkParseKeySet(t *testing.T, s string) {
	ks, err := ParseKeySet(s)
	if err != nil {
		if ks != nil || !errors.Is(err, ErrBadKeySet) {
			t.Fatalf("ParseKeySet(%q) = %v, %v: an error must wrap ErrBadKeySet and come without a set", s, ks, err)
		}
		return
	}
	if len(ks.Key()) < minKeyBytes {
		t.Fatalf("ParseKeySet(%q): current key of %d bytes", s, len(ks.Key()))
	}
	at := time.Unix(1_700_000_000, 0)
	for i, k := range ks.keys {
		if err := CheckKeyID(k.ID()); err != nil {
			t.Fatalf("ParseKeySet(%q) accepted key id %q, which %v", s, k.ID(), err)
		}
		p := Pass{Kind: Ticket, Room: "r", Number: int64(i + 1), Epoch: 7, IssuedAt: at, Expires: at.Add(time.Hour)}
		tok, err := (&KeySet{keys: []passjwt.Key{k}}).Sign(p)
		if err != nil {
			t.Fatalf("ParseKeySet(%q): key %q cannot sign: %v", s, k.ID(), err)
		}
		got, err := ks.Verify("r", tok, at)
		if err != nil || got.Number != p.Number || got.Epoch != p.Epoch {
			t.Fatalf("ParseKeySet(%q): a pass signed with key %q does not verify: %+v, %v", s, k.ID(), got, err)
		}
	}
}

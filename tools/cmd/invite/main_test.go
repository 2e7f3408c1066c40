package main

import (
	"bytes"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/queue"
)

const keys = "k2:MDEyMzQ1Njc4OWFiY2RlZmdoaWprbG1ub3BxcnN0dXY=,k1:AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIC"

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// links runs the command and reads back, at the time at, the invites it
// printed.
func links(t *testing.T, at time.Time, args []string, env string) []queue.Invite {
	t.Helper()
	var out, notes bytes.Buffer
	if err := run(args, env, now, &out, &notes); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	ks, err := queue.ParseKeySet(keys)
	if err != nil {
		t.Fatal(err)
	}
	var invs []queue.Invite
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		u, err := url.Parse(line)
		if err != nil || u.Path != "/_wr/invite" {
			t.Fatalf("%q printed %q, not an invite link", args, line)
		}
		inv, err := ks.ParseInvite(u.Query().Get("code"), at)
		if err != nil {
			t.Fatalf("%q printed %q: %v", args, line, err)
		}
		if u.Scheme+"://"+u.Host != "https://shop.example.com" && !strings.Contains(strings.Join(args, " "), "http://127.0.0.1:7676") {
			t.Fatalf("%q printed %q: wrong site", args, line)
		}
		invs = append(invs, inv)
	}
	if !strings.Contains(notes.String(), "priority lane") {
		t.Fatalf("%q: no summary: %q", args, notes.String())
	}
	return invs
}

func TestMint(t *testing.T) {
	invs := links(t, now, []string{"-room", "shop", "-uses", "3", "-ttl", "48h", "-to", "/sale/", "-host", "shop.example.com"}, keys)
	want := queue.Invite{ID: invs[0].ID, Room: "shop", Uses: 3, To: "/sale/", IssuedAt: now, Expires: now.Add(48 * time.Hour)}
	if len(invs) != 1 || invs[0] != want || len(invs[0].ID) != 32 {
		t.Fatalf("minted %+v, want %+v with a random id", invs, want)
	}
	many := links(t, now, []string{"-room", "shop", "-host", "shop.example.com", "-count", "5"}, keys)
	ids := map[string]bool{}
	for _, inv := range many {
		ids[inv.ID] = true
		if inv.Uses != 1 || inv.To != "/" || !inv.Expires.Equal(now.Add(48*time.Hour)) {
			t.Fatalf("defaults: %+v, want one use, /, 48h", inv)
		}
	}
	if len(many) != 5 || len(ids) != 5 {
		t.Fatalf("-count 5: %d links, %d ids", len(many), len(ids))
	}
	start := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	later := links(t, start.Add(time.Hour), []string{"-room", "shop", "-host", "http://127.0.0.1:7676", "-from", "2026-11-23T09:00:00Z", "-ttl", "2h"}, keys)
	if !later[0].NotBefore.Equal(start) || !later[0].Expires.Equal(start.Add(2*time.Hour)) {
		t.Fatalf("-from: %+v, want valid 09:00 to 11:00 the next day", later[0])
	}
	file := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(file, []byte(keys+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	links(t, now, []string{"-room", "shop", "-host", "shop.example.com", "-keys-file", file}, "")
}

func TestMintRefuses(t *testing.T) {
	good := func(extra ...string) []string {
		return append([]string{"-room", "shop", "-host", "shop.example.com"}, extra...)
	}
	host := func(h string) []string { return []string{"-room", "shop", "-host", h} }
	tests := []struct {
		name  string
		args  []string
		env   string
		want  string
		isErr error
	}{
		{"no keys", good(), "", "no signing key set", nil},
		{"bad keys", good(), "k1:c2hvcnQ=", "need at least 32", nil},
		{"no keys file", good("-keys-file", "/nonexistent/keys"), keys, "-keys-file", nil},
		{"no room", []string{"-host", "shop.example.com"}, keys, "room", queue.ErrInviteMalformed},
		{"bad room", []string{"-room", "Shop!", "-host", "shop.example.com"}, keys, "room", queue.ErrInviteMalformed},
		{"no host", []string{"-room", "shop"}, keys, "-host is required", nil},
		{"host with a path", host("https://shop.example.com/x"), keys, "-host", nil},
		{"host of another scheme", host("ftp://shop.example.com"), keys, "-host", nil},
		{"bad host", host("a b"), keys, "-host", nil},
		{"no uses", good("-uses", "0"), keys, "uses", queue.ErrInviteUses},
		{"too many uses", good("-uses", "100001"), keys, "uses", queue.ErrInviteUses},
		{"negative ttl", good("-ttl", "-1h"), keys, "-ttl", nil},
		{"ttl too long", good("-ttl", "9000h"), keys, "", queue.ErrInviteMalformed},
		{"path not in normal form", good("-to", "/a/../b"), keys, `write "/b"`, queue.ErrInvitePath},
		{"another site", good("-to", "//evil.example/"), keys, "", queue.ErrInvitePath},
		{"bad from", good("-from", "tomorrow"), keys, "-from", nil},
		{"no links", good("-count", "0"), keys, "-count", nil},
		{"stray argument", good("extra"), keys, "unexpected argument", nil},
		{"unknown flag", good("-rooms", "x"), keys, "flag provided but not defined", nil},
	}
	for _, tc := range tests {
		var out, notes bytes.Buffer
		err := run(tc.args, tc.env, now, &out, &notes)
		if err == nil || !strings.Contains(err.Error(), tc.want) || tc.isErr != nil && !errors.Is(err, tc.isErr) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		if out.Len() != 0 {
			t.Errorf("%s: printed %q", tc.name, out.String())
		}
		if err != nil && strings.Contains(err.Error(), "MDEyMzQ1") {
			t.Errorf("%s: the error shows the key: %v", tc.name, err)
		}
	}
}

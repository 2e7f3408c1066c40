package queue

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// inviteRoom is a room invites are for: the shop, not its assets.
func inviteRoom(t testing.TB) *Room {
	t.Helper()
	r, err := ParseRoom("shop", []byte(`{"paths":["/shop/"],"bypass_paths":["/shop/static/"],"max_active_users":10}`))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// goodInvite is valid at now for two days, for two visitors.
func goodInvite() Invite {
	return Invite{ID: "0123456789abcdef0123456789abcdef", Room: "shop", Uses: 2, To: "/shop/vip%20sale",
		IssuedAt: now.Add(-time.Hour), Expires: now.Add(47 * time.Hour)}
}

func mustMint(t testing.TB, ks *KeySet, inv Invite) string {
	t.Helper()
	code, err := ks.MintInvite(inv)
	if err != nil {
		t.Fatal(err)
	}
	return code
}

func TestInviteRoundTrip(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2 + ",old:" + key1)
	old, _ := ParseKeySet("old:" + key1)
	from := goodInvite()
	from.NotBefore = now.Add(-time.Minute)
	for _, inv := range []Invite{goodInvite(), from, {ID: "x", Room: "a-b_c", Uses: MaxInviteUses, To: "/", IssuedAt: now, Expires: now.Add(MaxInviteTTL)}} {
		for _, signer := range []*KeySet{ks, old} { // signed before a rotation too
			got, err := ks.ParseInvite(mustMint(t, signer, inv), now)
			if err != nil || got != inv {
				t.Errorf("%+v: got %+v, %v", inv, got, err)
			}
		}
	}
	if err := goodInvite().CheckRoom(inviteRoom(t)); err != nil {
		t.Errorf("the invite's own room: %v", err)
	}
	if code := mustMint(t, ks, goodInvite()); len(code) > 400 || strings.Trim(code, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != "" {
		t.Errorf("code %q: want under 400 characters that need no escaping in a URL", code)
	}
}

// TestInviteRefusals: every reason to refuse an invite is its own error,
// and every one wraps ErrBadInvite.
func TestInviteRefusals(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2 + ",old:" + key1)
	other, _ := ParseKeySet("zzz:" + key2)
	code := mustMint(t, ks, goodInvite())
	parts := strings.Split(code, ".")
	ticket := mustSign(t, ks, Pass{Kind: Ticket, Room: "shop", Number: 3, IssuedAt: now, Expires: now.Add(time.Hour)})
	session := mustSign(t, ks, Pass{Kind: Session, Room: "shop", SessionID: "1.3", IssuedAt: now, Expires: now.Add(time.Hour)})
	arrival := mustSign(t, ks, Pass{Kind: Arrival, Room: "shop", ArrivalID: "a", IssuedAt: now, Expires: now.Add(time.Hour)})
	// raw signs a payload with a valid signature, to show that what is
	// signed is still judged.
	iat, exp := strconv.FormatInt(now.Unix(), 10), strconv.FormatInt(now.Add(time.Hour).Unix(), 10)
	raw := func(claims string) string {
		return signRaw(ks.Key(), `{"alg":"HS256","kid":"new","typ":"JWT"}`, `{"knd":"invite",`+claims+`,"exp":`+exp+`,"iat":`+iat+`}`)
	}
	with := func(change func(*Invite)) string {
		inv := goodInvite()
		change(&inv)
		tok, err := ks.Sign(Pass{Kind: InviteKind, Room: inv.Room, Uses: int64(inv.Uses), To: inv.To, ID: inv.ID,
			NotBefore: inv.NotBefore, IssuedAt: inv.IssuedAt, Expires: inv.Expires})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	other2 := goodInvite()
	other2.ID, other2.Room = "fedcba", "other"
	swapped := strings.Split(mustMint(t, ks, other2), ".")

	tests := []struct {
		name string
		code string
		want error
	}{
		{"expired a second ago", mustMint(t, ks, Invite{ID: "a", Room: "shop", Uses: 1, To: "/shop/", IssuedAt: now.Add(-time.Hour), Expires: now.Add(-time.Second)}), ErrInviteExpired},
		{"expiring now", mustMint(t, ks, Invite{ID: "a", Room: "shop", Uses: 1, To: "/shop/", IssuedAt: now.Add(-time.Hour), Expires: now}), ErrInviteExpired},
		{"expired long ago", mustMint(t, ks, Invite{ID: "a", Room: "shop", Uses: 1, To: "/shop/", IssuedAt: now.Add(-48 * time.Hour), Expires: now.Add(-time.Hour)}), ErrInviteExpired},
		{"valid in a second", mustMint(t, ks, Invite{ID: "a", Room: "shop", Uses: 1, To: "/shop/", IssuedAt: now, NotBefore: now.Add(time.Second), Expires: now.Add(time.Hour)}), ErrInviteNotYetValid},
		{"issued in the future", mustMint(t, ks, Invite{ID: "a", Room: "shop", Uses: 1, To: "/shop/", IssuedAt: now.Add(time.Minute), Expires: now.Add(time.Hour)}), ErrInviteNotYetValid},
		{"unknown key", mustMint(t, other, goodInvite()), ErrInviteUnknownKey},
		{"payloads swapped", parts[0] + "." + swapped[1] + "." + parts[2], ErrInviteTampered},
		{"signatures swapped", parts[0] + "." + parts[1] + "." + swapped[2], ErrInviteTampered},
		{"payload of a pass", parts[0] + "." + strings.Split(ticket, ".")[1] + "." + parts[2], ErrInviteTampered},
		{"truncated", code[:len(code)-1], ErrInviteTampered},
		{"extended", code + "A", ErrInviteTampered},
		{"empty", "", ErrInviteTampered},
		{"longer than any code", code + strings.Repeat("A", MaxInviteCode), ErrInviteTampered},
		{"a ticket pass", ticket, ErrNotAnInvite},
		{"a session pass", session, ErrNotAnInvite},
		{"an arrival pass", arrival, ErrNotAnInvite},
		{"no uses", with(func(i *Invite) { i.Uses = 0 }), ErrInviteUses},
		{"negative uses", raw(`"use":-1,"to":"/shop/","aud":["shop"],"jti":"a"`), ErrInviteUses},
		{"too many uses", with(func(i *Invite) { i.Uses = MaxInviteUses + 1 }), ErrInviteUses},
		{"uses not a number", raw(`"use":"1","to":"/shop/","aud":["shop"],"jti":"a"`), ErrInviteTampered},
		{"no room", raw(`"use":1,"to":"/shop/","jti":"a"`), ErrInviteMalformed},
		{"two rooms", raw(`"use":1,"to":"/shop/","aud":["shop","other"],"jti":"a"`), ErrInviteMalformed},
		{"no id", raw(`"use":1,"to":"/shop/","aud":["shop"]`), ErrInviteMalformed},
		{"an id the store cannot count", with(func(i *Invite) { i.ID = "a b" }), ErrInviteMalformed},
		{"lasts too long", with(func(i *Invite) { i.Expires = i.IssuedAt.Add(MaxInviteTTL + time.Second) }), ErrInviteMalformed},
		{"no path", raw(`"use":1,"aud":["shop"],"jti":"a"`), ErrInvitePath},
		{"another site", with(func(i *Invite) { i.To = "//evil.example/shop/" }), ErrInvitePath},
		{"a backslash", with(func(i *Invite) { i.To = `/\evil.example/shop/` }), ErrInvitePath},
		{"an encoded backslash", with(func(i *Invite) { i.To = `/shop/%5Cevil` }), ErrInvitePath},
		{"an encoded slash", with(func(i *Invite) { i.To = "/shop/a%2Fb" }), ErrInvitePath},
		{"dot segments", with(func(i *Invite) { i.To = "/shop/../admin" }), ErrInvitePath},
		{"a full URL", with(func(i *Invite) { i.To = "https://evil.example/" }), ErrInvitePath},
		{"a query", with(func(i *Invite) { i.To = "/shop/?a=b" }), ErrInvitePath},
		{"a line break", with(func(i *Invite) { i.To = "/shop/\r\nSet-Cookie: x" }), ErrInvitePath},
		{"escapes in lower case", with(func(i *Invite) { i.To = "/shop/vip%2fsale" }), ErrInvitePath},
		{"too long", with(func(i *Invite) { i.To = "/shop/" + strings.Repeat("a", MaxInvitePath) }), ErrInvitePath},
	}
	for _, tc := range tests {
		_, err := ks.ParseInvite(tc.code, now)
		if !errors.Is(err, tc.want) || !errors.Is(err, ErrBadInvite) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		if err != nil && strings.ContainsAny(err.Error(), "\r\n") {
			t.Errorf("%s: error %q spans lines", tc.name, err)
		}
	}
}

// TestEveryByteOfAnInviteIsSigned flips each byte of a code to every
// other character a code may hold: none is accepted.
func TestEveryByteOfAnInviteIsSigned(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2)
	code := mustMint(t, ks, goodInvite())
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.="
	refused := 0
	for i := range code {
		for _, c := range []byte(alphabet) {
			if c == code[i] {
				continue
			}
			forged := code[:i] + string(c) + code[i+1:]
			inv, err := ks.ParseInvite(forged, now)
			if err == nil {
				t.Fatalf("byte %d changed to %q: accepted as %+v", i, c, inv)
			}
			if !errors.Is(err, ErrInviteTampered) && !errors.Is(err, ErrInviteUnknownKey) {
				t.Fatalf("byte %d changed to %q: %v, want tampered or unknown key", i, c, err)
			}
			refused++
		}
	}
	if refused < len(code)*60 {
		t.Fatalf("only %d forgeries tried", refused)
	}
}

func TestInviteForAnotherRoomOrPath(t *testing.T) {
	room := inviteRoom(t)
	tests := []struct {
		name   string
		change func(*Invite)
		want   error
	}{
		{"another room", func(i *Invite) { i.Room = "other" }, ErrInviteWrongRoom},
		{"a room of a similar name", func(i *Invite) { i.Room = "shop2" }, ErrInviteWrongRoom},
		{"outside the room's paths", func(i *Invite) { i.To = "/checkout" }, ErrInvitePath},
		{"the room's prefix without its slash", func(i *Invite) { i.To = "/shop" }, ErrInvitePath},
		{"a bypass path", func(i *Invite) { i.To = "/shop/static/x.css" }, ErrInvitePath},
		{"not in normal form", func(i *Invite) { i.To = "/shop//x" }, ErrInvitePath},
	}
	for _, tc := range tests {
		inv := goodInvite()
		tc.change(&inv)
		if err := inv.CheckRoom(room); !errors.Is(err, tc.want) || !errors.Is(err, ErrBadInvite) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	ci, err := ParseRoom("shop", []byte(`{"paths":["/shop/"],"case_insensitive_paths":true,"max_active_users":10}`))
	if err != nil {
		t.Fatal(err)
	}
	inv := goodInvite()
	inv.To = "/SHOP/sale"
	if err := inv.CheckRoom(ci); err != nil {
		t.Errorf("a path in another case, in a case-insensitive room: %v", err)
	}
}

// TestInvitesAndPassesCannotStandForEachOther: an invite is never a
// cookie, whatever room it is verified for.
func TestInvitesAndPassesCannotStandForEachOther(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2)
	code := mustMint(t, ks, goodInvite())
	if p, err := ks.Verify("shop", code, now); !errors.Is(err, ErrBadPass) {
		t.Fatalf("an invite verified as a pass: %+v, %v", p, err)
	}
	// Even one with every field a ticket needs.
	p := Pass{Kind: InviteKind, Room: "shop", Number: 5, SessionID: "1.5", ArrivalID: "a", Uses: 1, To: "/shop/", ID: "a",
		IssuedAt: now, Expires: now.Add(time.Hour)}
	if got, err := ks.Verify("shop", mustSign(t, ks, p), now); !errors.Is(err, ErrBadPass) {
		t.Fatalf("an invite with a ticket number verified as a pass: %+v, %v", got, err)
	}
}

func TestMintInviteRefuses(t *testing.T) {
	ks, _ := ParseKeySet("new:" + key2)
	tests := []struct {
		name   string
		change func(*Invite)
		want   error
	}{
		{"no uses", func(i *Invite) { i.Uses = 0 }, ErrInviteUses},
		{"too many uses", func(i *Invite) { i.Uses = MaxInviteUses + 1 }, ErrInviteUses},
		{"bad room name", func(i *Invite) { i.Room = "Shop" }, ErrInviteMalformed},
		{"no id", func(i *Invite) { i.ID = "" }, ErrInviteMalformed},
		{"id too long", func(i *Invite) { i.ID = strings.Repeat("a", 129) }, ErrInviteMalformed},
		{"no issue time", func(i *Invite) { i.IssuedAt = time.Time{} }, ErrInviteMalformed},
		{"no lifetime", func(i *Invite) { i.Expires = i.IssuedAt }, ErrInviteMalformed},
		{"ends before it starts", func(i *Invite) { i.NotBefore = i.Expires.Add(time.Second) }, ErrInviteMalformed},
		{"lasts too long", func(i *Invite) { i.Expires = i.IssuedAt.Add(MaxInviteTTL + time.Second) }, ErrInviteMalformed},
		{"path not in normal form", func(i *Invite) { i.To = "/shop/%7Ex" }, ErrInvitePath},
		{"no path", func(i *Invite) { i.To = "" }, ErrInvitePath},
	}
	for _, tc := range tests {
		inv := goodInvite()
		tc.change(&inv)
		if code, err := ks.MintInvite(inv); !errors.Is(err, tc.want) || code != "" {
			t.Errorf("%s: %q, %v; want %v", tc.name, code, err, tc.want)
		}
	}
	if _, err := (&KeySet{}).MintInvite(goodInvite()); err == nil {
		t.Error("minted without keys")
	}
}

// inviteSeeds are codes for FuzzParseInvite: a good one, its pieces, and
// passes of other kinds.
func inviteSeeds(t testing.TB) []string {
	ks, _ := ParseKeySet("new:" + key2)
	code := mustMint(t, ks, goodInvite())
	ticket := mustSign(t, ks, Pass{Kind: Ticket, Room: "shop", Number: 3, IssuedAt: now, Expires: now.Add(time.Hour)})
	payload := base64.RawURLEncoding.EncodeToString([]byte(`{"knd":"invite","use":1,"aud":["shop"],"exp":1,"iat":1,"jti":"a"}`))
	return []string{code, ticket, "", ".", "..", "a.b.c", strings.Split(code, ".")[0] + "." + payload + ".x", code + code}
}

// FuzzParseInvite: no code panics, and none but the one signed is
// accepted; every refusal wraps ErrBadInvite.
func FuzzParseInvite(f *testing.F) {
	for _, s := range inviteSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(checkParseInvite)
}

func checkParseInvite(t *testing.T, code string) {
	ks, _ := ParseKeySet("new:" + key2)
	inv, err := ks.ParseInvite(code, now)
	switch {
	case err == nil && (inv != goodInvite() || code != mustMint(t, ks, goodInvite())):
		t.Fatalf("accepted a forged code %q: %+v", code, inv)
	case err != nil && !errors.Is(err, ErrBadInvite):
		t.Fatalf("%q: %v does not wrap ErrBadInvite", code, err)
	}
}

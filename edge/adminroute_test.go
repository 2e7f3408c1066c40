package edge

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fastly/compute-sdk-go/fsthttp"
)

// memLimits is Limits in memory, on a clock the test moves: events per
// counter and client, and penalty boxes with an expiry.
type memLimits struct {
	now    *time.Time
	events map[string][]time.Time
	boxes  map[string]time.Time
	err    error // when set, every call fails with it
}

func newMemLimits(now *time.Time) *memLimits {
	return &memLimits{now: now, events: map[string][]time.Time{}, boxes: map[string]time.Time{}}
}

func (m *memLimits) Count(counter, client string) (int, error) {
	if m.err != nil {
		return 0, m.err
	}
	k := counter + "|" + client
	m.events[k] = append(m.events[k], *m.now)
	n := 0
	for _, at := range m.events[k] {
		if m.now.Sub(at) < time.Minute {
			n++
		}
	}
	return n, nil
}

func (m *memLimits) Counted(counter, client string) (int, error) {
	if m.err != nil {
		return 0, m.err
	}
	n := 0
	for _, at := range m.events[counter+"|"+client] {
		if m.now.Sub(at) < time.Minute {
			n++
		}
	}
	return n, nil
}

func (m *memLimits) Penalize(box, client string, d time.Duration) error {
	if m.err != nil {
		return m.err
	}
	m.boxes[box+"|"+client] = m.now.Add(d)
	return nil
}

func (m *memLimits) Penalized(box, client string) (bool, error) {
	if m.err != nil {
		return false, m.err
	}
	return m.now.Before(m.boxes[box+"|"+client]), nil
}

const goodAdminPassword = "a-password-of-24-letters"

// adminCase is a service with an admin password whose clock the test moves.
type adminCase struct {
	*targetCase
	limits *memLimits
}

func newAdminCase(password string) *adminCase {
	c := &adminCase{targetCase: newTargetCase(targetRooms)}
	c.svc.Secrets = mapSecrets{m: map[string]string{SecretUpstashToken: "real-token", SecretSigningKeys: testKeys, SecretAdminPassword: password}}
	c.limits = newMemLimits(&c.now)
	c.svc.Limits = c.limits
	return c
}

// login asks for the panel from ip with password ("" sends none).
func (c *adminCase) login(t *testing.T, ip, password string) (int, string, fsthttp.Header) {
	t.Helper()
	r := hostileRequest(t, fsthttp.MethodGet, "https", "shop.example.com", DefaultAdminPath)
	r.RemoteAddr = ip
	if password != "" {
		r.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("admin:"+password)))
	}
	w := c.do(t, r)
	return w.Code, w.Body.String(), w.HeaderMap
}

// TestShortAdminPasswordDisablesThePanel: a password under 16 characters
// opens nothing, and the panel and the log say which setting and rule.
func TestShortAdminPasswordDisablesThePanel(t *testing.T) {
	for _, pw := range []string{"short", "fifteen-chars-x", "  fifteen-chars-x  "} {
		c := newAdminCase(pw)
		code, body, _ := c.login(t, "192.0.2.1", strings.TrimSpace(pw))
		if code != fsthttp.StatusServiceUnavailable || !strings.Contains(body, "admin disabled: admin_password is shorter than 16 characters") {
			t.Errorf("%q: %d %s", pw, code, body)
		}
		if len(c.logs) != 1 || !strings.Contains(c.logs[0], "admin_password is shorter than 16") {
			t.Errorf("%q: log %q", pw, c.logs)
		}
	}
	c := newAdminCase("sixteen-chars-xx")
	if code, body, _ := c.login(t, "192.0.2.1", "sixteen-chars-xx"); code != fsthttp.StatusOK {
		t.Errorf("16 characters: %d %s", code, body)
	}
}

// TestWrongPasswordsArePenalized: ten wrong passwords a minute are typos;
// the eleventh puts the client in the penalty box, where it is answered
// 429 with Retry-After before any password is compared (the right one
// included), for five minutes. Other clients, and the same client's
// requests without a password, are not counted.
func TestWrongPasswordsArePenalized(t *testing.T) {
	c := newAdminCase(goodAdminPassword)
	const ip = "203.0.113.9"
	for i := 0; i < 5; i++ {
		if code, _, _ := c.login(t, ip, ""); code != fsthttp.StatusUnauthorized {
			t.Fatalf("no password: %d", code)
		}
	}
	for i := 1; i <= maxWrongPasswords+1; i++ {
		c.now = c.now.Add(time.Second)
		if code, _, _ := c.login(t, ip, "wrong-guess-number-x"); code != fsthttp.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d", i, code)
		}
	}
	code, body, h := c.login(t, ip, goodAdminPassword)
	if code != fsthttp.StatusTooManyRequests || h.Get("Retry-After") != "300" || !strings.Contains(body, "too many wrong passwords") {
		t.Fatalf("in the penalty box: %d %s %v", code, body, h)
	}
	if !strings.Contains(strings.Join(c.logs, "\n"), "admin: 11 wrong passwords in a minute from 203.0.113.9") {
		t.Errorf("log %q", c.logs)
	}
	if code, _, _ := c.login(t, "203.0.113.10", goodAdminPassword); code != fsthttp.StatusOK {
		t.Errorf("another client: %d", code)
	}
	c.now = c.now.Add(wrongPasswordPenalty)
	if code, _, _ := c.login(t, ip, goodAdminPassword); code != fsthttp.StatusOK {
		t.Errorf("after the penalty: %d", code)
	}

	// Ten wrong a minute, spread out, never box an operator.
	c = newAdminCase(goodAdminPassword)
	for i := 0; i < 3*maxWrongPasswords; i++ {
		c.now = c.now.Add(7 * time.Second)
		c.login(t, ip, "typo-typo-typo-typo")
	}
	if code, _, _ := c.login(t, ip, goodAdminPassword); code != fsthttp.StatusOK {
		t.Errorf("ten typos a minute: %d", code)
	}
}

// TestWrongPasswordsIPv6: a client's whole /64 is one client.
func TestWrongPasswordsIPv6(t *testing.T) {
	c := newAdminCase(goodAdminPassword)
	for i := 0; i <= maxWrongPasswords; i++ {
		c.login(t, fmt.Sprintf("2001:db8:0:7::%x", i+1), "wrong-guess-number-x")
	}
	if code, _, _ := c.login(t, "[2001:db8:0:7::ffff]:443", goodAdminPassword); code != fsthttp.StatusTooManyRequests {
		t.Errorf("same /64: %d", code)
	}
	if code, _, _ := c.login(t, "2001:db8:0:8::1", goodAdminPassword); code != fsthttp.StatusOK {
		t.Errorf("next /64: %d", code)
	}
}

// TestWrongPasswordsUnlimited: without Limits, or with one that fails, or
// for a request without an address, the panel still opens (and a failing
// Limits says so in the log).
func TestWrongPasswordsUnlimited(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(c *adminCase)
		ip     string
	}{
		{"no Limits", func(c *adminCase) { c.svc.Limits = nil }, "192.0.2.1"},
		{"Limits failing", func(c *adminCase) { c.limits.err = errors.New("erl unavailable") }, "192.0.2.1"},
		{"no address", func(c *adminCase) {}, ""},
	} {
		c := newAdminCase(goodAdminPassword)
		tc.change(c)
		for i := 0; i <= 2*maxWrongPasswords; i++ {
			c.login(t, tc.ip, "wrong-guess-number-x")
		}
		if code, _, _ := c.login(t, tc.ip, goodAdminPassword); code != fsthttp.StatusOK {
			t.Errorf("%s: %d", tc.name, code)
		}
		if tc.name == "Limits failing" && !strings.Contains(strings.Join(c.logs, "\n"), "erl unavailable; wrong passwords not limited") {
			t.Errorf("%s: log %q", tc.name, c.logs)
		}
	}
}

package edge

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fastly/compute-sdk-go/fsthttp"
	"github.com/fastly/compute-sdk-go/fsttest"
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

const goodAPIToken = "an-api-token-of-forty-characters-0123456"

// apiCall asks c's service for the API's target (below DefaultAPIPath)
// from ip with token ("" sends none).
func (c *adminCase) apiCall(t *testing.T, ip, target, token string) *fsttest.ResponseRecorder {
	t.Helper()
	r := hostileRequest(t, fsthttp.MethodGet, "https", "shop.example.com", DefaultAPIPath+target)
	r.RemoteAddr = ip
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return c.do(t, r)
}

// apiError reads the error code of an API answer, failing the test unless
// it is the API's: JSON, not cached, under the API's policy.
func apiError(t *testing.T, w *fsttest.ResponseRecorder) (code, message string) {
	t.Helper()
	var e struct{ Error, Message string }
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil {
		t.Fatalf("%d %s: not JSON: %v", w.Code, w.Body, err)
	}
	if w.HeaderMap.Get("Cache-Control") != "no-store" || w.HeaderMap.Get("Content-Security-Policy") != apiPolicy {
		t.Errorf("headers %v", w.HeaderMap)
	}
	return e.Error, e.Message
}

// TestAPISecrets: the API opens with api_token alone; without it, with the
// secret store unlinked, or with the development token on a deployed
// service, it is disabled and says why; past the token, what keeps the
// store from being used is named (to the token's holder only).
func TestAPISecrets(t *testing.T) {
	for _, tc := range []struct {
		name    string
		change  func(c *adminCase, secrets map[string]string)
		token   string
		status  int
		code    string
		message string
	}{
		{"token, store down", func(*adminCase, map[string]string) {}, goodAPIToken, 503, "store_unavailable", "the store is down"},
		{"no token set", func(_ *adminCase, s map[string]string) { delete(s, SecretAPIToken) }, goodAPIToken, 503, "api_disabled", "set api_token"},
		{"short token", func(_ *adminCase, s map[string]string) { s[SecretAPIToken] = "short" }, "short", 503, "api_disabled", "shorter than 32"},
		{"development token deployed", func(_ *adminCase, s map[string]string) { s[SecretAPIToken] = devAPIToken }, devAPIToken, 503, "api_disabled", "public development value"},
		{"development token locally", func(c *adminCase, s map[string]string) { s[SecretAPIToken], c.svc.Local = devAPIToken, true }, devAPIToken, 503, "store_unavailable", "the store is down"},
		{"token with spaces", func(_ *adminCase, s map[string]string) { s[SecretAPIToken] = " " + goodAPIToken + "\n" }, goodAPIToken, 503, "store_unavailable", "the store is down"},
		{"no upstash token", func(_ *adminCase, s map[string]string) { delete(s, SecretUpstashToken) }, goodAPIToken, 503, "store_unavailable", "secret upstash_token is missing"},
		{"wrong token", func(*adminCase, map[string]string) {}, goodAPIToken + "x", 401, "unauthorized", "wrong API token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newAdminCase(goodAdminPassword)
			secrets := map[string]string{SecretUpstashToken: "real-token", SecretSigningKeys: testKeys, SecretAPIToken: goodAPIToken}
			tc.change(c, secrets)
			c.svc.Secrets = mapSecrets{m: secrets}
			w := c.apiCall(t, "192.0.2.1", "/rooms", tc.token)
			code, message := apiError(t, w)
			if w.Code != tc.status || code != tc.code || !strings.Contains(message, tc.message) {
				t.Fatalf("%d %s %q; want %d %s %q", w.Code, code, message, tc.status, tc.code, tc.message)
			}
		})
	}
	c := newAdminCase(goodAdminPassword)
	c.svc.Secrets = mapSecrets{err: ErrStoreNotLinked}
	if code, message := apiError(t, c.apiCall(t, "192.0.2.1", "/rooms", goodAPIToken)); code != "api_disabled" || !strings.Contains(message, "resource-link create") {
		t.Errorf("secret store not linked: %s %q", code, message)
	}
}

// TestAPIPathsNormalised: the API sees the path in normal form, so dot
// segments and escapes cannot reach another route or room, nor leave the
// API for the panel unseen; and when api_path moves, the old path is the
// site's again.
func TestAPIPathsNormalised(t *testing.T) {
	c := newAdminCase(goodAdminPassword)
	c.svc.Secrets = mapSecrets{m: map[string]string{SecretUpstashToken: "real-token", SecretSigningKeys: testKeys, SecretAPIToken: goodAPIToken}}
	for _, tc := range []struct {
		target string
		status int
		code   string
	}{
		{"/rooms/shop/../../openapi.json", 200, ""},
		{"/rooms/%2e%2E/openapi.json", 200, ""},
		{"/rooms/shop/%2e%2e/stats", 404, "no_such_route"},
		{"/rooms/sh%2Fop/stats", 404, "no_such_room"},
		{"/rooms/sh%5cop/stats", 404, "no_such_room"},
		{"/rooms/%73hop/stats", 503, "store_unavailable"},
		{"/rooms//shop///stats", 503, "store_unavailable"},
		{"/rooms/tickets/stats?x=%00", 400, "unknown_parameter"},
	} {
		w := c.apiCall(t, "192.0.2.1", tc.target, goodAPIToken)
		if tc.code == "" {
			if w.Code != tc.status || !strings.Contains(w.Body.String(), `"openapi"`) {
				t.Errorf("%s: %d %.80s", tc.target, w.Code, w.Body)
			}
			continue
		}
		if code, message := apiError(t, w); w.Code != tc.status || code != tc.code {
			t.Errorf("%s: %d %s %q; want %d %s", tc.target, w.Code, code, message, tc.status, tc.code)
		}
	}
	// Out of the API by dot segments is the panel (disabled here).
	if w := c.apiCall(t, "192.0.2.1", "/%2e%2e/admin", goodAPIToken); w.HeaderMap.Get("Content-Security-Policy") != adminPolicy {
		t.Errorf("/_wr/api/../admin: %d %v", w.Code, w.HeaderMap)
	}
	c.targetCase.svc.Config = withKey(targetRooms, KeyAPIPath, "/ops/api")
	if w := c.apiCall(t, "192.0.2.1", "/rooms", goodAPIToken); w.HeaderMap.Get("Content-Security-Policy") == apiPolicy {
		t.Errorf("the API still answers at its old path: %d %s", w.Code, w.Body)
	}
}

// withKey is config with key set to value.
func withKey(config mapConfig, key, value string) mapConfig {
	out := mapConfig{key: value}
	for k, v := range config {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// TestWrongTokensShareThePanelsBox: wrong API tokens count with wrong
// panel passwords: the eleventh in a minute puts the client in the penalty
// box, where the API answers 429 with Retry-After (the right token
// included) and so does the panel, for five minutes. Requests without a
// token are not counted.
func TestWrongTokensShareThePanelsBox(t *testing.T) {
	c := newAdminCase(goodAdminPassword)
	c.svc.Secrets = mapSecrets{m: map[string]string{SecretUpstashToken: "real-token", SecretSigningKeys: testKeys,
		SecretAdminPassword: goodAdminPassword, SecretAPIToken: goodAPIToken}}
	const ip = "203.0.113.9"
	for i := 0; i < 20; i++ {
		if w := c.apiCall(t, ip, "/rooms", ""); w.Code != fsthttp.StatusUnauthorized {
			t.Fatalf("no token: %d", w.Code)
		}
	}
	for i := 1; i <= maxWrongPasswords; i++ {
		c.now = c.now.Add(time.Second)
		if i%2 == 0 {
			c.login(t, ip, "wrong-guess-number-x")
		} else if w := c.apiCall(t, ip, "/rooms", "wrong-token-wrong-token-wrong-token"); w.Code != fsthttp.StatusUnauthorized {
			t.Fatalf("wrong token %d: %d", i, w.Code)
		}
	}
	if w := c.apiCall(t, ip, "/rooms", goodAPIToken); w.Code != fsthttp.StatusServiceUnavailable {
		t.Fatalf("ten wrong guesses are typos: %d %s", w.Code, w.Body)
	}
	c.apiCall(t, ip, "/rooms", base64.StdEncoding.EncodeToString([]byte("the eleventh wrong guess")))
	w := c.apiCall(t, ip, "/rooms", goodAPIToken)
	if code, _ := apiError(t, w); w.Code != fsthttp.StatusTooManyRequests || code != "too_many_attempts" || w.HeaderMap.Get("Retry-After") != "300" {
		t.Fatalf("in the penalty box: %d %s %v", w.Code, code, w.HeaderMap)
	}
	if code, _, _ := c.login(t, ip, goodAdminPassword); code != fsthttp.StatusTooManyRequests {
		t.Errorf("the panel, in the penalty box: %d", code)
	}
	if w := c.apiCall(t, "203.0.113.10", "/rooms", goodAPIToken); w.Code != fsthttp.StatusServiceUnavailable {
		t.Errorf("another client: %d", w.Code)
	}
	c.now = c.now.Add(wrongPasswordPenalty)
	if w := c.apiCall(t, ip, "/rooms", goodAPIToken); w.Code != fsthttp.StatusServiceUnavailable {
		t.Errorf("after the penalty: %d %s", w.Code, w.Body)
	}
}

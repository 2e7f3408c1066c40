package integration

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/edgequeue/waitingroom/edge"
	"github.com/fastly/compute-sdk-go/fsttest"
)

func hmacSHA256(key []byte, s string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(s))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// epochOf reads the epoch claim of a pass without checking it.
func epochOf(t *testing.T, token string) int64 {
	t.Helper()
	parts := strings.Split(token, ".")
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`"ep":(\d+)`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no epoch in %s", b)
	}
	var n int64
	for _, c := range m[1] {
		n = n*10 + int64(c-'0')
	}
	return n
}

func (e *env) admin(method, path, form, password string) *fsttest.ResponseRecorder {
	e.t.Helper()
	opts := []reqOpt{}
	if password != "" {
		opts = append(opts, withHeader("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("admin:"+password))))
	}
	if form != "" {
		opts = append(opts, withHeader("Content-Type", "application/x-www-form-urlencoded"))
	}
	return e.do(method, shop+edge.DefaultAdminPath+path, strings.NewReader(form), opts...)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfFrom(t *testing.T, e *env) string {
	t.Helper()
	w := e.admin(http.MethodGet, "", "", adminPass)
	m := csrfField.FindStringSubmatch(w.Body.String())
	if m == nil {
		t.Fatalf("no CSRF token on the panel: %d %s", w.Code, w.Body)
	}
	return m[1]
}

func TestAdminPanel(t *testing.T) {
	e := newEnv(t)
	for i := 0; i < 6; i++ {
		e.get(shop + "/")
	}
	w := e.admin(http.MethodGet, "", "", adminPass)
	if w.Code != 200 || w.HeaderMap.Get("Cache-Control") != "no-store" {
		t.Fatalf("panel: %d %v", w.Code, w.HeaderMap)
	}
	row := regexp.MustCompile(`<td>shop</td><td>fifo</td><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td>`).FindStringSubmatch(w.Body.String())
	if row == nil || row[1] != "5" || row[2] != "1" || row[3] != "6" {
		t.Fatalf("panel row for shop %q, want 5 waiting, serving 1, issued 6:\n%s", row, w.Body)
	}
	csrf := csrfFrom(t, e)
	form := url.Values{"room": {"shop"}, "n": {"3"}, "csrf": {csrf}}

	cases := []struct {
		name, path, form, password string
		method                     string
		want                       int
	}{
		{"wrong password", "", "", "guess", http.MethodGet, http.StatusUnauthorized},
		{"no password", "", "", "", http.MethodGet, http.StatusUnauthorized},
		{"missing CSRF token", "/admit", url.Values{"room": {"shop"}, "n": {"3"}}.Encode(), adminPass, http.MethodPost, http.StatusForbidden},
		{"forged CSRF token", "/admit", url.Values{"room": {"shop"}, "n": {"3"}, "csrf": {"x" + csrf[1:]}}.Encode(), adminPass, http.MethodPost, http.StatusForbidden},
		{"admit by GET", "/admit", "", adminPass, http.MethodGet, http.StatusMethodNotAllowed},
		{"unknown room", "/admit", url.Values{"room": {"nope"}, "n": {"3"}, "csrf": {csrf}}.Encode(), adminPass, http.MethodPost, http.StatusNotFound},
		{"n not a number", "/admit", url.Values{"room": {"shop"}, "n": {"lots"}, "csrf": {csrf}}.Encode(), adminPass, http.MethodPost, http.StatusBadRequest},
		{"n too large", "/admit", url.Values{"room": {"shop"}, "n": {"99999999"}, "csrf": {csrf}}.Encode(), adminPass, http.MethodPost, http.StatusBadRequest},
		{"unknown page", "/nope", "", adminPass, http.MethodGet, http.StatusNotFound},
		{"admit 3", "/admit", form.Encode(), adminPass, http.MethodPost, http.StatusSeeOther},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := e.admin(c.method, c.path, c.form, c.password)
			if w.Code != c.want {
				t.Fatalf("got %d %s, want %d", w.Code, w.Body, c.want)
			}
			if c.want == http.StatusUnauthorized && !strings.HasPrefix(w.HeaderMap.Get("WWW-Authenticate"), "Basic ") {
				t.Fatal("401 without a Basic challenge")
			}
		})
	}
	w = e.admin(http.MethodGet, "", "", adminPass)
	if row = regexp.MustCompile(`<td>shop</td><td>fifo</td><td>(\d+)</td><td>(\d+)</td>`).FindStringSubmatch(w.Body.String()); row == nil || row[1] != "2" || row[2] != "4" {
		t.Fatalf("after admit 3 the row is %q, want 2 waiting, serving 4", row)
	}
	if !logged(e.logs, "admin: admit 3 in room shop") {
		t.Fatalf("the admission was not logged: %q", e.logs)
	}
}

func TestAdminDisabledWithoutPassword(t *testing.T) {
	e := newEnv(t)
	delete(e.secrets, edge.SecretAdminPassword)
	w := e.admin(http.MethodGet, "", "", "anything")
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "admin disabled: set admin_password") {
		t.Fatalf("got %d %s", w.Code, w.Body)
	}
}

func TestAdminPathFromConfig(t *testing.T) {
	e := newEnv(t)
	e.config[edge.KeyAdminPath] = "/ops/room/"
	w := e.get(shop+"/ops/room", withHeader("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("x:"+adminPass))))
	if w.Code != 200 || !strings.Contains(w.Body.String(), "Waiting room admin") {
		t.Fatalf("configured admin path: %d %s", w.Code, w.Body)
	}
}

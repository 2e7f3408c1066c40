package devstack

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestPOPAddr(t *testing.T) {
	tests := []struct {
		addr    string
		i       int
		want    string
		wantErr bool
	}{
		{"127.0.0.1:7676", 0, "127.0.0.1:7676", false},
		{"127.0.0.1:7676", 1, "127.0.0.1:7677", false},
		{"127.0.0.1:0", 3, "127.0.0.1:0", false},
		{"[::1]:8000", 2, "[::1]:8002", false},
		{"127.0.0.1:65535", 1, "", true},
		{"127.0.0.1", 0, "", true},
		{"127.0.0.1:http", 0, "", true},
	}
	for _, tc := range tests {
		got, err := popAddr(tc.addr, tc.i)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("popAddr(%q, %d) = %q, %v; want %q, error: %v", tc.addr, tc.i, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestPOPNames(t *testing.T) {
	got := POPNames(10)
	if got[0] != "FRA" || got[1] != "LHR" || got[9] != "P10" || len(got) != 10 {
		t.Errorf("POPNames(10) = %q", got)
	}
}

// TestPOPs starts a stack of two POPs: each host serves the service, on
// its own address, in front of the one store.
func TestPOPs(t *testing.T) {
	o := ForTest(io.Discard, 30*time.Second)
	o.POPs = []string{"FRA", "LHR"}
	st, err := Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if len(st.POPs) != 2 || st.POPs[0].URL == st.POPs[1].URL || st.HostURL != st.POPs[0].URL || st.Host != st.POPs[0].Host {
		t.Fatalf("POPs %+v, host %s", st.POPs, st.HostURL)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(pop POP, cookie string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, pop.URL+"/", nil)
		req.Header.Set("Accept", "application/json")
		if cookie != "" {
			req.Header.Set("Cookie", cookie)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("POP %s: %v", pop.Name, err)
		}
		resp.Body.Close()
		return resp
	}
	st.StoreCalls()
	for _, pop := range st.POPs {
		// The arrival pass, then the visit that joins the line: a store
		// call, to the stack's one store.
		arrival := get(pop, "")
		cookie := strings.Split(arrival.Header.Get("Set-Cookie"), ";")[0]
		if resp := get(pop, cookie); resp.StatusCode >= 500 || cookie == "" {
			t.Errorf("POP %s: status %d after the arrival pass %q", pop.Name, resp.StatusCode, cookie)
		}
		if n := st.StoreCalls(); n == 0 {
			t.Errorf("POP %s made no call to the stack's store", pop.Name)
		}
	}
}

// TestOriginHeaders: the demo origin's /headers prints the waiting room's
// headers the request carried, and no line for one it did not.
func TestOriginHeaders(t *testing.T) {
	tests := []struct {
		name   string
		header http.Header
		want   string
	}{
		{"none", http.Header{}, ""},
		{"bypass", http.Header{"Waiting-Room-Bypass": {"verified-bot"}}, "Waiting-Room-Bypass: verified-bot\n"},
		{"both", http.Header{"Waiting-Room-Fail-Open": {"store"}, "Waiting-Room-Bypass": {"ip"}}, "Waiting-Room-Fail-Open: store\nWaiting-Room-Bypass: ip\n"},
	}
	for _, tc := range tests {
		req := httptest.NewRequest(http.MethodGet, "/headers", nil)
		req.Header = tc.header
		rec := httptest.NewRecorder()
		DemoOrigin().ServeHTTP(rec, req)
		if got := rec.Body.String(); got != tc.want {
			t.Errorf("%s: /headers printed %q, want %q", tc.name, got, tc.want)
		}
	}
}

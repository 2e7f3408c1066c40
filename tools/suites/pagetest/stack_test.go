package pagetest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/edge"
	"github.com/edgequeue/waitingroom/tools/devstack"
	"github.com/edgequeue/waitingroom/tools/fastlyhost"
)

// The rooms, each for one part of the suite. The shop holds one visitor
// at a time, so that everyone after the first waits, and keeps the
// waiting for the whole run (long timeouts: the line moves only when the
// test moves it). The reading room forgets an idle visitor after 10 s, the
// shortest inactivity timeout, and the exit room frees a place when its
// visitor's page goes (leave_beacon; an ended session's place is held
// while its pass may still admit without the store, a third of the
// inactivity timeout). The outlet is closed.
const (
	shopRoom = `{"paths":["/"],"max_active_users":1,"refresh":2,"queue_timeout":3600,"claim_window":3600,` +
		`"inactivity_timeout":3600,"session_duration":3600,"title":"Example Shop",` +
		`"message":"The summer sale is on: thank you for waiting.",` +
		`"texts":{"de":{"message":"Der Sommerschlussverkauf läuft: danke fürs Warten."}}}`
	readingRoom = `{"paths":["/read/"],"max_active_users":1,"refresh":2,"queue_timeout":3600,"inactivity_timeout":10,"session_duration":3600}`
	exitRoom    = `{"paths":["/away/"],"max_active_users":1,"refresh":2,"queue_timeout":3600,` +
		`"inactivity_timeout":30,"session_duration":3600,"leave_beacon":true}`
	outletRoom = `{"paths":["/outlet/"],"mode":"reject","max_active_users":1}`
	// The doors ask newcomers for work: with no snapshot (no pressure
	// known) the base rung, proof_of_work less 6 bits, for a client's
	// first two joins; at the top door, whose line is paused (the test
	// pauses it) and seen in a snapshot, the top rung, 20 bits.
	door14Room = `{"paths":["/door14/"],"max_active_users":1,"refresh":2,"queue_timeout":3600,"proof_of_work":20,"snapshot_ttl":0}`
	door16Room = `{"paths":["/door16/"],"max_active_users":1,"refresh":2,"queue_timeout":3600,"proof_of_work":22,"snapshot_ttl":0}`
	door18Room = `{"paths":["/door18/"],"max_active_users":1,"refresh":2,"queue_timeout":3600,"proof_of_work":24,"snapshot_ttl":0}`
	// calmRoom is door14's like, for a browser without JavaScript, which
	// joins there after its wait (a join of its own: the doors' rungs
	// count the client's joins).
	calmRoom   = `{"paths":["/calm/"],"max_active_users":1,"refresh":2,"queue_timeout":3600,"proof_of_work":20,"snapshot_ttl":0}`
	door20Room = `{"paths":["/door20/"],"max_active_users":1,"refresh":2,"queue_timeout":3600,"proof_of_work":20,"snapshot_ttl":10}`
	// lureRoom sends this machine's browser (127.0.0.1) to its decoy line,
	// whose way out is its top rung, 16 bits.
	lureRoom = `{"paths":["/lure/"],"max_active_users":1,"refresh":2,"queue_timeout":3600,"proof_of_work":16,"snapshot_ttl":0,` +
		`"decoy_ips":["127.0.0.0/8","::1/128"]}`
	// freshRoom has let nobody in yet: the test pauses it before its
	// first visitor arrives.
	freshRoom = `{"paths":["/fresh/"],"max_active_users":1,"refresh":2,"queue_timeout":3600,"inactivity_timeout":3600,"session_duration":3600}`
	// shutRoom is closed live by the operator while a visitor waits.
	shutRoom = `{"paths":["/shut/"],"max_active_users":1,"refresh":2,"queue_timeout":3600,` +
		`"inactivity_timeout":3600,"session_duration":3600}`
)

// storeTimeout keeps a loaded machine's store calls from answering busy.
const storeTimeout = 5 * time.Second

// stack is the running service and what the test needs of it.
type stack struct {
	*devstack.Stack
	logs     *devstack.LogBuffer
	apiToken string
}

// start runs the stack around the wasm under test ($WASM) with the rooms.
func start(t *testing.T) *stack {
	t.Helper()
	logs := &devstack.LogBuffer{}
	opts := devstack.ForTest(logs, 60*time.Second)
	opts.RecordOrigin = true
	opts.Adjust = func(m *fastlyhost.Manifest) {
		devstack.SetRooms(m, storeTimeout, [2]string{"shop", shopRoom}, [2]string{"reading", readingRoom},
			[2]string{"exit", exitRoom}, [2]string{"outlet", outletRoom}, [2]string{"shut", shutRoom}, [2]string{"door14", door14Room},
			[2]string{"door16", door16Room}, [2]string{"door18", door18Room}, [2]string{"door20", door20Room},
			[2]string{"calm", calmRoom}, [2]string{"lure", lureRoom}, [2]string{"fresh", freshRoom})
	}
	st, err := devstack.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the stack's log:\n%s", logs.String())
		}
	})
	return &stack{Stack: st, logs: logs, apiToken: string(st.Manifest.SecretStores[devstack.SecretStore][edge.SecretAPIToken])}
}

// noMarkAtOrigin fails when a request that reached the origin carried
// the arrival mark, in its address or any header (a Referer...).
func (s *stack) noMarkAtOrigin(t *testing.T) {
	t.Helper()
	for _, r := range s.OriginRequests() {
		seen := r.URI
		for k, vs := range r.Header {
			seen += "\n" + k + ": " + strings.Join(vs, ", ")
		}
		if strings.Contains(seen, edge.ArrivalMark) {
			t.Errorf("the origin saw the arrival mark: %s %s", r.Method, seen)
		}
	}
}

// admit lets the next n of room's line in, as an operator does through
// the admin API.
func (s *stack) admit(t *testing.T, room string, n int) {
	t.Helper()
	s.operate(t, http.MethodPost, room+"/admit", `{"n":`+strconv.Itoa(n)+`}`)
}

// operate calls the admin API's room route (e.g. "shop/admit") as an
// operator does.
func (s *stack) operate(t *testing.T, method, route, body string) {
	t.Helper()
	req, err := http.NewRequest(method, s.HostURL+edge.DefaultAPIPath+"/rooms/"+route, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.apiToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %d %s", method, route, resp.StatusCode, answer)
	}
}

// visitor is a visitor outside the browser: a client with its own
// cookies that follows the service's redirects.
type visitor struct {
	c   *http.Client
	url string
}

func (s *stack) visitor() *visitor {
	jar, _ := cookiejar.New(nil)
	return &visitor{c: &http.Client{Jar: jar, Timeout: 60 * time.Second}, url: s.HostURL}
}

// place asks for path as a script does (Accept: application/json) and
// reads where the visitor stands: waiting, or admitted (the origin's
// page). An arrival that answers "joining" without a redirect to follow
// is asked again, as a client of the JSON contract does, and one that
// answers "work" is asked again with the challenge solved.
func (v *visitor) place(t *testing.T, path string) devstack.Place {
	t.Helper()
	var work []string
	for range 3 {
		p := v.ask(t, path, work...)
		switch {
		case p.Status == "work" && p.Challenge != nil:
			work = []string{p.Challenge.Header, p.Challenge.Solve()}
		case p.Status != "joining":
			return p
		}
	}
	t.Fatalf("%s: still joining after 3 requests", path)
	return devstack.Place{}
}

// ask asks for path once, with the header and value pairs given.
func (v *visitor) ask(t *testing.T, path string, header ...string) devstack.Place {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, v.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "Mozilla/5.0 (pagetest visitor)")
	resp, err := v.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	if _, err := io.Copy(&body, resp.Body); err != nil {
		t.Fatal(err)
	}
	p, err := devstack.ReadPlace(body.String())
	if err != nil {
		t.Fatalf("%s answered %d %q: %v", path, resp.StatusCode, body.String(), err)
	}
	return p
}

// in sends the visitor to path and fails unless it gets in.
func (v *visitor) in(t *testing.T, path string) {
	t.Helper()
	if p := v.place(t, path); p.Status != "admitted" {
		t.Fatalf("a visitor to %s: %+v, want admitted", path, p)
	}
}

// waits sends the visitor to path and fails unless it is in line.
func (v *visitor) waits(t *testing.T, path string) devstack.Place {
	t.Helper()
	p := v.place(t, path)
	if p.Status != "waiting" {
		t.Fatalf("a visitor to %s: %+v, want waiting", path, p)
	}
	return p
}

package paneltest

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/cookiejar"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/tools/devstack"
	"github.com/edgequeue/waitingroom/tools/fastlyhost"
	"github.com/edgequeue/waitingroom/tools/native"
)

// The two rooms: the shop, whose hour of traffic the test plays, and a
// quiet sale beside it.
const (
	shopRoom = `{"paths":["/"],"new_users_per_minute":20,"burst":5,"max_active_users":60}`
	saleRoom = `{"paths":["/sale/"],"max_active_users":3}`
	// adminPassword is fastly.toml's [local_server] development value.
	adminPassword = "dev-admin-password"
	// seedMinutes of traffic end a minute before the browser opens.
	seedMinutes = 70
	// seedActor stands for the origin's script, acting through the API.
	seedClient = "5eed5eed5eed5eed"
)

// storeTimeout keeps a loaded machine's store calls from answering busy.
const storeTimeout = 5 * time.Second

// start runs the stack around the wasm under test with the two rooms.
func start(t *testing.T) (*devstack.Stack, *devstack.LogBuffer) {
	t.Helper()
	logs := &devstack.LogBuffer{}
	opts := devstack.ForTest(logs, 60*time.Second)
	opts.Adjust = func(m *fastlyhost.Manifest) {
		devstack.SetRooms(m, storeTimeout, [2]string{"shop", shopRoom}, [2]string{"sale", saleRoom})
	}
	st, err := devstack.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st, logs
}

// seed plays seedMinutes of the shop's traffic into the store, minute by
// minute in virtual time, ending a minute before now: joins rising and
// falling around the rate, the front of the line polling, an operator
// action every third minute, and every 17th minute no call at all. It
// goes through the store client the edge uses, with the room's policy
// from the same config.
func seed(t *testing.T, st *devstack.Stack, now time.Time) {
	t.Helper()
	room, err := queue.ParseRoom("shop", []byte(shopRoom))
	if err != nil {
		t.Fatal(err)
	}
	token := "dev-upstash-token"
	if v, ok := st.Manifest.SecretStores[devstack.SecretStore]["upstash_token"]; ok {
		token = string(v)
	}
	u := &store.Upstash{URL: st.UpstashURL, Token: token, Transport: native.Upstash{}, Timeout: 10 * time.Second}
	ctx := context.Background()
	check := func(what string, err error) {
		if err != nil {
			t.Fatalf("seeding the history: %s: %v", what, err)
		}
	}
	first := now.Truncate(time.Minute).Add(-(seedMinutes + 1) * time.Minute)
	var waiting []store.Ticket
	arrivals := 0
	actions := []store.Action{{Op: store.OpAdmit, N: 3}, {Op: string(store.Pause)}, {Op: string(store.Resume)}}
	for m := 0; m < seedMinutes; m++ {
		if m%17 == 16 {
			continue // a quiet minute: a gap in the charts
		}
		minute := first.Add(time.Duration(m) * time.Minute)
		joins := 8 + int(12*(1+math.Sin(float64(m)/8))) // 8 to 32 a minute, around the rate of 20
		// A call every 4 s keeps the script's line time with the clock.
		for s := 0; s < 15; s++ {
			at := minute.Add(time.Duration(s) * 4 * time.Second)
			p := room.Policy(at)
			calls := 0
			for j := joins * s / 15; j < joins*(s+1)/15; j++ {
				arrivals++
				pl, err := u.Join(ctx, "shop", p, store.Arrival{ID: fmt.Sprint("seed-", arrivals)}, at)
				check("join", err)
				if pl.Outcome == store.Waiting {
					waiting = append(waiting, store.Ticket{Number: pl.Ticket, Epoch: pl.Line.Epoch})
				}
				calls++
			}
			if s == 7 {
				// The front of the line polls, and claims its call.
				var still []store.Ticket
				for i, tk := range waiting {
					if i >= 30 {
						still = append(still, tk)
						continue
					}
					pl, err := u.Poll(ctx, "shop", p, tk, at)
					check("poll", err)
					if pl.Outcome == store.Waiting {
						still = append(still, tk)
					}
					calls++
				}
				waiting = still
			}
			if calls == 0 {
				_, err := u.Stats(ctx, "shop", p, at)
				check("stats", err)
			}
		}
		if m%3 == 1 {
			at := minute.Add(59 * time.Second)
			a := actions[(m/3)%len(actions)]
			a.Actor = store.Actor{Via: "api", Client: seedClient}
			_, err := u.Operate(ctx, "shop", room.Policy(at), a, at)
			check(a.Op, err)
		}
	}
	at := first.Add(seedMinutes * time.Minute)
	_, err = u.Operate(ctx, "shop", room.Policy(at), store.Action{Op: string(store.Resume), Actor: store.Actor{Via: "api", Client: seedClient}}, at)
	check("resume", err)
}

// visit sends n visitors to path through the service, each with its own
// cookies, following its redirects to the line or the origin.
func visit(t *testing.T, st *devstack.Stack, path string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar, Timeout: 60 * time.Second}
		req, err := http.NewRequest(http.MethodGet, st.HostURL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("User-Agent", "Mozilla/5.0 (paneltest visitor)")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("visitor %d at %s: %d, want the line or the origin", i, path, resp.StatusCode)
		}
	}
}
